ALTER TABLE `job_leases` ADD `run_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `job_leases` ADD `failure_count` integer DEFAULT 0 NOT NULL;