/**
 * ldap-login: the latency an LDAP Basic login pays through the worker and the bridge compared with
 * a direct ldapts bind from Node (p50/p99 of sequential logins against a real slapd).
 *
 * Three series, interleaved login by login after a warm-up (measureInterleaved of ldap-bridge.ts):
 *   direct  ldapts from Node: service bind, search, user bind on a fresh connection;
 *   bridge  POST /v1/ldap/authenticate over mutual TLS, straight to the bridge (as in ldap-bridge);
 *   worker  POST {host}/api/auth/v3/login_without_session with `Authorization: Basic` of the
 *           directory user and `X-LDAP-Name: <record>`: the real Node host (worker/node/main.ts,
 *           startBenchNodeHost, pinned to the host core) with AUTH_BRIDGE_URL and
 *           AUTH_BRIDGE_TLS_CERT/KEY/CA pointing at that same bridge, and an LDAP server record
 *           created through POST /api/auth/v3/settings/ldap-servers. Per login the worker reads the
 *           record, decrypts the service password, reserves a lockout attempt, calls the bridge
 *           (keep-alive mTLS), then updates the account, clears the attempt and writes the audit.
 * The right password every time: only wrong passwords count toward the lockout.
 * The HTTP client is Node's fetch with keep-alive (one connection to the host, as the direct
 * series has no HTTP at all); the bridge runs in this process, slapd is pinned to the host core.
 *
 * Environment: BENCH_LDAP_LOGINS (default 300 per series), BENCH_LDAP_VIA (ldap | starttls |
 * ldaps, default ldaps: the directory transport of all three series, and of the record).
 */
import { performance } from 'node:perf_hooks';
import { directLdapLogin, measureInterleaved, startLdapFixture, summary, WARMUP, type Series } from './ldap-bridge.js';
import { ADMIN_LOGIN, benchServiceEnv, HOST_CORE, startBenchNodeHost, type BenchHost } from './node-host.js';
import { cpuMeter } from './processes.js';
import type { ScenarioResult } from './report.js';
import { basic, expectStatus, ScenarioError } from './scenarios.js';
import { round } from './stats.js';

/** The X-LDAP-Name of the record the scenario creates. */
export const RECORD = 'bench-ldap';

/** ERROR/CRITICAL lines the host printed (its logging is at ERROR, so anything printed is one). */
const errorLines = (text: string) => text.split('\n').filter((l) => /"level":"(ERROR|CRITICAL)"/.test(l));

