-- OIDC identities linked before the issuer was part of their key: the issuer of their provider
-- record as it is now (the only one known). An identity whose record no longer exists keeps '',
-- which no issuer matches: it logs in nowhere until an administrator links it again.
UPDATE `user_identities`
SET `issuer` = coalesce((SELECT `issuer` FROM `identity_providers` WHERE `identity_providers`.`name` = `user_identities`.`source_name`), '')
WHERE `source` = 'oidc';
