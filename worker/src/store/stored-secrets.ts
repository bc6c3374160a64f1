/**
 * The secrets stored sealed (secret-box.ts): LDAP service passwords, OIDC client secrets and secret
 * settings saved through /v3/settings (EMAIL_HOST_PASSWORD). After
 * a key rotation, a value still sealed with the previous key is re-sealed with the current one, on
 * read (reseal callbacks below) and by the periodic job, so that the previous key can be dropped.
 * Each write is a compare-and-swap on the old sealed value: a record changed meanwhile (an admin
 * set a new secret) is never overwritten with the old secret.
 */
import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { REGISTRY, VAR_NAMES, type ConfigSnapshot } from '../config/index.js';
import type { Db } from './db.js';
import { isSealed, resealIfStale } from './secret-box.js';
import { identityProviders, ldapServers, settings } from '../../../schema/index.js';

/** Stores an LDAP record's service password re-sealed, unless the record changed since `old` was read. */
export function resealLdapPassword(db: Db, name: string, old: string) {
  const unchanged = and(eq(ldapServers.name, name), eq(ldapServers.bindPasswordEnc, old));
  return (fresh: string) => db.update(ldapServers).set({ bindPasswordEnc: fresh }).where(unchanged);
}

/** Stores an OIDC provider's client secret re-sealed, unless the record changed since `old` was read. */
export function resealClientSecret(db: Db, name: string, old: string) {
  const unchanged = and(eq(identityProviders.name, name), eq(identityProviders.clientSecretEnc, old));
  return (fresh: string) => db.update(identityProviders).set({ clientSecretEnc: fresh }).where(unchanged);
}

/** Stores a secret setting re-sealed, unless it changed since `old` was read. */
export function resealSetting(db: Db, name: string, old: string) {
  const unchanged = and(eq(settings.name, name), eq(settings.value, old));
  return (fresh: string) => db.update(settings).set({ value: fresh }).where(unchanged);
}

const SECRET_SETTINGS = VAR_NAMES.filter((n) => REGISTRY[n].secret && REGISTRY[n].ui);

/** Re-seals every stored secret still sealed with a previous key; returns how many were. */
export async function resealStoredSecrets(db: Db, config: ConfigSnapshot): Promise<number> {
  // Without any key nothing was sealed by this configuration (and nothing can be re-sealed).
  if (!config.get('SECRETS_ENCRYPTION_KEY') && !config.get('SESSION_SECRET_KEY')) return 0;
  let count = 0;
  const ldap = await db
    .select({ name: ldapServers.name, sealed: ldapServers.bindPasswordEnc })
    .from(ldapServers)
    .where(isNotNull(ldapServers.bindPasswordEnc));
  const oidc = await db
    .select({ name: identityProviders.name, sealed: identityProviders.clientSecretEnc })
    .from(identityProviders);
  const saved = await db
    .select({ name: settings.name, sealed: settings.value })
    .from(settings)
    .where(inArray(settings.name, SECRET_SETTINGS));
  const rows = [
    ...saved.filter((r) => isSealed(r.sealed)).map((r) => ({ ...r, store: resealSetting })),
    ...ldap.map((r) => ({ ...r, store: resealLdapPassword })),
    ...oidc.map((r) => ({ ...r, store: resealClientSecret })),
  ];
  for (const row of rows) {
    // A value no configured key opens is left as it is (its readers answer 502 saying why).
    const fresh = await resealIfStale(config, row.sealed!).catch(() => null);
    if (fresh === null) continue;
    await row.store(db, row.name, row.sealed!)(fresh);
    count += 1;
  }
  return count;
}

/**
 * The periodic job (registered in schedule/index.ts): after a key rotation, stored secrets move to the
 * current key within a run. Typed by its shape, as store/ sits below jobs/ (architecture.md §2).
 */
export const resealSecretsJob = {
  name: 'reseal-stored-secrets',
  run: async ({ db, config }: { db: Db; config: ConfigSnapshot }) => void (await resealStoredSecrets(db, config)),
};
