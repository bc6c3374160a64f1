/**
 * /v3/settings: the UI-editable variables (groups API, Security, Mail, Error tracking). Reading shows
 * each effective value and where it comes from; a write of one or many is validated as a whole and
 * applied in one transaction (or not at all); a reset returns a variable to its environment or
 * default value. Hidden variables are neither readable nor writable here. Admin only.
 */
import { z } from '@hono/zod-openapi';
import { inArray } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { Context } from 'hono';
import { auditInsert } from '../audit/events.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import {
  REGISTRY,
  VAR_NAMES,
  describeExpected,
  findConflicts,
  formatValue,
  isVarName,
  parseValue,
  type ConfigSnapshot,
  type ValueReader,
  type VarName,
} from '../config/index.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses, type FieldError } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { loadSavedSettings, savedSettingsQuery, savedValues } from '../store/index.js';
import { sealSecret } from '../store/secret-box.js';
import { mailSecretErrors, type SettingsView } from './mail-secret.js';
import { settings } from '../../../schema/index.js';

const UI_NAMES = VAR_NAMES.filter((n) => REGISTRY[n].ui);

const Value = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
type Value = z.infer<typeof Value>;

const SettingSchema = z
  .object({
    name: z.string(),
    env: z.string().openapi({ description: 'the environment variable that sets it' }),
    group: z.string(),
    type: z.enum(['string', 'integer', 'boolean', 'list', 'enumeration', 'number']),
    value: Value.optional().openapi({ description: 'the effective value (absent for secrets)' }),
    isSet: z.boolean().optional().openapi({ description: 'secrets only: whether a value is set (UI or environment)' }),
    source: z.enum(['ui', 'env', 'default']),
    default: Value.optional(),
    accepted: z.string().openapi({ description: 'the accepted values, in words' }),
    min: z.number().optional(),
    max: z.number().optional(),
    values: z.array(z.string()).optional(),
    secret: z.boolean(),
    restartRequired: z.boolean().openapi({ description: 'a change applies after a restart' }),
    description: z.string(),
  })
  .openapi('Setting');
const SettingList = z.object({ items: z.array(SettingSchema) }).openapi('SettingList');
const Update = z
  .object({
    values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).openapi({
      description: 'variable name → new value (the text the environment would hold, or a JSON value of the type)',
      example: { AUTH_FAILED_COUNT: 5, USER_PASSWORD_MIN_LENGTH: '10' },
    }),
  })
  .strict()
  .openapi('SettingsUpdate');
const NameParam = z.object({ name: z.string().min(1).max(100) });

function describeSetting(name: VarName, config: ConfigSnapshot): z.infer<typeof SettingSchema> {
  const def = REGISTRY[name];
  const value = config.get(name);
  const bounds = def.type === 'integer' || def.type === 'number' ? { min: def.min, max: def.max } : {};
  const values =
    def.type === 'enumeration'
      ? { values: [...def.values] }
      : def.type === 'string' && def.oneOf
        ? { values: [...def.oneOf] }
        : {};
  return {
    name,
    env: def.env,
    group: def.group,
    type: def.type,
    ...(def.secret ? { isSet: value !== '' } : { value: value as Value, default: def.default as Value }),
    source: config.source(name),
    accepted: describeExpected(def),
    ...bounds,
    ...values,
    secret: def.secret,
    restartRequired: def.restart,
    description: def.description,
  };
}

// Admin only; settings hold the security policy (lockout, passwords), so lent rights only read them.

