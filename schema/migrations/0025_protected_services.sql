CREATE TABLE `protected_services` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`hosts` text DEFAULT '[]' NOT NULL,
	`prefixes` text DEFAULT '[]' NOT NULL,
	`access` text NOT NULL,
	`require_second_factor` integer DEFAULT false NOT NULL,
	`allow_basic` integer DEFAULT false NOT NULL,
	`headers` text NOT NULL,
	`client_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `protected_services_name_unique` ON `protected_services` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `protected_services_client_id_unique` ON `protected_services` (`client_id`);