CREATE TABLE `login_reservations` (
	`login_key` text PRIMARY KEY NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `password_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `password_history_user` ON `password_history` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`login` text NOT NULL,
	`login_key` text NOT NULL,
	`display_name` text DEFAULT '' NOT NULL,
	`email` text,
	`role` text DEFAULT 'user' NOT NULL,
	`source` text DEFAULT 'local' NOT NULL,
	`source_name` text,
	`external_id` text,
	`status` text DEFAULT 'active' NOT NULL,
	`blocked_reason` text,
	`password_hash` text,
	`password_changed_at` integer,
	`must_change_password` integer DEFAULT false NOT NULL,
	`last_login_at` integer,
	`last_activity_at` integer,
	`session_limit` integer,
	`super_access_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_live_login_key` ON `users` (`login_key`) WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX `users_role_status` ON `users` (`role`,`status`);--> statement-breakpoint
CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`expires_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_secret_hash_unique` ON `api_tokens` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_user` ON `api_tokens` (`user_id`);--> statement-breakpoint
CREATE TABLE `login_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`throttle_key` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_attempts_key_at` ON `login_attempts` (`throttle_key`,`at`);--> statement-breakpoint
CREATE TABLE `login_locks` (
	`throttle_key` text PRIMARY KEY NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`stream` text NOT NULL,
	`type` text NOT NULL,
	`actor_id` text,
	`actor_login` text,
	`subject_id` text,
	`subject_login` text,
	`request_id` text,
	`data` text,
	`shipped_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_outbox_unshipped` ON `audit_outbox` (`shipped_at`,`at`);