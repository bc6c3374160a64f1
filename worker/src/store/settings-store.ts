/** Reading UI-saved configuration values and the database's own facts (service_meta). */
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { serviceMeta, settings } from '../../../schema/index.js';

/** All UI-saved values as name → raw text. */
export async function loadSavedSettings(db: Db): Promise<Record<string, string>> {
  const rows = await db.select({ name: settings.name, value: settings.value }).from(settings);
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

/** Reads one service_meta value. */
export async function readMeta(db: Db, key: string): Promise<string | undefined> {
  const rows = await db.select({ value: serviceMeta.value }).from(serviceMeta).where(eq(serviceMeta.key, key));
  return rows[0]?.value;
}

/** Stores a service_meta value only if the key is absent; returns the value now stored (atomic). */
export async function claimMeta(db: Db, key: string, value: string): Promise<string> {
  await db.insert(serviceMeta).values({ key, value }).onConflictDoNothing();
  return (await readMeta(db, key)) ?? value;
}
