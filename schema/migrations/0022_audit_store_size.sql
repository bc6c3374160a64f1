CREATE TABLE `audit_store_size` (
	`store` text PRIMARY KEY NOT NULL,
	`measured_at` integer NOT NULL,
	`bytes` integer NOT NULL,
	`max_bytes` integer NOT NULL,
	`outbox_bytes` integer NOT NULL
);
