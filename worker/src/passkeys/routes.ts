/**
 * Passkey endpoints (docs/security-passkeys.md): the caller's own passkeys under
 * /v4/users/me/passkeys, and the passwordless sign-in /v3/login/passkey.
 */
import { z } from '@hono/zod-openapi';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Context } from 'hono';
import { ANYONE, ANY_ROLE, protectedRoute, publicRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { setAuthCookie } from '../http/cookies.js';
import { refuseCrossSiteLogin, requestOrigin } from '../http/csrf.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { readDeviceClaim, setDeviceCookie } from '../sessions/device-cookie.js';
import { SECOND_STEP_PATH, clearPendingCookie, pendingOfRequest } from '../mfa/answers.js';
import { readBody } from '../http/body.js';
import { requestHeader } from '../http/node-messages.js';
import { SessionResponse } from '../sessions/route-common.js';
import { groupNamesOf, toPublicUser } from '../accounts/model.js';
import { signInOptions, signInWithPasskey } from './login.js';
import { registerPasskey, registrationOptions, removePasskey, renamePasskey } from './registration.js';
import { relyingParty } from './relying-party.js';
import { completeWithPasskey, pendingPasskeyOptions } from './second-step.js';
import { MAX_NAME_LENGTH, PasskeySchema, listPasskeys, toPublicPasskey } from './store.js';

const B64URL = z.string().regex(/^[A-Za-z0-9_-]*={0,2}$/, 'base64url');
const b64 = (max: number) => B64URL.max(max);

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

const AttestationSchema = z
  .object({
    id: b64(1400),
    rawId: b64(1400),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: b64(4096),
      attestationObject: b64(16384),
      authenticatorData: b64(16384).optional(),
      transports: z.array(z.string().max(32)).max(10).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
      publicKey: b64(4096).optional(),
    }),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  })
  .openapi('PasskeyAttestation', {
    description: "The browser's new PublicKeyCredential as JSON (WebAuthn Level 3 toJSON(); @simplewebauthn/browser)",
  });

