import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { checkedLookup } from '../../worker/node/webhook-transport.js';
import { nextWait, RETRY_SCHEDULE_MS } from '../../worker/src/webhooks/sender.js';
import { newSigningSecret, signatureHeader, signMessage } from '../../worker/src/webhooks/signature.js';
import {
  addressRefusal,
  bridgeTargetRefusal,
  checkTarget,
  type TargetRules,
} from '../../worker/src/webhooks/targets.js';
import { bridgeWebhookFetch } from '../../worker/src/webhooks/bridge-transport.js';
import type { BridgeClient } from '../../worker/src/bridge/client.js';
import { ProblemError } from '../../worker/src/http/problem.js';
import { webhookBody } from '../../worker/src/webhooks/payload.js';
import { createHmac } from 'node:crypto';

const none: TargetRules = { httpHosts: [], privateTargets: [] };
const refused = (url: string, rules = none) => {
  const r = checkTarget(url, rules);
  return 'refused' in r ? r.refused : null;
};

describe('webhook targets (docs/webhooks.md, "Targets")', () => {
  it('takes public https URLs, refuses other schemes and plain http outside the allow-list', () => {
    expect(refused('https://hooks.example.com/in')).toBeNull();
    expect(refused('https://93.184.216.34:8443/in')).toBeNull();
    expect(refused('http://hooks.example.com/in')).toMatch(/only https/);
    expect(refused('http://hooks.example.com/in', { httpHosts: ['hooks.example.com'], privateTargets: [] })).toBeNull();
    expect(refused('ftp://hooks.example.com/')).toMatch(/only https/);
    expect(refused('file:///etc/passwd')).toMatch(/only https/);
    expect(refused('not a url')).toMatch(/absolute URL/);
  });

  it('refuses user names and passwords in the URL (no credentials, no "good.com@evil" confusion)', () => {
    expect(refused('https://user:pw@hooks.example.com/')).toMatch(/user name or password/);
    expect(refused('https://hooks.example.com@127.0.0.1/')).toMatch(/user name or password/);
  });

  it.each([
    ['https://127.0.0.1/'],
    ['https://127.1.2.3/'],
    ['https://10.0.0.8/'],
    ['https://172.16.5.4/'],
    ['https://192.168.1.1/'],
    ['https://169.254.169.254/latest/meta-data/'],
    ['https://100.100.100.200/'],
    ['https://0.0.0.0/'],
    ['https://[::1]/'],
    ['https://[::]/'],
    ['https://[fd00:ec2::254]/'],
    ['https://[fe80::1]/'],
    ['https://[fc00::5]/'],
    ['https://[::ffff:127.0.0.1]/'],
    ['https://[::ffff:7f00:1]/'],
    ['https://[::ffff:a9fe:a9fe]/'],
    ['https://[64:ff9b::a00:1]/'],
    // Decimal, hexadecimal, octal and short IPv4 spellings: the URL parser makes dotted quads of them.
    ['https://2130706433/'],
    ['https://0x7f000001/'],
    ['https://0x7f.0.0.1/'],
    ['https://0177.0.0.1/'],
    ['https://127.1/'],
    ['https://017700000001/'],
    ['https://0xa9.0xfe.0xa9.0xfe/'],
  ])('refuses the private or special address of %s', (url) => {
    expect(refused(url)).toMatch(/loopback, private, link-local, reserved or metadata/);
  });

  it('refuses the local machine by name, with or without a trailing dot, and single labels', () => {
    for (const url of ['https://localhost/', 'https://LOCALHOST./', 'https://api.localhost/', 'https://localhost../'])
      expect(refused(url)).toMatch(/local machine/);
    expect(refused('https://metadata/')).toMatch(/no public host name/);
    expect(refused('https://hooks.example.com./in')).toBeNull();
  });

  it('opens private targets only as allow-listed: by address, CIDR range or host name', () => {
    const rules = { httpHosts: ['127.0.0.1'], privateTargets: ['127.0.0.1', '10.1.0.0/16', 'intranet.lan'] };
    expect(refused('http://127.0.0.1:9000/hook', rules)).toBeNull();
    expect(refused('https://10.1.2.3/', rules)).toBeNull();
    expect(refused('https://10.2.0.1/', rules)).toMatch(/private/);
    expect(refused('https://[::1]/', rules)).toMatch(/private/);
    expect(addressRefusal('192.168.0.9', 'intranet.lan', rules)).toBeNull();
    expect(addressRefusal('192.168.0.9', 'other.example.com', rules)).toMatch(/private/);
    expect(addressRefusal('93.184.216.34', 'hooks.example.com', none)).toBeNull();
  });

  it('on the Node host, refuses a name when any of its addresses is private, at connection time', async () => {
    const answers: Record<string, LookupAddress[]> = {
      'public.example.com': [{ address: '93.184.216.34', family: 4 }],
      'rebind.example.com': [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      'v6.example.com': [{ address: '::ffff:169.254.169.254', family: 6 }],
    };
    const resolve = (host: string, cb: (err: Error | null, a: LookupAddress[]) => void) => cb(null, answers[host]!);
    const look = (host: string) =>
      new Promise<string>((done) =>
        checkedLookup(host, none, resolve)(host, { all: true }, (err, a) =>
          done(err ? err.message : JSON.stringify(a)),
        ),
      );
    expect(await look('public.example.com')).toContain('93.184.216.34');
    expect(await look('rebind.example.com')).toMatch(/refused: rebind.example.com resolves to 127.0.0.1/);
    expect(await look('v6.example.com')).toMatch(/refused/);
  });
});

describe('webhook signatures and bodies (docs/webhooks.md, "On the wire")', () => {
  it(
    'signs id.timestamp.body with the decoded secret (checked with node:crypto), one signature per ' + 'secret',
    async () => {
      const secret = newSigningSecret();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      expect(key.length).toBe(32);
      const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
      expect(await signMessage(secret, 'msg_1', 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
      const other = newSigningSecret();
      const header = await signatureHeader([secret, other], 'msg_1', 1700000000, '{"a":1}');
      expect(header.split(' ')).toEqual([`v1,${expected}`, await signMessage(other, 'msg_1', 1700000000, '{"a":1}')]);
    },
  );

  it("builds {type, timestamp, data} with the catalogue's fields only, never a secret, code or link", () => {
    const body = JSON.parse(
      webhookBody('login.success', 1700000000000, {
        id: 'e1',
        stream: 'user_activity',
        outcome: 'success',
        actorId: 'u1',
        actorLogin: 'ann',
        subjectId: 'u1',
        subjectLogin: 'ann',
        sourceIp: '203.0.113.9',
        data: { source: 'local', password: 'x', resetLink: 'https://x', code: '123456', notInCatalogue: 1 },
      }),
    );
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
    expect(body.type).toBe('login.success');
    expect(body.timestamp).toBe('2023-11-14T22:13:20.000Z');
    expect(body.data).toEqual({
      source: 'local',
      eventId: 'e1',
      stream: 'user_activity',
      outcome: 'success',
      actor: { id: 'u1', login: 'ann' },
      subject: { id: 'u1', login: 'ann' },
      sourceIp: '203.0.113.9',
    });
  });

  it('retries on the documented schedule, later when Retry-After asks (429, 503), and stops after it', () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(nextWait(1, 500, null, 0)).toBe(5_000);
    expect(nextWait(1, 429, '120', 0)).toBe(120_000);
    expect(nextWait(1, 503, new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(nextWait(3, 429, '1', 0)).toBe(1_800_000);
    expect(nextWait(1, 500, '120', 0)).toBe(5_000);
    expect(nextWait(8, 500, null, 0)).toBeNull();
  });

  it("through the bridge: https only, no credentials or fragment; the address is the bridge's to judge", () => {
    expect(bridgeTargetRefusal('https://10.1.2.3:8443/in')).toBeNull();
    expect(bridgeTargetRefusal('https://intranet/in')).toBeNull();
    expect(bridgeTargetRefusal('http://10.1.2.3/in')).toMatch(/only https/);
    expect(bridgeTargetRefusal('https://u:p@hooks.corp/in')).toMatch(/user name or password/);
    expect(bridgeTargetRefusal('https://hooks.corp/in#x')).toMatch(/fragment/);
    expect(bridgeTargetRefusal('not a url')).toMatch(/absolute URL/);
  });

  it("maps the bridge's answers and problems onto an attempt's answer or reason", async () => {
    const req = { url: 'https://hooks.corp/in', headers: {}, body: '{}', timeoutMs: 15_000, rules: none };
    const calls: Array<{ path: string; body: unknown; timeoutMs: number }> = [];
    const bridge = (answer: () => unknown): BridgeClient => ({
      status: async () => 'ok',
      call: async (path, body, schema, timeoutMs) => {
        calls.push({ path, body, timeoutMs });
        return schema.parse(answer());
      },
    });
    const ok = bridge(() => ({ status: 410, retryAfter: null, body: 'gone', durationMs: 12 }));
    expect(await bridgeWebhookFetch(ok)(req)).toEqual({ status: 410, retryAfter: null, body: 'gone', durationMs: 12 });
    expect(calls[0]).toEqual({
      path: '/v1/webhooks/deliver',
      body: { url: req.url, headers: {}, body: '{}', timeoutMs: 15_000 },
      timeoutMs: 16_500,
    });
    const problem = (code: string, detail: string) =>
      bridge(() => {
        throw new ProblemError('BAD_GATEWAY', { detail, extensions: { cause: code } });
      });
    await expect(bridgeWebhookFetch(problem('UPSTREAM_TIMEOUT', 'slow'))(req)).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    await expect(bridgeWebhookFetch(problem('WEBHOOK_TARGET_REFUSED', 'refused: x'))(req)).rejects.toThrow(
      'bridge: refused: x (WEBHOOK_TARGET_REFUSED)',
    );
    await expect(bridgeWebhookFetch(undefined)(req)).rejects.toThrow(/no bridge is configured \(AUTH_BRIDGE_URL\)/);
    await expect(bridgeWebhookFetch(ok)({ ...req, url: 'http://hooks.corp/in' })).rejects.toThrow(/only https/);
    expect(calls).toHaveLength(3);
  });
});
