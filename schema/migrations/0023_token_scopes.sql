ALTER TABLE `api_tokens` ADD `scopes` text;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `last_used_ip` text;