DROP INDEX `user_identities_external`;--> statement-breakpoint
ALTER TABLE `user_identities` ADD `issuer` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `user_identities_key` ON `user_identities` (`source`,`source_name`,`issuer`,`external_id`);