/**
 * mfa: what a second factor costs (docs/performance.md, "Second factors"), short. In this process:
 * the CPU of one TOTP verification as the service does it (accounts/totp.ts `matchingStep`: otplib,
 * the current step and one either side, all three computed) and of one passkey assertion's
 * verification (@simplewebauthn/server verifyAuthenticationResponse of an ES256 assertion built here
 * with node:crypto: no browser, no authenticator). Against our Node host (production throttles, the
 * failed-login count raised): sequential logins, one at a time, of accounts without a factor
 * (POST /v3/login) and of accounts with a TOTP factor (POST /v3/login, answered 401
 * SECOND_FACTOR_REQUIRED with a pending token, then POST /v3/login/second-factor with the code),
 * each login's latency and the host's CPU per login. A TOTP code is accepted once per account and
 * step, so each login of the second kind is another account's (enrolled through the API first).
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { generate } from 'otplib';
import { matchingStep, stepOf, TOTP_DIGITS } from '../../worker/src/accounts/totp.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { benchServiceEnv, ONE_ADDRESS_ENV, startBenchNodeHost } from './node-host.js';
import { clockTicksPerSecond, cpuTicks } from './processes.js';
import type { ScenarioResult } from './report.js';
import { ScenarioError, loginCookie, type BenchConfig } from './scenarios.js';
import { seededLogin, seedAccounts } from './seed.js';
import { median, percentile, round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;

const PASSWORD = 'Bn#7seededPassw0rd';
/** Logins of each kind (and accounts enrolled with TOTP). */
const LOGINS = 30;
const b64url = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');

/** CPU microseconds (user + system of this process) per call of `f`, over `n` calls after a warm-up. */
async function cpuPerCall(n: number, f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(50, n); i++) await f();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

/** A TOTP code of `secret` for `step`, as an authenticator app computes it. */
const totpCode = (secret: string, step: number) =>
  generate({ strategy: 'hotp', secret, counter: step, digits: TOTP_DIGITS, algorithm: 'sha1' });

/** CPU of one TOTP verification (the accepted window of three steps), microseconds. */
export async function totpCpu(): Promise<number> {
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const now = Date.now();
  const code = await totpCode(secret, stepOf(now));
  if ((await matchingStep(secret, code, now)) === undefined) throw new ScenarioError('TOTP: own code refused');
  return cpuPerCall(2000, () => matchingStep(secret, code, now));
}

/** A COSE_Key (RFC 9053) of an EC2 P-256 public key for ES256, CBOR-encoded by hand. */
function coseKey(x: Buffer, y: Buffer): Uint8Array {
  // {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
  const head = Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]);
  return Buffer.concat([head, x, Buffer.from([0x22, 0x58, 0x20]), y]);
}

