/** POST /v3/password_reset/request and /v3/password_reset/confirm (no authentication). */
import { z } from '@hono/zod-openapi';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { RESET_LIMITS, THROTTLE_WINDOW_MS, confirmReset, requestReset } from './flow.js';
import { RESET_PAGE_PATH } from '../accounts/reset-tokens.js';
import { publicRoute } from '../auth/protected-route.js';

const ResetRequest = z
  .object({
    login: z.string().trim().min(1).max(256).optional().openapi({ example: 'j.doe' }),
    email: z
      .string()
      .trim()
      .min(3)
      .max(320)
      .optional()
      .openapi({ description: 'the address of the account (ignoring case)' }),
  })
  .strict()
  .refine((b) => (b.login === undefined) !== (b.email === undefined), {
    message: 'give either login or email',
    path: ['login'],
  })
  .openapi('PasswordResetRequest');

const Accepted = z.object({ status: z.literal('accepted'), detail: z.string() }).openapi('PasswordResetAccepted');

const ResetConfirm = z
  .object({
    token: z.string().min(20).max(200).openapi({ description: 'the token of the link (after `#token=`)' }),
    newPassword: z.string().min(1).max(1024),
  })
  .strict()
  .openapi('PasswordResetConfirm');

const windowMin = THROTTLE_WINDOW_MS / 60_000;

const request = publicRoute({
  method: 'post',
  operationId: 'requestPasswordReset',
  path: '/v3/password_reset/request',
  tags: ['auths'],
  summary: 'Ask for a password-reset mail',
  description: [
    'No authentication. Give `login` or `email`. The answer is always 202 with the same body, found or not, ' +
      'and takes as long: what was found is told only in the mail, to the address of the account. A local, ' +
      `active account gets a single-use link to DEFAULT_FRONTEND_URL + \`${RESET_PAGE_PATH}#token=...\`, valid ` +
      'AUTH_PASSWORD_RESET_TTL_MIN minutes; an LDAP or OIDC account is told to use its directory or provider, a ' +
      'blocked one to ask an administrator.',
    `At most ${RESET_LIMITS.perIdentifier} requests per login or address asked for, and ` +
      `${RESET_LIMITS.perClient} per client address, within ${windowMin} minutes (known or not): beyond, 429 ` +
      'with Retry-After.',
    'The link is sealed like a stored secret: 503 on a host without a key to seal it with (an edge host ' +
      'without AUTH_SECRETS_ENCRYPTION_KEY or SESSION_SECRET_KEY).',
  ].join('\n\n'),
  request: { body: { required: true, content: { 'application/json': { schema: ResetRequest } } } },
  responses: {
    202: {
      description: 'accepted (whether or not an account matched)',
      content: { 'application/json': { schema: Accepted } },
    },
    ...problemResponses(400, 422, 429, 503),
  },
});

const confirm = publicRoute({
  method: 'post',
  operationId: 'confirmPasswordReset',
  path: '/v3/password_reset/confirm',
  tags: ['auths'],
  summary: 'Set a new password with a reset link',
  description: [
    'No authentication: the token of the link proves the mailbox. The new password must pass the password ' +
      "policy and history (422 PASSWORD_POLICY, the link stays usable). The link is used up; so are the account's " +
      'other links.',
    'Ends every session of the account (their cookies answer `reason` password_reset), revokes every API token ' +
      "(as an administrator's reset does: a reset may be the way out of a compromise) and ends a failed-login lock.",
    '400 INVALID_RESET_TOKEN for a link that is unknown, used or expired (the same answer for each); 403 ' +
      'ACCOUNT_BLOCKED when the account was blocked since.',
  ].join('\n\n'),
  request: { body: { required: true, content: { 'application/json': { schema: ResetConfirm } } } },
  responses: { 204: { description: 'the password is set' }, ...problemResponses(400, 403, 422) },
});

const ACCEPTED = {
  status: 'accepted' as const,
  detail: 'if an account matches, a mail with instructions goes to its address',
};

/** Registers the password-reset endpoints. */
export function registerPasswordReset(app: App): void {
  app.openapi(request, async (c) => {
    const body = validated(c, 'json', ResetRequest);
    await requestReset(c.var.scope, body);
    return c.json(ACCEPTED, 202);
  });
  app.openapi(confirm, async (c) => {
    const body = validated(c, 'json', ResetConfirm);
    await confirmReset(c.var.scope, body.token, body.newPassword);
    return c.body(null, 204);
  });
}
