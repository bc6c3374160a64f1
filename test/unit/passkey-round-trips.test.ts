/**
 * The round trips to the database of a passkey sign-in (docs/security-passkeys.md, "Sign-in"): four
 * before the answer. Each libSQL call of the app (a statement or a batch) is one round trip to a far
 * database (docs/performance.md, "A far database"). The app runs in-process over a database file whose
 * calls are counted, and a software authenticator (a P-256 key in WebCrypto, the `none` attestation)
 * answers the ceremonies as a browser's would; a real browser and authenticator are
 * test/http/passkeys-browser.test.ts (Chromium's virtual authenticator, both hosts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { assembleService } from '../../worker/src/service.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { Browser } from '../harness/browser.js';

const ADMIN = { login: 'admin', password: 'Chang3@me' };
const ORIGIN = 'http://127.0.0.1';
const BASE = `${ORIGIN}/api/auth`;
const cleanups: (() => Promise<void> | void)[] = [];
vi.setConfig({ testTimeout: 60_000 });
afterEach(async () => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The app over a fresh database; `calls()` lists the SQL of each libSQL call of the last request. */
async function service() {
  const dir = mkdtempSync(join(tmpdir(), 'auth-passkey-trips-'));
  const config = parseEnvironment({
    LIBSQL_URL: `file:${join(dir, 'auth.db')}`,
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN.login,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    AUTH_LOG_LEVEL: 'CRITICAL',
    AUTH_ACCESS_LOG_LEVEL: 'CRITICAL',
    SESSION_SECRET_KEY: 'passkey-round-trips-test-session-key-0123456789',
  });
  const database = openDatabase(config);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => database.close());
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  const hasher = createNodeNativeHasher();
  expect(await bootstrapAdmin(database.db, config, hasher, Date.now())).toBe('created');
  const { app } = assembleService({
    env: config,
    openDb: () => database.db,
    openLazyDb: database.lazyDb,
    hasher,
    hostName: 'test-host',
    staticFiles: nodeStaticFiles('static'),
    writeLog: () => {},
  });
  let seen: string[] = [];
  // The calls made before the app answered: work it leaves for after its answer is not counted.
  let beforeAnswer: string[] = [];
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    seen = [];
    const res = await app.request(input, init);
    beforeAnswer = seen;
    return res;
  });
  for (const client of [database.db.$client, database.lazyDb().$client]) {
    for (const method of ['execute', 'batch'] as const) {
      const real = client[method].bind(client) as (...args: unknown[]) => unknown;
      vi.spyOn(client, method).mockImplementation(((...args: unknown[]) => {
        seen.push(JSON.stringify(args[0]).slice(0, 120));
        return real(...args);
      }) as never);
    }
  }
  return {
    /** The SQL of each libSQL call the last request made before its answer. */
    calls: () => beforeAnswer,
  };
}

/** A passkey on a software authenticator: what a browser hands back from navigator.credentials. */
async function authenticator(rpId: string) {
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, raw.slice(1, 33)],
      [-3, raw.slice(33, 65)],
    ]),
  );
  const id = crypto.getRandomValues(new Uint8Array(16));
  const rpIdHash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(rpId)));
  let counter = 0;
  const authData = (flags: number, rest: Uint8Array[] = []) => {
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, counter);
    return concat([rpIdHash, Uint8Array.of(flags), count, ...rest]);
  };
  const clientData = (type: string, challenge: string) =>
    new TextEncoder().encode(JSON.stringify({ type, challenge, origin: ORIGIN, crossOrigin: false }));
  const b64 = (bytes: Uint8Array) => isoBase64URL.fromBuffer(bytes as Uint8Array<ArrayBuffer>);
  return {
    /** The response to registration options (user presence and verification, attested credential data). */
    create(challenge: string) {
      const length = Uint8Array.of(0, id.length);
      const data = authData(0x45, [new Uint8Array(16), length, id, cose]);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', data],
        ]) as never,
      );
      return {
        id: b64(id),
        rawId: b64(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64(clientData('webauthn.create', challenge)),
          attestationObject: b64(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
      };
    },
    /** The response to sign-in options: the next counter, signed (ECDSA, DER as WebAuthn carries it). */
    async get(challenge: string, userHandle: string) {
      counter += 1;
      const data = authData(0x05);
      const client = clientData('webauthn.get', challenge);
      const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', client));
      const p1363 = new Uint8Array(
        await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, concat([data, hash])),
      );
      return {
        id: b64(id),
        rawId: b64(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64(client),
          authenticatorData: b64(data),
          signature: b64(derSignature(p1363)),
          userHandle,
        },
        clientExtensionResults: {},
      };
    },
  };
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** An ECDSA signature r || s (WebCrypto) as the DER SEQUENCE of two INTEGERs an authenticator sends. */
function derSignature(p1363: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i += 1;
    const trimmed = bytes.slice(i);
    const value = trimmed[0]! & 0x80 ? concat([Uint8Array.of(0), trimmed]) : trimmed;
    return concat([Uint8Array.of(0x02, value.length), value]);
  };
  const half = p1363.length / 2;
  const body = concat([integer(p1363.slice(0, half)), integer(p1363.slice(half))]);
  return concat([Uint8Array.of(0x30, body.length), body]);
}

describe('a passkey sign-in', () => {
  it('makes four round trips to the database before its answer', async () => {
    const s = await service();
    const owner = new Browser(ORIGIN);
    expect((await owner.postJson(`${BASE}/v3/login`, ADMIN)).status).toBe(200);
    const options = await owner.postJson(`${BASE}/v4/users/me/passkeys/registration-options`, {});
    expect(options.status).toBe(200);
    const creation = (await options.json()) as { challenge: string; rp: { id: string }; user: { id: string } };
    const key = await authenticator(creation.rp.id);
    const registered = await owner.postJson(`${BASE}/v4/users/me/passkeys`, {
      name: 'software key',
      response: key.create(creation.challenge),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);

    // Another browser, without the owner's cookies: a passwordless sign-in, as on a new device.
    const other = new Browser(ORIGIN);
    const signInOptions = await other.postJson(`${BASE}/v3/login/passkey/options`, {});
    expect(signInOptions.status).toBe(200);
    const { challenge } = (await signInOptions.json()) as { challenge: string };
    const response = await key.get(challenge, creation.user.id);
    const signedIn = await other.postJson(`${BASE}/v3/login/passkey`, { response });
    const calls = s.calls();
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
    expect(await other.cookie(`${BASE}/`, 'auth_session')).toBeTruthy();
    // Read, reserve with the challenge used up, the counter recorded, the session: each one call.
    expect(calls, calls.join('\n')).toHaveLength(4);

    // The same response again: its challenge was used up in the reservation's batch.
    const replayed = await other.postJson(`${BASE}/v3/login/passkey`, { response });
    expect(replayed.status).toBe(401);
  });
});
