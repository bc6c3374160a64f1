/**
 * The gate behind real nginx (docs/performance.md, "forward-auth-nginx"): Debian's nginx runs the
 * documented configuration (docs/integration/nginx.conf, started as test/harness/proxies.ts starts it) with
 * auth_request to the bench's Node host, in front of a tiny upstream (a `return 200` server of the same
 * nginx); the same nginx also serves that upstream through a plain proxy_pass without auth_request. Measured
 * with the same load: requests/s and p99 through nginx with a session cookie and with a Bearer API token,
 * and through nginx alone; each gated result says its ratio to nginx alone. nginx (one worker) runs on the
 * host's core when cores are pinned, so the load generator keeps its own.
 */
import { freePort } from '../../test/harness/hosts.js';
import { startNginx, type RunningProxy } from '../../test/harness/proxies.js';
import { canPin } from './processes.js';
import type { ScenarioResult } from './report.js';
import { ADMIN_LOGIN } from './node-host.js';
import {
  basic,
  createToken,
  expectStatus,
  loadScenario,
  loginCookie,
  ScenarioError,
  type NodeScenarioContext,
} from './scenarios.js';

type Scenario = (ctx: NodeScenarioContext) => Promise<ScenarioResult>;

/** The scenarios in the order they run (nginx alone first: the others are compared with it), and a stop. */
export function nginxScenarios(): { scenarios: Record<string, Scenario>; stop: () => Promise<void> } {
  let rig: Promise<{ nginx: RunningProxy; plain: string }> | undefined;
  let alone: ScenarioResult | undefined;

  /** nginx with three servers: the gated one (documented), the plain proxy, and the upstream both reach. */
  const start = async (ctx: NodeScenarioContext) => {
    const [upstreamPort, plainPort] = [await freePort(), await freePort()];
    const upstream = { hostPort: `127.0.0.1:${upstreamPort}`, seen: [], close: async () => {} };
    const nginx = await startNginx(ctx.base, upstream, {
      ...(canPin() ? { core: 0 } : {}),
      servers: () =>
        [
          `server { listen 127.0.0.1:${upstreamPort}; location / { return 200 "upstream\\n"; } }`,
          `server { listen 127.0.0.1:${plainPort}; location / { proxy_pass http://${upstream.hostPort}; } }`,
        ].join('\n'),
    });
    const made = await fetch(`${ctx.base}/v4/services`, {
      method: 'POST',
      headers: { authorization: basic(ADMIN_LOGIN, ctx.adminPassword), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-nginx', hosts: [`127.0.0.1:${nginx.port}`], access: { anyAccount: true } }),
      signal: AbortSignal.timeout(10_000),
    });
    if (made.status !== 201) throw new ScenarioError(`POST /v4/services: ${made.status} ${await made.text()}`);
    return { nginx, plain: `http://127.0.0.1:${plainPort}` };
  };
  const rigOf = (ctx: NodeScenarioContext) => {
    rig ??= start(ctx);
    return rig;
  };

  const gated =
    (credential: 'cookie' | 'bearer'): Scenario =>
    async (ctx) => {
      const { nginx } = await rigOf(ctx);
      const headers: Record<string, string> =
        credential === 'bearer'
          ? { authorization: `Bearer ${await createToken(ctx.base, ADMIN_LOGIN, ctx.adminPassword)}` }
          : { cookie: await loginCookie(ctx.base, ADMIN_LOGIN, ctx.adminPassword) };
      const url = `${nginx.url}/dashboard`;
      await expectStatus(url, { headers }, 200, `GET ${url} through nginx (${credential})`);
      await expectStatus(url, { redirect: 'manual' }, 302, `GET ${url} through nginx without a credential`);
      const r = await loadScenario(ctx.config, ctx.hostPid, `forward-auth-nginx-${credential}`, { url, headers });
      if (alone?.requestsPerSec && r.requestsPerSec !== undefined) {
        const ratio = Math.round((r.requestsPerSec / alone.requestsPerSec) * 100) / 100;
        const p99 = `p99 ${r.p99Ms} ms against ${alone.p99Ms} ms`;
        r.details = { ...r.details, ratioToNginxAlone: ratio, nginxAloneRequestsPerSec: alone.requestsPerSec };
        r.message = `${r.message ? `${r.message}; ` : ''}${ratio} of nginx alone's requests/s, ${p99}`;
      }
      return r;
    };

  const plain: Scenario = async (ctx) => {
    const url = `${(await rigOf(ctx)).plain}/dashboard`;
    await expectStatus(url, {}, 200, `GET ${url} (nginx alone)`);
    const r = await loadScenario(ctx.config, ctx.hostPid, 'nginx-alone', { url });
    // The service answers nothing here: its CPU says nothing about this run.
    r.hostCpuPercent = undefined;
    r.cpuPerRequestUs = undefined;
    alone = r;
    return r;
  };

  return {
    scenarios: {
      'nginx-alone': plain,
      'forward-auth-nginx-cookie': gated('cookie'),
      'forward-auth-nginx-bearer': gated('bearer'),
    },
    stop: async () => {
      const started = await rig?.catch(() => undefined);
      await started?.nginx.stop();
    },
  };
}