const list = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  method: 'get',
  operationId: 'listSettings',
  path: '/v3/settings',
  tags: ['settings'],
  summary: 'The UI-editable settings',
  description:
    'Every variable of the groups API, Security, Mail and Error tracking (and AUTH_NEW_DEVICE_MAIL) with its ' +
    'effective value, source (ui, ' +
    'env, default), type, default and bounds. Secrets are never returned: only whether they are set.',
  responses: { 200: { description: 'the settings', content: { 'application/json': { schema: SettingList } } } },
});
const update = protectedRoute(
  { ...adminOnly(superAccess.refused('change settings'), 'settings:write'), stepUp: true },
  {
    method: 'patch',
    operationId: 'updateSettings',
    path: '/v3/settings',
    tags: ['settings'],
    summary: 'Change one or many settings, atomically',
    description:
      'Secrets (EMAIL_HOST_PASSWORD) are stored encrypted with AUTH_SECRETS_ENCRYPTION_KEY or SESSION_SECRET_KEY ' +
      '(503 while neither is set: an edge host; the Node host keeps a generated key). Every value is checked ' +
      '(type, bounds) and so is the combination in force after ' +
      'the change (saved, environment and default values): the pairs min ≤ max, and a password policy some ' +
      'password can satisfy (the minimum counts of special characters, digits, lower- and upper-case letters ' +
      'together at most USER_PASSWORD_MAX_LENGTH; no USER_PASSWORD_SPECIAL_SYM_MIN above 0 with an empty ' +
      'USER_PASSWORD_SPECIAL_SYM). One bad value or conflict refuses the whole request with 422 naming each bad ' +
      'variable, and nothing changes. Applies at once on this instance and on every other within 5 seconds ' +
      '(the error-tracking variable PROFILE after a restart).\n\nThe mail password follows no new server: a ' +
      'change of EMAIL_HOST or EMAIL_PORT, or ' +
      'EMAIL_USE_TLS turned off, needs EMAIL_HOST_PASSWORD in the same request while a user and password are set ' +
      '(else 422 naming EMAIL_HOST_PASSWORD); EMAIL_USE_TLS cannot be off while they are set (credentials never go ' +
      'without TLS).',
    request: { body: { required: true, content: { 'application/json': { schema: Update } } } },
    responses: {
      200: { description: 'the settings after the change', content: { 'application/json': { schema: SettingList } } },
      ...problemResponses(400, 409, 422, 503),
    },
  },
);
const reset = protectedRoute(
  { ...adminOnly(superAccess.refused('reset settings'), 'settings:write'), stepUp: true },
  {
    method: 'delete',
    operationId: 'resetSetting',
    path: '/v3/settings/{name}',
    tags: ['settings'],
    summary: 'Reset a setting to its environment or default value',
    description:
      'Removes the value saved through the settings API. 422 naming the conflicting settings when the environment ' +
      'or default value would not fit the others (min ≤ max, a satisfiable password policy): change those first. ' +
      'The mail password follows no new server (as for PATCH): a reset that would send it elsewhere, send the ' +
      "environment's password to a server set here, or turn TLS off while credentials are set is refused with 422.",
    request: { params: NameParam },
    responses: {
      200: { description: 'the setting now', content: { 'application/json': { schema: SettingSchema } } },
      ...problemResponses(404, 422),
    },
  },
);

