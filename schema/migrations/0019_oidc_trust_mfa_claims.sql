ALTER TABLE `identity_providers` ADD `trust_mfa_claims` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `identity_providers` ADD `accepted_acr` text DEFAULT '[]' NOT NULL;