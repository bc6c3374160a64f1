/**
 * Goes through the test provider's pages (oidc-provider's development login and consent) as a
 * browser would, from the service's login URL of `provider` to the callback it is sent back to.
 */
import { expect } from 'vitest';
import type { Browser } from './browser.js';

/** Returns the callback URL (on `base`) the provider sends the browser back to, without following it. */
export async function throughProvider(b: Browser, base: string, provider: string, user: string): Promise<string> {
  const start = await b.fetch(`${base}/v3/oidc/login/${provider}`);
  expect(start.status).toBe(302);
  let url = start.headers.get('location')!;
  for (let i = 0; i < 20; i++) {
    if (url.startsWith(base)) return url;
    const res = await b.fetch(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`unexpected provider page at ${url}: ${res.status} ${html.slice(0, 200)}`);
    const formUrl = new URL(action, url).href;
    const inputs = html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g);
    const hidden = Object.fromEntries([...inputs].map((m) => [m[1]!, m[2]!]));
    const fields = hidden.prompt === 'login' ? { ...hidden, login: user, password: 'any-password' } : hidden;
    const posted = await b.postForm(formUrl, fields, { origin: new URL(url).origin });
    url = new URL(posted.headers.get('location')!, formUrl).href;
  }
  throw new Error('too many redirects');
}
