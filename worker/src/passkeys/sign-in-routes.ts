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
    description: "The browser's PublicKeyCredential as JSON (WebAuthn Level 3 toJSON(); @simplewebauthn/browser)",
  });

const RequestOptions = z
  .object({ challenge: z.string(), rpId: z.string().optional(), userVerification: z.string().optional() })
  .passthrough()
  .openapi('PasskeyRequestOptions', {
    description:
      'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3): hand it to navigator.credentials.get ' +
      '(PublicKeyCredential.parseRequestOptionsFromJSON, or @simplewebauthn/browser startAuthentication)',
  });

const SignInBody = z.object({ response: AssertionSchema }).strict().openapi('PasskeySignIn');

const PendingToken = z.string().max(4096).optional().openapi({
  description: 'the pendingToken of the 401 SECOND_FACTOR_REQUIRED (omitted: the auth_pending_login cookie)',
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
  summary: 'Start a passwordless sign-in with a passkey',
  description:
    'The options of a WebAuthn authentication: no credentials listed (the authenticator offers the passkeys it ' +
    'holds for this relying party), user verification required. Its challenge is valid for 5 minutes, once. ' +
    'Nothing is stored. Any role.',
  responses: {
    200: { description: 'the options', content: { 'application/json': { schema: RequestOptions } } },
  },
});

const signIn = publicRoute({
  method: 'post',
  path: '/v3/login/passkey',
  operationId: 'loginWithPasskey',
  tags: ['auths'],
  summary: 'Sign in with a passkey (no password)',
  description: [
    'The browser’s response to the options of /v3/login/passkey/options. Opens a session as /v3/login does: ' +
      'the session cookie, the device cookie (a new device is mailed about), login.success with method passkey.',
    'A refused assertion (an unknown passkey, one whose user handle is not its account’s, a signature that does ' +
      'not verify, no user verification, a signature counter that did not grow, a used or expired challenge) is 401 ' +
      'INVALID_CREDENTIALS and counts as a failed login of that account on the budgets of a wrong password ' +
      '(device, account, client address); a restricted login is 401 ACCOUNT_LOCKED (429 ADDRESS_THROTTLED) before ' +
      'anything is checked. A blocked account: 403 ACCOUNT_BLOCKED. An LDAP or OIDC account’s passkey does not ' +
      'sign in without its directory or provider: 403 LOGIN_NOT_ALLOWED. A cross-site request: 403. Any role.',
  ].join('\n\n'),
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
  summary: 'The second step of a login with a passkey: the options of its assertion',
  description: [
    'After a right password answered 401 SECOND_FACTOR_REQUIRED with `passkey` among its `factors`: the options of ' +
      'a WebAuthn authentication for that pending login (docs/security-mfa.md). The body is optional: JSON ' +
      '`{"pendingToken": ...}`, or nothing (the cookie `auth_pending_login` names the pending login). The ' +
      'account’s passkeys are listed (allowCredentials), user verification preferred; the challenge is valid for ' +
      '5 minutes, once, and for this pending login only. Nothing is stored.',
    'A missing, expired, used or forged pending login: 401 UNAUTHENTICATED. An account without a passkey: 409. ' +
      'Any role.',
  ].join('\n\n'),
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
  summary: 'The second step of a login with a passkey: the assertion opens the session',
  description: [
    'The browser’s answer to the options of /v3/login/second-factor/passkey/options, with the `pendingToken` ' +
      '(omitted: the cookie `auth_pending_login`). Opens the session exactly as a code at /v3/login/second-factor ' +
      'does (cookie, device cookie, events; the session’s second-factor time starts) and clears the pending cookie.',
    'A refused assertion (not a passkey of the account, a challenge of another pending login, used or expired, a ' +
      'signature that does not verify, a counter that did not grow) is 401 INVALID_CREDENTIALS and counts like a ' +
      'wrong code (401 ACCOUNT_LOCKED, 429 ADDRESS_THROTTLED once restricted). A missing, expired, used or forged ' +
      'pending login: 401 UNAUTHENTICATED. A cross-site request: 403. Any role.',
  ].join('\n\n'),
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
