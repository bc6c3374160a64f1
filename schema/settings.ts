import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** Values saved through the settings API (UI-editable variables only), as the text the parser reads. */
export const settings = sqliteTable('settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
  updatedBy: text('updated_by'),
});

/** Facts about the database itself: the DB_SCHEMA stamp, a generated session key on the edge, ... */
export const serviceMeta = sqliteTable('service_meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
