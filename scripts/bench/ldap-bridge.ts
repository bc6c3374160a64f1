/**
 * ldap-bridge: the latency an LDAP login pays through the bridge compared with a direct ldapts
 * bind from Node (p50/p99 of sequential logins against a real slapd, test/harness/slapd.ts).
 *
 * Three series, interleaved login by login (so drift hits them alike), after a warm-up:
 *   direct     ldapts from Node: service bind, search, user bind on a fresh connection (the
 *              minimum any LDAP login does);
 *   in-process the bridge's authenticate() without HTTP (adds the root DSE read, the filter
 *              check and the profile mapping);
 *   bridge     POST /v1/ldap/authenticate over real mutual TLS (buildBridge with the dev
 *              certificates, an undici Agent with the client certificate, as the worker's Node
 *              transport does; keep-alive, so the mTLS handshake is paid once, not per login).
 * The bridge runs in this process: with sequential requests the client's and the server's work
 * add up the same way as in two processes. slapd is pinned to the host core when possible.
 *
 * Environment: BENCH_LDAP_LOGINS (default 300 per series), BENCH_LDAP_VIA (ldap | starttls |
 * ldaps, default ldaps; the directory transport of all three series).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, fetch } from 'undici';
import { Client, escapeFilter, InvalidCredentialsError } from 'ldapts';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { authenticate } from '../../ldap-bridge/src/ldap/index.js';
import { LdapAuthenticateResponseSchema, type LdapConnection } from '../../schema/bridge/index.js';
import { startSlapd, type Slapd } from '../../test/harness/slapd.js';
import { makeDevCertificates } from '../dev-certs.js';
import { HOST_CORE } from './node-host.js';
import { pinRunning } from './processes.js';
import type { ScenarioResult } from './report.js';
import { ScenarioError } from './scenarios.js';
import { percentile, round } from './stats.js';

export const WARMUP = 20;

/** A direct login with ldapts: service bind and search, then the user's bind on a fresh connection. */
export async function directLdapLogin(conn: LdapConnection, login: string, password: string): Promise<boolean> {
  const url = conn.urls[0]!;
  // ldapts speaks TLS from the first byte whenever tlsOptions are given, so only for ldaps://.
  const open = () =>
    new Client({
      url,
      connectTimeout: conn.connectTimeoutMs,
      timeout: conn.searchTimeoutMs,
      ...(url.startsWith('ldaps:') ? { tlsOptions: { ca: conn.caCert ?? undefined } } : {}),
    });
  const startTls = async (c: Client) => {
    if (conn.startTls && url.startsWith('ldap:'))
      await c.startTLS({ ca: conn.caCert ?? undefined, host: new URL(url).hostname });
  };
  let dn: string;
  const service = open();
  try {
    await startTls(service);
    if (conn.bindDn) await service.bind(conn.bindDn, conn.bindPassword ?? '');
    const { searchEntries } = await service.search(conn.baseDn, {
      scope: 'sub',
      filter: escapeFilter`(uid=${login})`,
      attributes: ['uid', 'displayName', 'mail', 'memberOf', 'entryUUID'],
      sizeLimit: 2,
    });
    if (searchEntries.length !== 1) return false;
    dn = searchEntries[0]!.dn;
  } finally {
    await service.unbind();
  }
  const user = open();
  try {
    await startTls(user);
    await user.bind(dn, password);
    return true;
  } catch (err) {
    if (err instanceof InvalidCredentialsError) return false;
    throw err;
  } finally {
    await user.unbind();
  }
}

export interface MtlsBridge {
  /** https://127.0.0.1:port */
  url: string;
  /** AUTH_BRIDGE_URL and AUTH_BRIDGE_TLS_CERT/KEY/CA: a Node host reaching this bridge with the client certificate. */
  env: Record<string, string>;
  /** POST /v1/ldap/authenticate through the client certificate's Agent; the parsed answer. */
  authenticate(
    conn: LdapConnection,
    login: string,
    password: string,
  ): Promise<ReturnType<typeof LdapAuthenticateResponseSchema.parse>>;
  /** Idempotent. */
  stop(): Promise<void>;
}

