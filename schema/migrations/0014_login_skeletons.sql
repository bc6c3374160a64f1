-- Look-alike logins (README, Accounts): the skeleton columns start empty; SQL cannot compute a UTS #39 skeleton,
-- so the start fills them after the migrations (worker/src/users/login-skeletons.ts), reporting live accounts
-- that already look alike instead of changing them. NULLs are distinct in a unique index: those stay NULL.
ALTER TABLE `login_reservations` ADD `skeleton` text;--> statement-breakpoint
CREATE INDEX `login_reservations_skeleton` ON `login_reservations` (`skeleton`);--> statement-breakpoint
ALTER TABLE `users` ADD `login_skeleton` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_live_login_skeleton` ON `users` (`login_skeleton`) WHERE "users"."deleted_at" is null;