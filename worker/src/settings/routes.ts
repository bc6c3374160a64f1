/**
 * /v3/settings: the UI-editable variables (groups API, Security, Mail, Error tracking). Reading shows
 * each effective value and where it comes from; a write of one or many is validated as a whole and
 * applied in one transaction (or not at all); a reset returns a variable to its environment or
 * default value. Hidden variables are neither readable nor writable here. Admin only. The changes
 * themselves (validation, the write and its audit events) are settings/changes.ts's.
 */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { REGISTRY, VAR_NAMES, describeExpected, type ConfigSnapshot, type VarName } from '../config/index.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { changeSettings, resetSetting, uiName } from './changes.js';
import { W } from './settings-api-words.js';

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
  summary: W.s1,
  description: W.d1,
  responses: { 200: { description: 'the settings', content: { 'application/json': { schema: SettingList } } } },
});
const update = protectedRoute(
  { ...adminOnly(superAccess.refused('change settings'), 'settings:write'), stepUp: true },
  {
    method: 'patch',
    operationId: 'updateSettings',
    path: '/v3/settings',
    tags: ['settings'],
    summary: W.s2,
    description: W.d2,
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
    summary: W.s3,
    description: W.d3,
    request: { params: NameParam },
    responses: {
      200: { description: 'the setting now', content: { 'application/json': { schema: SettingSchema } } },
      ...problemResponses(404, 422),
    },
  },
);

/** Registers /v3/settings. */
export function registerSettings(app: App): void {
  app.openapi(list, (c) => c.json({ items: UI_NAMES.map((n) => describeSetting(n, c.var.scope.config)) }, 200));

  app.openapi(update, async (c) => {
    const { values } = validated(c, 'json', Update);
    const after = await changeSettings(c.var.scope, c.var.deps.config, c.var.principal.user, values);
    return c.json({ items: UI_NAMES.map((n) => describeSetting(n, after)) }, 200);
  });

  app.openapi(reset, async (c) => {
    const name = uiName(validated(c, 'param', NameParam).name);
    const after = await resetSetting(c.var.scope, c.var.deps.config, c.var.principal.user, name);
    return c.json(describeSetting(name, after), 200);
  });
}
