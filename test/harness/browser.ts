/** A browser-like client: a real cookie jar (tough-cookie), same-origin Origin headers, manual redirects. */
import { CookieJar } from 'tough-cookie';
import { Agent, fetch as undiciFetch } from 'undici';

export class Browser {
  // Like browsers, Secure cookies are kept for http://127.0.0.1 and localhost (secure contexts).
  readonly jar = new CookieJar(undefined, { allowSecureOnLocal: true });
  /** Sends from the local address `from` (another loopback address: another client as the service sees it). */
  private readonly agent?: Agent;
  constructor(
    readonly origin: string,
    from?: string,
  ) {
    if (from) this.agent = new Agent({ localAddress: from });
  }

  /** Sends a request as a page of `origin` would, with the jar's cookies; stores Set-Cookie. */
  async fetch(url: string, init: RequestInit & { origin?: string | null } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = await this.jar.getCookieString(url);
    if (cookie) headers.set('Cookie', cookie);
    const method = (init.method ?? 'GET').toUpperCase();
    const origin = init.origin === undefined ? this.origin : init.origin;
    if (origin !== null && method !== 'GET' && method !== 'HEAD') headers.set('Origin', origin);
    const res = this.agent
      ? ((await undiciFetch(url, {
          ...(init as Parameters<typeof undiciFetch>[1]),
          headers: Object.fromEntries(headers.entries()),
          redirect: 'manual',
          dispatcher: this.agent,
        })) as unknown as Response)
      : await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const set of res.headers.getSetCookie()) await this.jar.setCookie(set, url);
    return res;
  }

  /** Posts an HTML form. */
  postForm(url: string, fields: Record<string, string>, init: { origin?: string | null } = {}): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      body: new URLSearchParams(fields),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      ...init,
    });
  }

  /** Posts JSON. */
  postJson(url: string, body: unknown, init: { origin?: string | null } = {}): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
      ...init,
    });
  }

  /** The value of a cookie for `url`. */
  async cookie(url: string, name: string): Promise<string | undefined> {
    return (await this.jar.getCookies(url)).find((c) => c.key === name)?.value;
  }
}

/** A browser with a session: `login` logged in through POST {base}/v3/login (a test failure unless 200). */
export async function loggedInBrowser(base: string, login: string, password: string): Promise<Browser> {
  const b = new Browser(new URL(base).origin);
  const res = await b.postJson(`${base}/v3/login`, { login, password });
  if (res.status !== 200) throw new Error(`POST /v3/login as ${login}: ${res.status} ${await res.text()}`);
  return b;
}
