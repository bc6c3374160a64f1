CREATE TABLE `identity_providers` (
	`name` text PRIMARY KEY NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_enc` text NOT NULL,
	`scopes` text DEFAULT 'openid profile email' NOT NULL,
	`claim_login` text DEFAULT 'preferred_username' NOT NULL,
	`claim_display_name` text DEFAULT 'name' NOT NULL,
	`claim_email` text DEFAULT 'email' NOT NULL,
	`claim_role` text,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