const CreationOptions = z
  .object({
    challenge: z.string(),
    rp: z.object({ id: z.string().optional(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  })
  .passthrough()
  .openapi('PasskeyCreationOptions', {
    description:
      'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3): hand it to navigator.credentials.create ' +
      '(PublicKeyCredential.parseCreationOptionsFromJSON, or @simplewebauthn/browser startRegistration)',
  });

const RequestOptions = z
  .object({ challenge: z.string(), rpId: z.string().optional(), userVerification: z.string().optional() })
  .passthrough()
  .openapi('PasskeyRequestOptions', {
    description:
      'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3): hand it to navigator.credentials.get ' +
      '(PublicKeyCredential.parseRequestOptionsFromJSON, or @simplewebauthn/browser startAuthentication)',
  });

const PasskeyName = z.string().trim().min(1).max(MAX_NAME_LENGTH).openapi({ example: 'laptop' });
const RegisterBody = z
  .object({ name: PasskeyName, response: AttestationSchema })
  .strict()
  .openapi('PasskeyRegistration');
const RenameBody = z.object({ name: PasskeyName }).strict().openapi('PasskeyRename');
const PasskeyParams = z.object({ passkeyId: z.uuid() });
const SignInBody = z.object({ response: AssertionSchema }).strict().openapi('PasskeySignIn');

const PendingToken = z.string().max(4096).optional().openapi({
  description: 'the pendingToken of the 401 SECOND_FACTOR_REQUIRED (omitted: the auth_pending_login cookie)',
});
const PendingOptionsBody = z.object({ pendingToken: PendingToken }).strict().openapi('PasskeySecondStepStart');
const PendingAssertionBody = z
  .object({ pendingToken: PendingToken, response: AssertionSchema })
  .strict()
  .openapi('PasskeySecondStep');

const OWN = { schemes: ['Cookie'], roles: ANY_ROLE } as const;
/**
 * A change of the caller's passkeys: the step-up of a change of factors (a stolen session must not plant
 * a passkey of its own, docs/security-mfa.md, "Changing factors").
 */
const CHANGE = { ...OWN, stepUp: 'factors' } as const;
/** Registering is allowed while MFA_REQUIRED_ROLES makes a session enrol a factor first. */
const ENROL = { ...CHANGE, enrolment: true } as const;
const ENDS =
  "Adding or removing a passkey ends the account's other sessions (their OAuth access tokens too; the session of " +
  'this request stays) and mails the owner.';

const options = protectedRoute(ENROL, {
  method: 'post',
  path: '/v4/users/me/passkeys/registration-options',
  operationId: 'startOwnPasskeyRegistration',
  tags: ['user_v4'],
  summary: 'Start registering a passkey for the caller',
  description: [
    'The options of a WebAuthn registration: a discoverable credential (a passkey: it can sign in without the ' +
      'login) with user verification required, none of the account’s passkeys again, no attestation. Its challenge ' +
      'is valid for 5 minutes, once. The relying party: AUTH_WEBAUTHN_RP_ID and AUTH_WEBAUTHN_ORIGINS ' +
      '(docs/security-passkeys.md).',
    'Only with the session cookie: a passkey is a way to sign in, so an API token or an OAuth access token cannot ' +
      'add one.',
  ].join('\n\n'),
  responses: {
    200: { description: 'the options', content: { 'application/json': { schema: CreationOptions } } },
  },
});

const register = protectedRoute(ENROL, {
  method: 'post',
  path: '/v4/users/me/passkeys',
  operationId: 'registerOwnPasskey',
  tags: ['user_v4'],
  summary: 'Register a passkey for the caller (the answer to the registration options)',
  description: [
    `The browser’s response to the options of /v4/users/me/passkeys/registration-options, and a name. ${ENDS}`,
    '400 MALFORMED_REQUEST when the response does not answer an unused registration challenge of this account, ' +
      'or does not verify (origin, relying party, signature, user verification); 409 when the passkey is ' +
      'registered already or the account holds 20; 422 for a malformed body. Each refusal is audited ' +
      '(passkey.refused).',
  ].join('\n\n'),
  request: { body: { required: true, content: { 'application/json': { schema: RegisterBody } } } },
  responses: {
    201: { description: 'registered', content: { 'application/json': { schema: PasskeySchema } } },
    ...problemResponses(400, 409, 422),
  },
});

const list = protectedRoute(
  { tokenScope: 'account:read', ...ANYONE, enrolment: true },
  {
    method: 'get',
    path: '/v4/users/me/passkeys',
    operationId: 'listOwnPasskeys',
    tags: ['user_v4'],
    summary: "The caller's passkeys",
    description: 'Names, dates and flags; never a key or a credential id.',
    responses: {
      200: {
        description: 'the passkeys, oldest first',
        content: { 'application/json': { schema: z.object({ items: z.array(PasskeySchema) }) } },
      },
    },
  },
);

const rename = protectedRoute(CHANGE, {
  method: 'patch',
  path: '/v4/users/me/passkeys/{passkeyId}',
  operationId: 'renameOwnPasskey',
  tags: ['user_v4'],
  summary: "Rename one of the caller's passkeys",
  request: {
    params: PasskeyParams,
    body: { required: true, content: { 'application/json': { schema: RenameBody } } },
  },
  responses: {
    200: { description: 'renamed', content: { 'application/json': { schema: PasskeySchema } } },
    ...problemResponses(404, 422),
  },
});

const remove = protectedRoute(CHANGE, {
  method: 'delete',
  path: '/v4/users/me/passkeys/{passkeyId}',
  operationId: 'removeOwnPasskey',
  tags: ['user_v4'],
  summary: "Remove one of the caller's passkeys",
  description: `It no longer signs in. ${ENDS} 404 when it is not one of the caller's passkeys.`,
  request: { params: PasskeyParams },
  responses: { 204: { description: 'removed' }, ...problemResponses(404, 422) },
});

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
function rpOf(c: Context<AppEnv>) {
  return relyingParty(c.var.scope.config, requestOrigin(c));
}

/** The session of the request, kept when a change ends the others. */
function ownSession(c: Context<AppEnv>): string | undefined {
  const { method, sessionId } = c.var.principal;
  return method === 'session' ? sessionId : undefined;
}

/** Registers the passkey endpoints. */
export function registerPasskeyRoutes(app: App): void {
  app.openapi(options, async (c) => c.json(await registrationOptions(c.var.scope, rpOf(c), c.var.principal.user), 200));

  app.openapi(register, async (c) => {
    const body = validated(c, 'json', RegisterBody);
    const user = c.var.principal.user;
    const response = body.response as RegistrationResponseJSON;
    const row = await registerPasskey(c.var.scope, rpOf(c), user, body.name, response, ownSession(c));
    return c.json(toPublicPasskey(row), 201);
  });

  app.openapi(list, async (c) =>
    c.json({ items: (await listPasskeys(c.var.scope.db, c.var.principal.user.id)).map(toPublicPasskey) }, 200),
  );

  app.openapi(rename, async (c) => {
    const { passkeyId } = validated(c, 'param', PasskeyParams);
    const { name } = validated(c, 'json', RenameBody);
    const row = await renamePasskey(c.var.scope, c.var.principal.user, passkeyId, name);
    if (!row) throw new ProblemError('NOT_FOUND', { detail: 'no such passkey of yours' });
    return c.json(toPublicPasskey(row), 200);
  });

  app.openapi(remove, async (c) => {
    const { passkeyId } = validated(c, 'param', PasskeyParams);
    if (!(await removePasskey(c.var.scope, c.var.principal.user, passkeyId, ownSession(c))))
      throw new ProblemError('NOT_FOUND', { detail: 'no such passkey of yours' });
    return c.body(null, 204);
  });

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