/** The text form of a submitted value (numbers and booleans as JSON gives them, lists joined). */
function asText(value: string | number | boolean | string[]): string {
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

/**
 * Conflicts of the combination `after` that involve a changed variable (one that conflicted before
 * and is left alone does not block other changes; touching it without fixing it does).
 */
function conflictErrors(after: ValueReader, changed: readonly VarName[]): FieldError[] {
  return findConflicts(after)
    .filter((c) => c.names.some((n) => changed.includes(n)))
    .map((c) => ({
      location: 'json',
      path: `values.${c.names.find((n) => changed.includes(n))!}`,
      message: c.message,
    }));
}

function uiName(name: string): VarName {
  if (!isVarName(name) || !REGISTRY[name].ui)
    throw new ProblemError('NOT_FOUND', { detail: `no UI-editable setting named ${name}` });
  return name;
}

/** The configuration re-read from the store (after a write, this instance sees the change at once). */
async function current(c: Context<AppEnv>): Promise<ConfigSnapshot> {
  c.var.deps.config.invalidate();
  const db = c.var.scope.db;
  return c.var.deps.config.current(() => loadSavedSettings(db));
}

/** Registers /v3/settings. */
export function registerSettings(app: App): void {
  app.openapi(list, (c) => c.json({ items: UI_NAMES.map((n) => describeSetting(n, c.var.scope.config)) }, 200));

  app.openapi(update, async (c) => {
    const body = validated(c, 'json', Update);
    const errors: FieldError[] = [];
    const parsed = new Map<VarName, { text: string; value: unknown }>();
    for (const [name, value] of Object.entries(body.values)) {
      if (!isVarName(name) || !REGISTRY[name].ui) {
        errors.push({ location: 'json', path: `values.${name}`, message: 'not a UI-editable setting' });
        continue;
      }
      const text = asText(value);
      const r = parseValue(name, text, 'ui');
      if (r.ok) parsed.set(name, { text, value: r.value });
      else
        errors.push({
          location: 'json',
          path: `values.${name}`,
          message: `expected ${r.issue.expected}, received ${r.issue.received}`,
        });
    }
    if (parsed.size === 0 && errors.length === 0)
      errors.push({ location: 'json', path: 'values', message: 'name at least one setting' });
    // The stored values as of now (the request's snapshot may be up to the cache TTL old).
    const before = await current(c);
    const changed = [...parsed.keys()];
    const after: SettingsView = {
      get: ((n: VarName) => (parsed.has(n) ? parsed.get(n)!.value : before.get(n))) as SettingsView['get'],
      source: (n) => (parsed.has(n) ? 'ui' : before.source(n)),
    };
    errors.push(...conflictErrors(after.get, changed));
    errors.push(...mailSecretErrors(before, after, changed, c.var.deps.config.env));
    if (errors.length > 0) {
      throw new ProblemError('VALIDATION', {
        detail: errors.map((e) => `${e.path}: ${e.message}`).join('; '),
        extensions: { errors },
      });
    }

    // Secrets (EMAIL_HOST_PASSWORD) are stored sealed, so a database dump does not reveal them; the
    // mail sender opens them for each send (notifications/mail-settings.ts).
    for (const [name, p] of parsed) {
      if (REGISTRY[name].secret && p.text !== '') p.text = await sealSecret(before, p.text);
    }
    const db = c.var.scope.db;
    const now = c.var.scope.now();
    const actor = c.var.principal.user;
    const shown = (n: VarName, v: unknown) => (REGISTRY[n].secret ? '***' : formatValue(REGISTRY[n], v));
    const writes = [...parsed].flatMap(([name, { text, value }]) => [
      db
        .insert(settings)
        .values({ name, value: text, updatedAt: now, updatedBy: actor.id })
        .onConflictDoUpdate({ target: settings.name, set: { value: text, updatedAt: now, updatedBy: actor.id } }),
      auditInsert(db, now, {
        stream: 'crud_admin',
        type: 'setting.changed',
        actor,
        request: c.var.scope.request,
        data: {
          name,
          before: shown(name, before.get(name)),
          beforeSource: before.source(name),
          after: shown(name, value),
        },
      }),
    ]);
    // The writes and the read of what is then saved: one round trip (architecture.md §6, "A far database").
    const read = savedSettingsQuery(db);
    const batch: BatchItem<'sqlite'>[] = [...writes, read];
    const results: unknown[] = await db.batch(batch as [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]]);
    const saved = savedValues(results[results.length - 1] as Awaited<typeof read>);
    c.var.deps.config.invalidate();
    const now2 = await c.var.deps.config.current(async () => saved);
    return c.json({ items: UI_NAMES.map((n) => describeSetting(n, now2)) }, 200);
  });

  app.openapi(reset, async (c) => {
    const name = uiName(validated(c, 'param', NameParam).name);
    const db = c.var.scope.db;
    const now = c.var.scope.now();
    const before = await current(c);
    // The value the reset falls back to (restart-only variables included: it is what a restart gives).
    const env = c.var.deps.config.env;
    const after: SettingsView = {
      get: ((n: VarName) => (n === name ? env.get(n) : before.get(n))) as SettingsView['get'],
      source: (n) => (n === name ? env.source(n) : before.source(n)),
    };
    const errors = [...conflictErrors(after.get, [name]), ...mailSecretErrors(before, after, [name], env)];
    if (errors.length > 0) {
      throw new ProblemError('VALIDATION', {
        detail: `resetting ${name} to its ${env.source(name)} value: ${errors.map((e) => e.message).join('; ')}`,
        extensions: { errors },
      });
    }
    await db.batch([
      db.delete(settings).where(inArray(settings.name, [name])),
      auditInsert(db, now, {
        stream: 'crud_admin',
        type: 'setting.reset',
        actor: c.var.principal.user,
        request: c.var.scope.request,
        data: {
          name,
          before: REGISTRY[name].secret ? '***' : formatValue(REGISTRY[name], before.get(name)),
          beforeSource: before.source(name),
        },
      }),
    ]);
    return c.json(describeSetting(name, await current(c)), 200);
  });
}
