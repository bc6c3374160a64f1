CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`type` text NOT NULL,
	`at` integer NOT NULL,
	`payload` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`lease_holder` text,
	`last_attempt_at` integer,
	`last_status` integer,
	`last_duration_ms` integer,
	`last_response` text,
	`delivered_at` integer,
	`failed_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`next_attempt_at`) WHERE delivered_at is null and failed_at is null;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook` ON `webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`event_types` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`secret_enc` text NOT NULL,
	`previous_secret_enc` text,
	`previous_secret_until` integer,
	`failing_since` integer,
	`disabled_reason` text,
	`disabled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- The deliveries of an event are written by the statement that writes the event (docs/webhooks.md, "At least
-- once"): one row per enabled subscription whose types match (a type, its stream's wildcard, or *). API-access
-- events (their own high-volume stream) are never delivered.
CREATE TRIGGER `audit_outbox_webhook_deliveries` AFTER INSERT ON `audit_outbox`
WHEN new.stream <> 'api_access' AND EXISTS (SELECT 1 FROM `webhooks` WHERE `enabled` = 1)
BEGIN
	INSERT INTO `webhook_deliveries` (`id`, `webhook_id`, `event_id`, `type`, `at`, `payload`, `next_attempt_at`,
		`created_at`)
	SELECT 'msg_' || lower(hex(randomblob(16))), w.`id`, new.`id`, new.`type`, new.`at`,
		json_object('id', new.`id`, 'stream', new.`stream`, 'type', new.`type`, 'at', new.`at`,
			'outcome', new.`outcome`, 'actorId', new.`actor_id`, 'actorLogin', new.`actor_login`,
			'subjectId', new.`subject_id`, 'subjectLogin', new.`subject_login`, 'sourceIp', new.`source_ip`,
			'data', json(coalesce(new.`data`, 'null'))),
		new.`at`, new.`at`
	FROM `webhooks` w
	WHERE w.`enabled` = 1 AND EXISTS (
		SELECT 1 FROM json_each(w.`event_types`) j
		WHERE j.value = '*' OR j.value = new.`type` OR j.value = new.`stream` || '.*');
END;