/** CPU of one passkey assertion's verification (ES256, user verified), microseconds. */
export async function passkeyCpu(): Promise<number> {
  const rpId = 'auth.example.test';
  const origin = `https://${rpId}`;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = coseKey(Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url'));
  const challenge = b64url(Buffer.from('bench-challenge-0123456789abcdef'));
  const credentialId = b64url(Buffer.from('bench-credential'));
  // authenticatorData: rpIdHash, flags UP|UV (0x05), signCount 0 (an authenticator without a counter).
  const authData = Buffer.concat([
    createHash('sha256').update(rpId).digest(),
    Buffer.from([0x05]),
    Buffer.from([0, 0, 0, 0]),
  ]);
  const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
  const signature = sign(
    'sha256',
    Buffer.concat([authData, createHash('sha256').update(clientData).digest()]),
    privateKey,
  );
  const verify = () =>
    verifyAuthenticationResponse({
      response: {
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          authenticatorData: b64url(authData),
          clientDataJSON: b64url(clientData),
          signature: b64url(signature),
        },
      },
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
      credential: { id: credentialId, publicKey: cose as Uint8Array<ArrayBuffer>, counter: 0 },
    });
  const first = await verify();
  if (!first.verified) throw new ScenarioError('passkey: the prepared assertion was not verified');
  return cpuPerCall(500, verify);
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Enrols a TOTP factor for `login` through the API; returns its secret. */
async function enrolTotp(base: string, login: string): Promise<string> {
  // A browser's session request: the cookie and the Origin it sends with every POST (the CSRF check).
  const cookie = await loginCookie(base, login, PASSWORD);
  const origin = new URL(base).origin;
  const started = await post(`${base}/v4/users/me/totp`, {}, { cookie, origin });
  if (started.status !== 201)
    throw new ScenarioError(`POST /v4/users/me/totp: ${started.status} ${await started.text()}`);
  const { otpauthUri } = (await started.json()) as { otpauthUri: string };
  const secret = new URL(otpauthUri).searchParams.get('secret');
  if (!secret) throw new ScenarioError('POST /v4/users/me/totp: no secret in the otpauth URI');
  const code = await totpCode(secret, stepOf(Date.now()));
  const confirmed = await post(`${base}/v4/users/me/totp/confirm`, { code }, { cookie, origin });
  if (confirmed.status !== 204)
    throw new ScenarioError(`POST /v4/users/me/totp/confirm: ${confirmed.status} ${await confirmed.text()}`);
  return secret;
}

/** Latencies (ms) and the host's CPU per login (ms) of running `login` for each of `logins`, one at a time. */
async function measureLogins(pid: number, logins: string[], login: (l: string) => Promise<void>) {
  const latencies: number[] = [];
  const t0 = cpuTicks([pid]);
  for (const l of logins) {
    const s = performance.now();
    await login(l);
    latencies.push(performance.now() - s);
  }
  const cpuMs = ((cpuTicks([pid]) - t0) * 1000) / clockTicksPerSecond() / logins.length;
  latencies.sort((a, b) => a - b);
  return { p50Ms: round(median(latencies)), p99Ms: round(percentile(latencies, 99)), hostCpuMsPerLogin: round(cpuMs) };
}

export async function mfa(_config: BenchConfig, adminPassword: string, register: Register): Promise<ScenarioResult> {
  const totpUs = await totpCpu();
  const passkeyUs = await passkeyCpu();
  // Every login comes from 127.0.0.1, one at a time: the per-address admission bounds would refuse
  // the 120 logins of the run (what they cost is the attack scenario's); nothing else is changed.
  const host = await startBenchNodeHost({ ...benchServiceEnv(adminPassword), ...ONE_ADDRESS_ENV });
  const stop = register(host.stop);
  try {
    seedAccounts(host.dbFile, 2 * LOGINS + 1, {
      passwordHash: await createNodeNativeHasher().hash(PASSWORD),
      now: Date.now(),
    });
    const withTotp = Array.from({ length: LOGINS }, (_, i) => seededLogin(i + 1));
    const passwordOnly = Array.from({ length: LOGINS }, (_, i) => seededLogin(LOGINS + i + 1));
    const secrets = new Map<string, string>();
    for (const l of withTotp) secrets.set(l, await enrolTotp(host.base, l));

    const pid = host.child.pid!;
    const password = await measureLogins(pid, passwordOnly, async (login) => {
      const res = await post(`${host.base}/v3/login`, { login, password: PASSWORD });
      if (res.status !== 200) throw new ScenarioError(`POST /v3/login (${login}): ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    });
    const twoStep = await measureLogins(pid, withTotp, async (login) => {
      const first = await post(`${host.base}/v3/login`, { login, password: PASSWORD });
      const body = (await first.json()) as { code?: string; pendingToken?: string };
      if (first.status !== 401 || body.code !== 'SECOND_FACTOR_REQUIRED' || !body.pendingToken)
        throw new ScenarioError(`POST /v3/login (${login}, TOTP): ${first.status} ${JSON.stringify(body)}`);
      // The next step's code: the confirmation used the current one, and each is accepted once.
      const code = await totpCode(secrets.get(login)!, stepOf(Date.now()) + 1);
      const second = await post(`${host.base}/v3/login/second-factor`, { pendingToken: body.pendingToken, code });
      if (second.status !== 200)
        throw new ScenarioError(`POST /v3/login/second-factor (${login}): ${second.status} ${await second.text()}`);
      await second.arrayBuffer();
    });
    const figures = {
      totpVerifyCpuUs: round(totpUs),
      passkeyVerifyCpuUs: round(passkeyUs),
      logins: LOGINS,
      password,
      passwordTotp: twoStep,
      latencyRatio: round(twoStep.p50Ms / password.p50Ms),
      cpuRatio: round(twoStep.hostCpuMsPerLogin / password.hostCpuMsPerLogin),
    };
    return {
      scenario: 'mfa',
      status: 'ok',
      message:
        `CPU per verification: TOTP ${figures.totpVerifyCpuUs} us (3 steps), passkey ES256 assertion ` +
        `${figures.passkeyVerifyCpuUs} us; ${LOGINS} sequential logins each: password only p50 ${password.p50Ms} ms ` +
        `(host CPU ${password.hostCpuMsPerLogin} ms/login), password + TOTP (2 requests) p50 ${twoStep.p50Ms} ms ` +
        `(host CPU ${twoStep.hostCpuMsPerLogin} ms/login): x${figures.latencyRatio} latency, x${figures.cpuRatio} CPU`,
      p50Ms: twoStep.p50Ms,
      p99Ms: twoStep.p99Ms,
      cpuPerRequestUs: round(twoStep.hostCpuMsPerLogin * 1000),
      details: { figures },
    };
  } finally {
    await stop();
  }
}
