/**
 * The passkey sign-ins (docs/security-passkeys.md): the passwordless sign-in /v3/login/passkey and a passkey as
 * the second step of a login (/v3/login/second-factor/passkey).
 */
import { z } from '@hono/zod-openapi';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Context } from 'hono';
import { publicRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { setAuthCookie } from '../http/cookies.js';
import { refuseCrossSiteLogin, requestOrigin } from '../http/csrf.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { readDeviceClaim, setDeviceCookie } from '../sessions/device-cookie.js';
import { SECOND_STEP_PATH, clearPendingCookie, pendingOfRequest } from '../mfa/answers.js';
import { readBody } from '../http/body.js';
import { requestHeader } from '../http/node-messages.js';
import { SessionResponse } from '../sessions/route-common.js';
import { groupNamesOf, toPublicUser } from '../accounts/model.js';
import { signInOptions, signInWithPasskey } from './login.js';
import { relyingParty } from './relying-party.js';
import { completeWithPasskey, pendingPasskeyOptions } from './second-step.js';
import { W } from './passkey-api-words.js';

export const B64URL = z.string().regex(/^[A-Za-z0-9_-]*={0,2}$/, 'base64url');
export const b64 = (max: number) => B64URL.max(max);

const AssertionSchema = z
  .object({
    id: b64(1400),
    rawId: b64(1400),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: b64(4096),
      authenticatorData: b64(4096),
      signature: b64(1024),
      userHandle: b64(128).optional(),
    }),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  })
  .openapi('PasskeyAssertion', {
    description: W.d1,
  });

const RequestOptions = z
  .object({ challenge: z.string(), rpId: z.string().optional(), userVerification: z.string().optional() })
  .passthrough()
  .openapi('PasskeyRequestOptions', {
    description: W.d2,
  });

const SignInBody = z.object({ response: AssertionSchema }).strict().openapi('PasskeySignIn');

const PendingToken = z.string().max(4096).optional().openapi({
  description: W.d3,
});
const PendingOptionsBody = z.object({ pendingToken: PendingToken }).strict().openapi('PasskeySecondStepStart');
const PendingAssertionBody = z
  .object({ pendingToken: PendingToken, response: AssertionSchema })
  .strict()
  .openapi('PasskeySecondStep');

const signInOptionsRoute = publicRoute({
  method: 'post',
  path: '/v3/login/passkey/options',
  operationId: 'startPasskeyLogin',
  tags: ['auths'],
  summary: W.s4,
  description: W.d5,
  responses: {
    200: { description: 'the options', content: { 'application/json': { schema: RequestOptions } } },
  },
});

const signIn = publicRoute({
  method: 'post',
  path: '/v3/login/passkey',
  operationId: 'loginWithPasskey',
  tags: ['auths'],
  summary: W.s6,
  description: W.d7,
  request: { body: { required: true, content: { 'application/json': { schema: SignInBody } } } },
  responses: {
    200: { description: 'signed in', content: { 'application/json': { schema: SessionResponse } } },
    ...problemResponses(401, 403, 415, 422, 429),
  },
});

const secondStepOptions = publicRoute({
  method: 'post',
  path: `${SECOND_STEP_PATH}/passkey/options`,
  operationId: 'startPasskeySecondStep',
  tags: ['auths'],
  summary: W.s8,
  description: W.d9,
  request: { body: { required: false, content: { 'application/json': { schema: PendingOptionsBody } } } },
  responses: {
    200: { description: 'the options', content: { 'application/json': { schema: RequestOptions } } },
    ...problemResponses(400, 401, 403, 409, 415, 422),
  },
});

const secondStepAssertion = publicRoute({
  method: 'post',
  path: `${SECOND_STEP_PATH}/passkey`,
  operationId: 'loginSecondStepWithPasskey',
  tags: ['auths'],
  summary: W.s10,
  description: W.d11,
  request: { body: { required: true, content: { 'application/json': { schema: PendingAssertionBody } } } },
  responses: {
    200: { description: 'logged in', content: { 'application/json': { schema: SessionResponse } } },
    ...problemResponses(400, 401, 403, 415, 422, 429),
  },
});

/** The relying party of this request. */
export function rpOf(c: Context<AppEnv>) {
  return relyingParty(c.var.scope.config, requestOrigin(c));
}

/** Registers the sign-ins with a passkey (after the caller's own passkeys). */
export function registerPasskeySignIn(app: App): void {
  app.openapi(secondStepOptions, async (c) => {
    const body = requestHeader(c, 'Content-Type') ? await readBody(c, PendingOptionsBody) : {};
    const pending = await pendingOfRequest(c, body.pendingToken);
    return c.json(await pendingPasskeyOptions(c.var.scope, rpOf(c), pending), 200);
  });

  app.openapi(secondStepAssertion, async (c) => {
    refuseCrossSiteLogin(c);
    const body = validated(c, 'json', PendingAssertionBody);
    const scope = c.var.scope;
    const pending = await pendingOfRequest(c, body.pendingToken);
    const response = body.response as AuthenticationResponseJSON;
    const done = await completeWithPasskey(scope, rpOf(c), pending, response);
    clearPendingCookie(c);
    setAuthCookie(c, done.token, done.session.expiresAt);
    if (done.device) await setDeviceCookie(c, scope, done.user.id, done.device);
    c.set('principal', { user: done.user, method: 'session', groups: groupNamesOf(done.user) });
    return c.json(
      { user: toPublicUser(done.user, c.var.scope.config), expiresAt: new Date(done.session.expiresAt).toISOString() },
      200,
    );
  });

  app.openapi(signInOptionsRoute, async (c) => c.json(await signInOptions(c.var.scope, rpOf(c)), 200));

  app.openapi(signIn, async (c) => {
    refuseCrossSiteLogin(c);
    const body = validated(c, 'json', SignInBody);
    const scope = c.var.scope;
    const response = body.response as AuthenticationResponseJSON;
    const opened = await signInWithPasskey(scope, rpOf(c), response, 'cookie', await readDeviceClaim(c));
    setAuthCookie(c, opened.token, opened.session.expiresAt);
    await setDeviceCookie(c, scope, opened.user.id, opened.device);
    c.set('principal', { user: opened.user, method: 'session', groups: groupNamesOf(opened.user) });
    return c.json(
      {
        user: toPublicUser(opened.user, c.var.scope.config),
        expiresAt: new Date(opened.session.expiresAt).toISOString(),
      },
      200,
    );
  });
}
