/**
 * The protected services' records (schema/services.ts): the snapshot the gate decides from, the
 * seeded SRM and monitoring records, and the service credential (docs/integration.md).
 *
 * The snapshot is configuration, like the settings: per isolate (keyed by the host's deps), read again
 * in the background once it is 2 s old and waited for only when it is 5 s old or there is none, so a
 * warm decision makes no query for the rules. A change made through an instance drops its snapshot at
 * once; the others see it within 5 s.
 */
import { asc, eq, sql } from 'drizzle-orm';
import { protectedServices, serviceMeta } from '../../../schema/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { RequestScope } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { tokenHash } from '../accounts/tokens.js';
import { DEFAULT_HEADERS, type ServiceRule } from './decision.js';
import { normalisePrefix } from './target.js';

export type ServiceRow = typeof protectedServices.$inferSelect;

const FRESH_MS = 2_000;
const STALE_MS = 5_000;
const SEEDED_KEY = 'protected_services_seeded';

interface Snapshot {
  rules: readonly ServiceRule[];
  byClientId: ReadonlyMap<string, ServiceRow>;
  readAt: number;
  refreshing?: boolean;
}

const snapshots = new WeakMap<object, Snapshot>();

function toRule(row: ServiceRow): ServiceRule {
  return {
    id: row.id,
    name: row.name,
    hosts: row.hosts,
    prefixes: row.prefixes,
    access: row.access,
    requireSecondFactor: row.requireSecondFactor,
    allowBasic: row.allowBasic,
    headers: row.headers,
  };
}

/** SHA-256 of a service secret (32 random bytes: a fast hash suffices), the only form stored. */
export function secretHash(secret: string): string {
  return tokenHash(secret);
}

/** A new service secret, shown once. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `svc_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The SRM and monitoring records built from their variables (present from the start, editable). */
export function seededServices(config: ConfigSnapshot, now: number): ServiceRow[] {
  const seed = (name: string, host: string, port: number, prefix: string, roles: string[]): ServiceRow => ({
    id: name,
    name,
    hosts: [],
    prefixes: [normalisePrefix(`http://${host}:${port}${prefix.replace(/\/*$/, '/')}`) ?? `http://${host}/`],
    access: { anyAccount: roles.length === 0, roles, accounts: [], groups: [] },
    requireSecondFactor: false,
    allowBasic: false,
    headers: DEFAULT_HEADERS,
    clientId: name,
    // Nobody knows this secret: an administrator rotates it to hand one to the service.
    secretHash: secretHash(newSecret()),
    createdAt: now,
    updatedAt: now,
  });
  return [
    seed('srm', config.get('SRM_HOST'), config.get('SRM_PORT'), config.get('SRM_VERSION_PREFIX'), []),
    seed(
      'monitoring',
      config.get('MONITORING_HOST'),
      config.get('MONITORING_PORT'),
      config.get('MONITORING_VERSION_PREFIX'),
      ['admin', 'auditor'],
    ),
  ];
}

/**
 * Inserts the seeded records once in the database's life (a deleted one stays deleted): the marker
 * row and the records in one batch, each insert conditioned on the marker's absence.
 */
async function seedOnce(db: Db, config: ConfigSnapshot, now: number): Promise<void> {
  const unseeded = sql`not exists (select 1 from ${serviceMeta} where ${serviceMeta.key} = ${SEEDED_KEY})`;
  const inserts = seededServices(config, now).map(
    (r) => sql`insert or ignore into ${protectedServices} (id, name, hosts, prefixes, access, require_second_factor,
      allow_basic, headers, client_id, secret_hash, created_at, updated_at)
      select ${r.id}, ${r.name}, ${JSON.stringify(r.hosts)}, ${JSON.stringify(r.prefixes)}, ${JSON.stringify(r.access)},
      0, 0, ${JSON.stringify(r.headers)}, ${r.clientId}, ${r.secretHash}, ${now}, ${now} where ${unseeded}`,
  );
  await db.batch([
    db.run(inserts[0]!),
    ...inserts.slice(1).map((s) => db.run(s)),
    db
      .insert(serviceMeta)
      .values({ key: SEEDED_KEY, value: String(now) })
      .onConflictDoNothing(),
  ]);
}

/** Every record, by name (seeding them first if the database never had them). */
export async function listServices(db: Db, config: ConfigSnapshot, now: number): Promise<ServiceRow[]> {
  const [marker] = await db.select().from(serviceMeta).where(eq(serviceMeta.key, SEEDED_KEY)).limit(1);
  if (!marker) await seedOnce(db, config, now);
  return db.select().from(protectedServices).orderBy(asc(protectedServices.name));
}

async function load(scope: RequestScope): Promise<Snapshot> {
  const rows = await listServices(scope.db, scope.config, scope.now());
  return {
    rules: rows.map(toRule),
    byClientId: new Map(rows.map((r) => [r.clientId, r])),
    readAt: scope.now(),
  };
}

/** The services snapshot of this isolate (see the module comment). */
export async function servicesSnapshot(scope: RequestScope, key: object): Promise<Snapshot> {
  const held = snapshots.get(key);
  const age = held ? Math.abs(scope.now() - held.readAt) : Number.POSITIVE_INFINITY;
  if (held && age < FRESH_MS) return held;
  if (held && age < STALE_MS) {
    if (!held.refreshing) {
      held.refreshing = true;
      scope.inBackground(() =>
        load(scope).then(
          (s) => void snapshots.set(key, s),
          () => void (held.refreshing = false),
        ),
      );
    }
    return held;
  }
  const fresh = await load(scope);
  snapshots.set(key, fresh);
  return fresh;
}

/** Drops this isolate's snapshot after a change (the next request reads the records again). */
export function dropServicesSnapshot(key: object): void {
  snapshots.delete(key);
}
