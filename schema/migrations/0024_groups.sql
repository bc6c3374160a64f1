CREATE TABLE `group_members` (
	`group_id` text NOT NULL,
	`user_id` text NOT NULL,
	`source` text NOT NULL,
	`read_at` integer NOT NULL,
	PRIMARY KEY(`group_id`, `user_id`, `source`),
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `group_members_user` ON `group_members` (`user_id`,`source`);--> statement-breakpoint
CREATE TABLE `groups` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`source` text DEFAULT 'local' NOT NULL,
	`source_name` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `groups_name_key` ON `groups` (`name_key`);--> statement-breakpoint
ALTER TABLE `users` ADD `groups` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `identity_providers` ADD `claim_groups` text;--> statement-breakpoint
ALTER TABLE `ldap_servers` ADD `group_mode` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE `ldap_servers` ADD `group_attr` text DEFAULT 'memberOf' NOT NULL;--> statement-breakpoint
ALTER TABLE `ldap_servers` ADD `group_base_dn` text;--> statement-breakpoint
ALTER TABLE `ldap_servers` ADD `group_filter` text;--> statement-breakpoint
ALTER TABLE `ldap_servers` ADD `group_name_attr` text DEFAULT 'cn' NOT NULL;