/** The bridge listening with mutual TLS (fresh dev certificates) and a client Agent presenting its certificate. */
export async function startMtlsBridge(): Promise<MtlsBridge> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bridge-certs-'));
  try {
    const certs = makeDevCertificates(dir);
    const read = (p: string) => readFileSync(p);
    const app = buildBridge({
      mtls: {
        key: read(certs.server.key),
        cert: read(certs.server.cert),
        ca: read(certs.ca.cert),
        allowedSubjects: ['auth-worker'],
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    let stopped: Promise<void> | undefined;
    const dispatcher = new Agent({
      connect: { cert: read(certs.client.cert), key: read(certs.client.key), ca: read(certs.ca.cert) },
    });
    return {
      url,
      env: {
        AUTH_BRIDGE_URL: url,
        AUTH_BRIDGE_TLS_CERT: certs.client.cert,
        AUTH_BRIDGE_TLS_KEY: certs.client.key,
        AUTH_BRIDGE_TLS_CA: certs.ca.cert,
      },
      async authenticate(connection, login, password) {
        const res = await fetch(`${url}/v1/ldap/authenticate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ connection, login, password }),
          dispatcher,
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.status !== 200)
          throw new ScenarioError(`bridge: POST /v1/ldap/authenticate answered ${res.status}: ${text.slice(0, 300)}`);
        return LdapAuthenticateResponseSchema.parse(JSON.parse(text));
      },
      stop: () =>
        (stopped ??= (async () => {
          await dispatcher.close();
          await app.close();
          rmSync(dir, { recursive: true, force: true });
        })()),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface Series {
  name: string;
  /** One login; must succeed (a failed login would measure the wrong path). */
  run: () => Promise<boolean>;
  ms: number[];
}

/** Runs the series interleaved (rotating who goes first), `warmup` unmeasured rounds then `n` measured. */
export async function measureInterleaved(series: Series[], n: number, warmup = WARMUP): Promise<void> {
  for (let i = 0; i < warmup + n; i++) {
    for (let k = 0; k < series.length; k++) {
      const s = series[(i + k) % series.length]!;
      const t0 = performance.now();
      const ok = await s.run();
      const ms = performance.now() - t0;
      if (!ok) throw new ScenarioError(`${s.name}: login ${i + 1} failed; the measurement would be of the wrong path`);
      if (i >= warmup) s.ms.push(ms);
    }
  }
}

/** p50, p99 and mean of one series, rounded. */
export const summary = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    meanMs: round(ms.reduce((a, b) => a + b, 0) / ms.length),
  };
};

/**
 * The test slapd (pinned to the host's core when possible) and a bridge over mutual TLS, each registered for Ctrl+C.
 */
export async function startLdapFixture(
  register: (stop: () => Promise<void>) => void,
): Promise<{ slapd: Slapd; bridge: MtlsBridge; pinned: boolean; stop(): Promise<void> }> {
  const slapd = await startSlapd({ logLevel: '0' });
  register(slapd.stop);
  const pinned = pinRunning(slapd.pid, HOST_CORE);
  let bridge: MtlsBridge;
  try {
    bridge = await startMtlsBridge();
  } catch (err) {
    await slapd.stop();
    throw err;
  }
  register(bridge.stop);
  return {
    slapd,
    bridge,
    pinned,
    async stop() {
      await bridge.stop();
      await slapd.stop();
    },
  };
}

/** The scenario: starts slapd and the bridge, measures, stops both (registered at once for Ctrl+C). */
export async function ldapBridge(
  n: number,
  via: 'ldap' | 'starttls' | 'ldaps',
  register: (stop: () => Promise<void>) => void,
): Promise<ScenarioResult> {
  const fixture = await startLdapFixture(register);
  const { slapd, bridge, pinned } = fixture;
  try {
    const conn = slapd.connection({ via });
    const alice = slapd.user('alice');
    const b = bridge;
    const series: Series[] = [
      { name: 'direct', run: () => directLdapLogin(conn, alice.login, alice.password!), ms: [] },
      {
        name: 'in-process',
        run: async () => (await authenticate(conn, alice.login, alice.password!)).outcome === 'ok',
        ms: [],
      },
      {
        name: 'bridge',
        run: async () => (await b.authenticate(conn, alice.login, alice.password!)).outcome === 'ok',
        ms: [],
      },
    ];
    await measureInterleaved(series, n);
    const [direct, inProcess, viaBridge] = series.map((s) => summary(s.ms)) as [
      ReturnType<typeof summary>,
      ReturnType<typeof summary>,
      ReturnType<typeof summary>,
    ];
    const overhead = round(viaBridge.p50Ms - direct.p50Ms);
    return {
      scenario: 'ldap-bridge',
      status: 'ok',
      message:
        `${via}, ${n} sequential logins each: direct ldapts p50 ${direct.p50Ms} ms (p99 ${direct.p99Ms}); ` +
        `bridge over mTLS p50 ${viaBridge.p50Ms} ms (p99 ${viaBridge.p99Ms}): +${overhead} ms; bridge logic ` +
        `without HTTP p50 ${inProcess.p50Ms} ms`,
      p50Ms: viaBridge.p50Ms,
      p99Ms: viaBridge.p99Ms,
      details: {
        via,
        logins: n,
        warmup: WARMUP,
        slapdPinnedToCore: pinned ? HOST_CORE : null,
        direct,
        inProcess,
        bridge: viaBridge,
        bridgeOverheadP50Ms: overhead,
      },
    };
  } finally {
    await fixture.stop();
  }
}
