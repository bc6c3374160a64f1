/**
 * Passkey endpoints (docs/security-passkeys.md): the caller's own passkeys under /v4/users/me/passkeys
 * (the sign-ins with a passkey: sign-in-routes.ts).
 */
import { z } from '@hono/zod-openapi';
import { b64, registerPasskeySignIn, rpOf } from './sign-in-routes.js';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Context } from 'hono';
import { ANYONE, ANY_ROLE, protectedRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { registerPasskey, registrationOptions, removePasskey, renamePasskey } from './registration.js';
import { MAX_NAME_LENGTH, PasskeySchema, listPasskeys, toPublicPasskey } from './store.js';

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

const PasskeyName = z.string().trim().min(1).max(MAX_NAME_LENGTH).openapi({ example: 'laptop' });
const RegisterBody = z
  .object({ name: PasskeyName, response: AttestationSchema })
  .strict()
  .openapi('PasskeyRegistration');
const RenameBody = z.object({ name: PasskeyName }).strict().openapi('PasskeyRename');
const PasskeyParams = z.object({ passkeyId: z.uuid() });
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

  registerPasskeySignIn(app);
}
