/**
 * The error-tracking page in headless Chromium (Debian's chromium, driven by playwright-core), on
 * each host. Tunnel mode: the real @sentry/browser, configured from client-config, captures an
 * uncaught error that arrives at the ingest server through the service and the bridge. Off mode
 * (the shared host): nothing is initialised and nothing is sent. Ctrl+Shift+I shows the DSN.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { baseUrl } from '../harness/client.js';
import { launchChromium } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startIngestServer, type IngestServer, type ReceivedRequest } from '../harness/ingest-server.js';

const kind = inject('hostKind');

let browser: Browser;
let ingest: IngestServer;
let bridge: TestBridge;
let tunnel: RunningHost;
let dsn: string;

beforeAll(async () => {
  [ingest, bridge, browser] = await Promise.all([startIngestServer(), startTestBridge(), launchChromium()]);
  dsn = `https://browserkey@127.0.0.1:${new URL(ingest.origin).port}/42`;
  tunnel = await startTestHost(kind, {
    ...bridge.env,
    FRONTEND_ERRTRACK_DSN: dsn,
    ERRTRACK_ENV: 'browser-e2e',
    FRONTEND_ERRTRACK_TUNNEL: 'True',
    ERRTRACK_CA: ingest.caPem,
    AUTH_PROFILE: 'True',
  });
});
afterAll(async () => {
  await browser?.close();
  await tunnel?.stop();
  await Promise.all([bridge?.stop(), ingest?.stop()]);
});
afterEach(() => ingest.reset());

/** Opens the page, recording every request it makes. */
async function open(url: string): Promise<{ page: Page; requests: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`${url}/errtrack`);
  await page.waitForFunction(() => document.documentElement.hasAttribute('data-errtrack'), undefined, {
    timeout: 15_000,
  });
  return { page, requests };
}

/** The event items (JSON) among the received envelopes. */
function events(received: ReceivedRequest[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const r of received) {
    const lines = r.body.toString('latin1').split('\n');
    for (let i = 1; i + 1 < lines.length; i++) {
      if (lines[i]!.startsWith('{"type":"event"'))
        out.push(JSON.parse(Buffer.from(lines[i + 1]!, 'latin1').toString('utf8')) as Record<string, unknown>);
    }
  }
  return out;
}

describe('error-tracking page: Tunnel', () => {
  it(
    'initialises @sentry/browser from client-config and an uncaught error reaches the ingest server ' +
      'through the tunnel',
    async () => {
      const { page, requests } = await open(tunnel.url);
      expect(await page.getAttribute('html', 'data-errtrack')).toBe('tunnel');
      expect(
        await page.evaluate(
          () => (window as unknown as { Sentry: { getClient(): unknown } }).Sentry.getClient() !== undefined,
        ),
      ).toBe(true);
      await page.click('#errtrack-test');
      let found: Record<string, unknown> | undefined;
      await expect
        .poll(
          () =>
            (found = events(ingest.received).find((e) =>
              JSON.stringify(e).includes('Test error from the error-tracking page'),
            )),
          { timeout: 20_000, interval: 200 },
        )
        .toBeDefined();
      const exception = (
        found!.exception as { values: Array<{ type: string; value: string; mechanism: { handled: boolean } }> }
      ).values[0]!;
      expect(exception.type).toBe('Error');
      expect(exception.value).toMatch(/^Test error from the error-tracking page at /);
      expect(exception.mechanism.handled).toBe(false);
      expect(found!.environment).toBe('browser-e2e');
      // Every envelope went to the project's ingest URL, named by the DSN in its header.
      for (const r of ingest.received) {
        expect(r.url).toBe('/api/42/envelope/');
        expect(JSON.parse(r.body.toString('utf8').split('\n')[0]!).dsn).toBe(dsn);
      }
      // The browser itself only ever talked to the service.
      const origin = new URL(tunnel.url).origin;
      // (blob: is the session replay's compression worker, built in the page.)
      expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:'))).toEqual([]);
      expect(requests.some((u) => u === `${tunnel.url}/v3/sentry-tunnel`)).toBe(true);
      await page.close();
    },
  );

  it(
    'PROFILE: the page asks for the JS Self-Profiling API and Chromium sends a profile of the ' + 'page-load trace',
    async () => {
      const config = (await (await fetch(`${tunnel.url}/v3/client-config`)).json()) as {
        sentry: { profileSessionSampleRate?: number };
      };
      expect(config.sentry.profileSessionSampleRate).toBe(1);
      const res = await fetch(`${tunnel.url}/errtrack`);
      expect(res.headers.get('document-policy')).toBe('js-profiling');
      const { page } = await open(tunnel.url);
      const items = () =>
        ingest.received.flatMap((r) =>
          r.body
            .toString('latin1')
            .split('\n')
            .filter((l) => l.startsWith('{"type":'))
            .map((l) => (JSON.parse(l) as { type: string }).type),
        );
      // The page-load trace ends when the page is hidden (the SDK ends it and flushes on visibility
      // change); its profile travels as a profile_chunk item, next to the trace's spans. The page is
      // hidden rather than closed, so that no envelope in flight is cancelled with it.
      await page.waitForTimeout(1500);
      await page.evaluate(() => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        document.dispatchEvent(new Event('visibilitychange'));
      });
      // The two travel in separate envelopes, in either order: wait for both.
      await expect
        .poll(() => ['profile_chunk', 'span'].filter((t) => items().includes(t)), { timeout: 20_000, interval: 250 })
        .toEqual(['profile_chunk', 'span']);
      await page.close();
    },
  );

  it('Ctrl+Shift+I shows the effective DSN', async () => {
    const { page } = await open(tunnel.url);
    expect(await page.isVisible('#errtrack-dialog')).toBe(false);
    await page.keyboard.press('Control+Shift+I');
    await page.waitForSelector('#errtrack-dialog[open]', { timeout: 5000 });
    expect(await page.textContent('#errtrack-dsn')).toBe(dsn);
    expect(await page.textContent('#errtrack-route')).toContain('/v3/sentry-tunnel');
    await page.click('#errtrack-dialog button[type=submit]');
    await page.waitForSelector('#errtrack-dialog:not([open])', { state: 'attached', timeout: 5000 });
    await page.close();
  });
});

describe('error-tracking page: Off (the shared host, no FRONTEND_ERRTRACK_DSN)', () => {
  it('initialises nothing and sends nothing, even for an uncaught error', async () => {
    // Envelopes the closed Tunnel pages flush late are not this page's: only what holds its error counts.
    const fromThisPage = () => ingest.received.filter((r) => r.body.toString('latin1').includes('uncaught while off'));
    const { page, requests } = await open(baseUrl());
    expect(await page.getAttribute('html', 'data-errtrack')).toBe('off');
    expect(
      await page.evaluate(
        () => (window as unknown as { Sentry: { getClient(): unknown } }).Sentry.getClient() === undefined,
      ),
    ).toBe(true);
    expect(await page.isDisabled('#errtrack-test')).toBe(true);
    await page.evaluate(() =>
      setTimeout(() => {
        throw new Error('uncaught while off');
      }, 0),
    );
    await page.waitForTimeout(1500);
    expect(requests.filter((u) => u.includes('sentry-tunnel') || u.includes('/envelope'))).toEqual([]);
    const origin = new URL(baseUrl()).origin;
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    expect(fromThisPage()).toEqual([]);
    await page.keyboard.press('Control+Shift+I');
    await page.waitForSelector('#errtrack-dialog[open]', { timeout: 5000 });
    expect(await page.textContent('#errtrack-dsn')).toBe('error tracking off');
    await page.close();
  });
});
