CREATE TABLE `job_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`until` integer NOT NULL,
	`last_run_at` integer,
	`last_duration_ms` integer,
	`last_result` text
);
--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `outcome` text;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `source_ip` text;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `user_agent` text;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `host` text;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `next_attempt_at` integer;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `dead_at` integer;--> statement-breakpoint
ALTER TABLE `audit_outbox` ADD `last_error` text;--> statement-breakpoint
CREATE INDEX `audit_outbox_stream_pending` ON `audit_outbox` (`stream`,`shipped_at`,`dead_at`,`at`);