/** The scenario: starts slapd, the bridge and the Node host, creates the record, measures, stops all three. */
export async function ldapLogin(
  n: number,
  via: 'ldap' | 'starttls' | 'ldaps',
  adminPassword: string,
  register: (stop: () => Promise<void>) => void,
): Promise<ScenarioResult> {
  const fixture = await startLdapFixture(register);
  const { slapd, bridge, pinned } = fixture;
  let host: BenchHost | undefined;
  try {
    host = await startBenchNodeHost({ ...benchServiceEnv(adminPassword), ...bridge.env });
    register(host.stop);
    const base = host.base;

    const conn = slapd.connection({ via });
    const created = await expectStatus(
      `${base}/v3/settings/ldap-servers`,
      {
        method: 'POST',
        headers: { authorization: basic(ADMIN_LOGIN, adminPassword), 'content-type': 'application/json' },
        body: JSON.stringify({
          name: RECORD,
          urls: conn.urls,
          startTls: conn.startTls,
          caCert: conn.caCert,
          bindDn: slapd.serviceDn,
          bindPassword: slapd.servicePassword,
          baseDn: slapd.baseDn,
          attrRole: 'memberOf',
          roleAdminGroup: slapd.groups.admin,
          roleAuditorGroup: slapd.groups.auditor,
        }),
      },
      201,
      `POST /v3/settings/ldap-servers (Basic, ${ADMIN_LOGIN})`,
    );
    await created.json();

    const alice = slapd.user('alice');
    const url = `${base}/v3/login_without_session`;
    const headers = { authorization: basic(alice.login, alice.password!), 'x-ldap-name': RECORD };
    // One login first, checked in full: a wrong setup fails here with the host's answer.
    const first = await expectStatus(
      url,
      { method: 'POST', headers },
      200,
      `POST /v3/login_without_session (Basic, LDAP ${alice.login}, X-LDAP-Name ${RECORD})`,
    );
    const profile = (await first.json()) as { login?: unknown; role?: unknown };
    if (profile.login !== alice.login)
      throw new ScenarioError(
        `POST /v3/login_without_session: expected the account ${alice.login}, got ` +
          `${JSON.stringify(profile).slice(0, 300)}`,
      );

    const b = bridge;
    const worker = async () => {
      const res = await fetch(url, { method: 'POST', headers, signal: AbortSignal.timeout(10_000) });
      const text = await res.text(); // read it whole, as a client would
      if (res.status !== 200)
        throw new ScenarioError(`worker: POST /v3/login_without_session answered ${res.status}: ${text.slice(0, 300)}`);
      return true;
    };
    const series: Series[] = [
      { name: 'direct', run: () => directLdapLogin(conn, alice.login, alice.password!), ms: [] },
      {
        name: 'bridge',
        run: async () => (await b.authenticate(conn, alice.login, alice.password!)).outcome === 'ok',
        ms: [],
      },
      { name: 'worker', run: worker, ms: [] },
    ];
    const before = host.output().length;
    const meter = cpuMeter(host.child.pid!);
    const t0 = performance.now();
    await measureInterleaved(series, n);
    const wallMs = performance.now() - t0;
    const cpu = meter.stop();
    // The host works only in the worker series: its CPU time per worker login (warm-up included).
    const hostCpuMsPerLogin = round((cpu.processCpuPercent / 100) * (wallMs / (n + WARMUP)));
    const [direct, viaBridge, viaWorker] = series.map((s) => summary(s.ms)) as [
      ReturnType<typeof summary>,
      ReturnType<typeof summary>,
      ReturnType<typeof summary>,
    ];
    const workerOverDirect = round(viaWorker.p50Ms - direct.p50Ms);
    const workerOverBridge = round(viaWorker.p50Ms - viaBridge.p50Ms);
    const bridgeOverDirect = round(viaBridge.p50Ms - direct.p50Ms);
    const errors = errorLines(host.output().slice(before));
    const sign = (x: number) => (x >= 0 ? `+${x}` : String(x));
    return {
      scenario: 'ldap-login',
      status: errors.length > 0 ? 'flagged' : 'ok',
      message:
        (errors.length > 0
          ? `the host logged ${errors.length} error line(s), first: ${errors[0]!.slice(0, 300)}; `
          : '') +
        `${via}, ${n} sequential logins each: direct ldapts p50 ${direct.p50Ms} ms (p99 ${direct.p99Ms}); ` +
        `bridge over mTLS p50 ${viaBridge.p50Ms} ms (p99 ${viaBridge.p99Ms}); ` +
        `HTTP Basic LDAP login through the worker p50 ${viaWorker.p50Ms} ms (p99 ${viaWorker.p99Ms}): ` +
        `${sign(workerOverDirect)} ms over direct at p50 (${sign(bridgeOverDirect)} bridge, ` +
        `${sign(workerOverBridge)} worker; host CPU ${hostCpuMsPerLogin} ms per login)`,
      p50Ms: viaWorker.p50Ms,
      p99Ms: viaWorker.p99Ms,
      // Sequential logins: the host waits on the bridge and slapd most of the time, far from 100%.
      hostCpuPercent: Math.round(cpu.processCpuPercent),
      machineCpuPercent: Math.round(cpu.machineCpuPercent),
      details: {
        via,
        logins: n,
        warmup: WARMUP,
        record: RECORD,
        slapdPinnedToCore: pinned ? HOST_CORE : null,
        hostPinnedToCore: host.pinned ? HOST_CORE : null,
        direct,
        bridge: viaBridge,
        worker: viaWorker,
        workerOverDirectP50Ms: workerOverDirect,
        bridgeOverDirectP50Ms: bridgeOverDirect,
        workerOverBridgeP50Ms: workerOverBridge,
        hostCpuMsPerLogin,
        hostErrorLines: errors.length,
      },
    };
  } finally {
    await host?.stop();
    await fixture.stop();
  }
}
