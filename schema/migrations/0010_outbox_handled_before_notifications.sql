-- Events recorded before the notification handlers existed are history: they send no mail.
UPDATE `audit_outbox` SET `handled_at` = `at` WHERE `handled_at` IS NULL;
