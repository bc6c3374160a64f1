CREATE TABLE `ldap_servers` (
	`name` text PRIMARY KEY NOT NULL,
	`urls` text NOT NULL,
	`start_tls` integer DEFAULT false NOT NULL,
	`ca_cert` text,
	`bind_dn` text,
	`bind_password_enc` text,
	`base_dn` text NOT NULL,
	`user_filter` text,
	`attr_display_name` text DEFAULT 'displayName',
	`attr_email` text DEFAULT 'mail',
	`attr_role` text,
	`role_admin_group` text,
	`role_auditor_group` text,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
