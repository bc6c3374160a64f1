/** client-config in the specification's three error-tracking configurations, on each host. */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const DSN = 'https://publickey@errors.example.com/42';

describe('client-config: Direct and Tunnel', () => {
  let direct: RunningHost;
  let tunnel: RunningHost;
  beforeAll(async () => {
    [direct, tunnel] = await Promise.all([
      startTestHost(kind, {
        FRONTEND_ERRTRACK_DSN: DSN,
        ERRTRACK_ENV: 'staging',
        FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE: '0.5',
      }),
      startTestHost(kind, {
        FRONTEND_ERRTRACK_DSN: DSN,
        ERRTRACK_ENV: 'prod',
        FRONTEND_ERRTRACK_TUNNEL: 'True',
        AUTH_ROOT_PATH: '/auth',
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([direct?.stop(), tunnel?.stop()]);
  });

  it('Direct: the DSN, environment and sample rates, no tunnel', async () => {
    const res = await fetch(`${direct.url}/v3/client-config`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      sentry: {
        dsn: DSN,
        environment: 'staging',
        tracesSampleRate: 0.5,
        replaysSessionSampleRate: 0.1,
        replaysOnErrorSampleRate: 1,
        tunnel: null,
      },
    });
  });

  it('Tunnel: the tunnel path under ROOT_PATH', async () => {
    expect(tunnel.url.endsWith('/auth')).toBe(true);
    const res = await fetch(`${tunnel.url}/v3/client-config`);
    const body = (await res.json()) as { sentry: { tunnel: string; environment: string } };
    expect(body.sentry.tunnel).toBe('/auth/v3/sentry-tunnel');
    expect(body.sentry.environment).toBe('prod');
    // The default root no longer serves anything.
    expect((await fetch(`${tunnel.origin}/api/auth/v3/client-config`)).status).toBe(404);
  });
});

describe('client-config: a DSN without ERRTRACK_ENV sends nothing', () => {
  let host: RunningHost;
  beforeAll(async () => {
    host = await startTestHost(kind, { FRONTEND_ERRTRACK_DSN: DSN });
  });
  afterAll(async () => {
    await host?.stop();
  });

  it('is Off', async () => {
    expect(await (await fetch(`${host.url}/v3/client-config`)).json()).toEqual({ sentry: null });
  });
});
