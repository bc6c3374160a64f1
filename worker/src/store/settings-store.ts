/** Reading UI-saved configuration values and the database's own facts (service_meta). */
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { serviceMeta, settings } from '../../../schema/index.js';

/** The query of every UI-saved value (name, raw text); `savedValues` reads its rows. */
export const savedSettingsQuery = (db: Db) => db.select({ name: settings.name, value: settings.value }).from(settings);

/** UI-saved values as name → raw text, from the rows of `savedSettingsQuery`. */
export const savedValues = (rows: { name: string; value: string }[]): Record<string, string> =>
  Object.fromEntries(rows.map((r) => [r.name, r.value]));

/** All UI-saved values as name → raw text. */
export async function loadSavedSettings(db: Db): Promise<Record<string, string>> {
  return savedValues(await savedSettingsQuery(db));
}

/** The query of one service_meta value (no row: absent). */
export const metaQuery = (db: Db, key: string) =>
  db.select({ value: serviceMeta.value }).from(serviceMeta).where(eq(serviceMeta.key, key));

/** Reads one service_meta value. */
export async function readMeta(db: Db, key: string): Promise<string | undefined> {
  return (await metaQuery(db, key))[0]?.value;
}

/** Stores a service_meta value only if the key is absent; returns the value now stored (atomic). */
export async function claimMeta(db: Db, key: string, value: string): Promise<string> {
  await db.insert(serviceMeta).values({ key, value }).onConflictDoNothing();
  return (await readMeta(db, key)) ?? value;
}
