/**
 * The docs page in headless Chromium (Debian's chromium, driven by playwright-core), on both hosts:
 * it renders with no request leaving the service, and its Authorize button (the OAuth password
 * grant of /v3/oauth_login) gives a token that "Try it out" then uses.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, baseUrl } from '../harness/client.js';
import { launchChromium } from '../harness/console.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

describe('docs page in a browser', () => {
  it('renders the API sections with every request served by the service itself', async () => {
    const page = await browser.newPage();
    const origin = new URL(baseUrl()).origin;
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${baseUrl()}/docs`);
    await page.waitForSelector('.swagger-ui .opblock-tag', { timeout: 20_000 });
    const tags = await page.$$eval('.opblock-tag', (els) => els.map((e) => e.getAttribute('data-tag')));
    for (const t of ['auths', 'user_v4', 'settings']) expect(tags).toContain(t);
    expect(await page.textContent('.swagger-ui .title')).toContain('AUTH');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('Authorize (password grant) and then "Try it out" on GET /v4/users/me', async () => {
    const page = await browser.newPage();
    // The document is enough: the selector below waits for Swagger UI itself (a loaded machine can take
    // longer than goto's 30 s to fire "load" for every asset).
    await page.goto(`${baseUrl()}/docs`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.swagger-ui .opblock-tag', { timeout: 45_000 });
    await page.click('.scheme-container button.authorize');
    // The dialog lists every scheme; the oauth2 one has the username and password fields.
    const oauth = page.locator('.auth-container', { has: page.locator('#oauth_username') });
    await oauth.locator('#oauth_username').fill(ADMIN.login);
    await oauth.locator('#oauth_password').fill(ADMIN.password);
    const token = page.waitForResponse((r) => r.url().endsWith('/v3/oauth_login'));
    await oauth.locator('button.authorize').click();
    expect((await token).status()).toBe(200);
    // Once authorized, the oauth2 section says so and offers Logout instead of the fields.
    await page.getByRole('button', { name: 'Logout' }).first().waitFor({ timeout: 10_000 });
    await page.locator('.modal-ux button.close-modal').click();

    // Paths are listed below the server (ROOT_PATH), which Swagger UI puts in front of them when it sends.
    const op = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/v4/users/me"])');
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 10_000 }).toBe('200');
    expect(await op.locator('.live-responses-table .microlight').first().textContent()).toContain(ADMIN.login);
    await page.close();
  });

  it("Swagger UI's oauth2-redirect.html works under its strict Content-Security-Policy", async () => {
    // As Swagger UI does for a code flow: a docs page opens the redirect page in a popup, which
    // hands the code back to its opener and closes. Its script must run, and nothing be refused.
    const page = await browser.newPage();
    const refused: string[] = [];
    page.context().on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await page.goto(`${baseUrl()}/docs`);
    const redirect = `${baseUrl()}/docs/vendor/swagger-ui/oauth2-redirect.html#code=the-code&state=the-state`;
    const popup = page.waitForEvent('popup');
    await page.evaluate((url) => {
      const w = window as unknown as Record<string, unknown>;
      w.swaggerUIRedirectOauth2 = {
        state: 'the-state',
        redirectUrl: url,
        auth: { name: 'oauth2', schema: { get: () => 'authorizationCode' } },
        callback: (r: { auth: { code: string } }) => (w.receivedCode = r.auth.code),
        errCb: (e: { message: string }) => (w.redirectError = e.message),
      };
      window.open(url);
    }, redirect);
    await (await popup).waitForEvent('close', { timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as Record<string, unknown>).receivedCode)).toBe('the-code');
    expect(await page.evaluate(() => (window as unknown as Record<string, unknown>).redirectError)).toBeUndefined();
    expect(refused).toEqual([]);
    await page.close();
  });
});
