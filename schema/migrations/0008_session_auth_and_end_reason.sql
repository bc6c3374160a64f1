ALTER TABLE `sessions` ADD `revoked_reason` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `auth_method` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `authenticated_at` integer;