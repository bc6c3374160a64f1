/**
 * What a request for a new API token asks (docs/api.md, "API token scopes", "API token audiences",
 * "API token lifetimes"): its name, lifetime, scopes and audiences, checked against the settings and
 * the registered protected services; a 422 naming the field it breaks.
 */
import { z } from '@hono/zod-openapi';
import { DAY_MS } from '../accounts/model.js';
import { TOKEN_SCOPE_NAMES, type TokenScope } from '../accounts/token-scopes.js';
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { T } from './user-api-words.js';
import type { UserRow } from '../accounts/model.js';

export const TokenRequest = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ example: 'ci-pipeline' }),
    expiresInDays: z.number().int().min(1).max(3650).nullable().optional().openapi({
      description: T.expiresInDays,
    }),
    scopes: z
      .array(z.enum(TOKEN_SCOPE_NAMES))
      .optional()
      .openapi({
        description: T.scopes,
        example: ['account:read'],
      }),
    audiences: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(50)
      .optional()
      .openapi({
        description: T.audienceNames,
        example: ['srm'],
      }),
  })
  .strict()
  .openapi('ApiTokenRequest');

export type TokenRequestBody = z.infer<typeof TokenRequest>;

function refuse(path: string, message: string): ProblemError {
  return new ProblemError('VALIDATION', {
    detail: message,
    extensions: { errors: [{ location: 'json', path, message }] },
  });
}

/** The expiry of a new token (docs/api.md, "API token lifetimes"). */
export function tokenExpiry(config: ConfigSnapshot, days: number | null | undefined, now: number): number | null {
  const max = config.get('TOKEN_MAX_LIFETIME_DAYS');
  if (days === null) {
    if (!config.get('TOKEN_NO_EXPIRY_ALLOWED'))
      throw refuse(
        'expiresInDays',
        'tokens that never expire are not allowed here (AUTH_TOKEN_NO_EXPIRY_ALLOWED); give a lifetime',
      );
    return null;
  }
  if (days !== undefined && days > max)
    throw refuse('expiresInDays', `at most ${max} days (AUTH_TOKEN_MAX_LIFETIME_DAYS)`);
  return now + (days ?? Math.min(config.get('TOKEN_DEFAULT_LIFETIME_DAYS'), max)) * DAY_MS;
}

/**
 * The names of the protected services `owner` may enter: what its tokens may be limited to. The gate's
 * (gate/token-audiences.ts), handed over by app.ts: the gate is a tier above this folder (architecture.md §2).
 */
export type AudienceChoices = (scope: RequestScope, owner: UserRow) => Promise<string[]>;

/** The scopes and audiences to store: null is no limit; each audience is a service `owner` may enter. */
export async function tokenLimits(
  scope: RequestScope,
  body: TokenRequestBody,
  owner: UserRow,
  audienceChoices: AudienceChoices,
): Promise<{ scopes: TokenScope[] | null; audiences: string[] | null }> {
  if (!body.audiences) {
    if (body.scopes?.length === 0)
      throw refuse('scopes', 'a token without scopes opens nothing: name scopes, or audiences');
    return { scopes: body.scopes ?? null, audiences: null };
  }
  const known = new Set(await audienceChoices(scope, owner));
  const unknown = body.audiences.find((a) => !known.has(a));
  if (unknown !== undefined)
    throw refuse('audiences', `no protected service named ${unknown} that this account may enter`);
  return { scopes: body.scopes ?? [], audiences: body.audiences };
}
