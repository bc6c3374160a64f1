/**
 * The changes of /v3/settings (docs/configuration.md, "Settings through the API"): a write of one or
 * many UI-editable variables, validated as a whole (each value, then the combination in force after
 * the change, then where the mail password may go) and applied in one batch with its audit events; a
 * reset of one to its environment or default value. The routes (settings/routes.ts) keep HTTP: the
 * body, the problem, the answer. Each reads the saved settings once: the combination after the
 * change is the saved values read before it with the change laid over them.
 */
import { inArray } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import {
  REGISTRY,
  findConflicts,
  formatValue,
  isVarName,
  parseValue,
  type ConfigService,
  type ConfigSnapshot,
  type ValueReader,
  type VarName,
} from '../config/index.js';
import { ProblemError, type FieldError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { loadSavedSettings } from '../store/index.js';
import { sealSecret } from '../store/secret-box.js';
import { mailSecretErrors, type SettingsView } from './mail-secret.js';
import { settings } from '../../../schema/index.js';

/** A submitted value: the text the environment would hold, or a JSON value of the variable's type. */
export type SubmittedValue = string | number | boolean | string[];

/** Who changes the settings (the audit events' actor). */
export interface SettingsActor {
  id: string;
  login: string;
}

type ChangeScope = Pick<RequestScope, 'db' | 'now' | 'request'>;

/** The text form of a submitted value (numbers and booleans as JSON gives them, lists joined). */
function asText(value: SubmittedValue): string {
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

/** The configuration of these saved values, made this instance's at once (no wait for the cache's TTL). */
async function snapshotOf(config: ConfigService, saved: Record<string, string>): Promise<ConfigSnapshot> {
  config.invalidate();
  return config.current(async () => saved);
}

/** A variable the settings API edits, else 404. */
export function uiName(name: string): VarName {
  if (!isVarName(name) || !REGISTRY[name].ui)
    throw new ProblemError('NOT_FOUND', { detail: `no UI-editable setting named ${name}` });
  return name;
}

const shown = (n: VarName, v: unknown) => (REGISTRY[n].secret ? '***' : formatValue(REGISTRY[n], v));

/**
 * Writes `values` (variable name → value) as one change, or refuses all of them with a 422 naming
 * each bad variable. Returns the configuration after the change.
 */
export async function changeSettings(
  scope: ChangeScope,
  config: ConfigService,
  actor: SettingsActor,
  values: Readonly<Record<string, SubmittedValue>>,
): Promise<ConfigSnapshot> {
  const errors: FieldError[] = [];
  const parsed = new Map<VarName, { text: string; value: unknown }>();
  for (const [name, value] of Object.entries(values)) {
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
  // The stored values as of now (the request's snapshot may be up to the cache TTL old): the one read.
  const saved = await loadSavedSettings(scope.db);
  const before = await snapshotOf(config, saved);
  const changed = [...parsed.keys()];
  const after: SettingsView = {
    get: ((n: VarName) => (parsed.has(n) ? parsed.get(n)!.value : before.get(n))) as SettingsView['get'],
    source: (n) => (parsed.has(n) ? 'ui' : before.source(n)),
  };
  errors.push(...conflictErrors(after.get, changed));
  errors.push(...mailSecretErrors(before, after, changed, config.env));
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
  const { db } = scope;
  const now = scope.now();
  const [first, ...rest] = [...parsed].flatMap(([name, { text, value }]) => [
    db
      .insert(settings)
      .values({ name, value: text, updatedAt: now, updatedBy: actor.id })
      .onConflictDoUpdate({ target: settings.name, set: { value: text, updatedAt: now, updatedBy: actor.id } }),
    auditInsert(db, now, {
      stream: 'crud_admin',
      type: 'setting.changed',
      actor,
      request: scope.request,
      data: {
        name,
        before: shown(name, before.get(name)),
        beforeSource: before.source(name),
        after: shown(name, value),
      },
    }),
  ]);
  await db.batch([first!, ...rest]);
  const written = Object.fromEntries([...parsed].map(([name, p]) => [name, p.text]));
  return snapshotOf(config, { ...saved, ...written });
}

/**
 * Removes the saved value of `name` (a UI-editable variable, else 404), or refuses with a 422 when
 * the environment or default value would not fit the others. Returns the configuration after it.
 */
export async function resetSetting(
  scope: ChangeScope,
  config: ConfigService,
  actor: SettingsActor,
  name: VarName,
): Promise<ConfigSnapshot> {
  const { db } = scope;
  const now = scope.now();
  const saved = await loadSavedSettings(db);
  const before = await snapshotOf(config, saved);
  // The value the reset falls back to (restart-only variables included: it is what a restart gives).
  const env = config.env;
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
      actor,
      request: scope.request,
      data: { name, before: shown(name, before.get(name)), beforeSource: before.source(name) },
    }),
  ]);
  const { [name]: _reset, ...rest } = saved;
  return snapshotOf(config, rest);
}
