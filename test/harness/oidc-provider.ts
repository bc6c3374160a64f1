/**
 * A real OpenID provider for the tests: `oidc-provider` on loopback, behind a small pass-through
 * proxy that can tamper with the ID token of token responses (to prove signatures are checked) or
 * refuse connections (provider down). The issuer is the proxy's URL, so all traffic goes through it.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import './quiet-oidc-provider.js';
import Provider from 'oidc-provider';
import type { Browser } from './browser.js';
import { freePort } from './hosts.js';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Replace the ID token payload's `name` in token responses (signature no longer matches). */
  tamper: boolean;
  /** Answer every request with a dropped connection. */
  down: boolean;
  /** Paths requested through the proxy, in order. */
  requests: string[];
  /** The `amr` and `acr` the provider's login of an account (by `sub`) reports in its ID tokens. */
  authContext: Record<string, { amr?: string[]; acr?: string }>;
  /** The `groups` claim (scope profile) of an account (by `sub`) in its ID tokens; none when absent. */
  groups: Record<string, string[]>;
  /** Whether the provider still takes authorization code `code` (issued, not used, not expired). */
  codeValid(code: string): Promise<boolean>;
  close(): Promise<void>;
}

export async function startTestProvider(redirectUris: string[], codeTtlSeconds = 60): Promise<TestProvider> {
  const proxyPort = await freePort();
  const issuer = `http://127.0.0.1:${proxyPort}`;
  const clientId = 'auth-service';
  const clientSecret = 'client-secret-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          preferred_username: id,
          name: `User ${id}`,
          email: `${id}@example.org`,
          ...(state.groups[id] ? { groups: state.groups[id] } : {}),
        }),
      };
    },
    claims: { openid: ['sub', 'acr', 'amr'], profile: ['preferred_username', 'name', 'groups'], email: ['email'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    acrValues: ['urn:test:pwd', 'urn:test:mfa'],
    pkce: { required: () => true },
    ttl: { AuthorizationCode: codeTtlSeconds },
    cookies: { keys: ['test-cookie-key-0123456789'] },
  });
  provider.on('server_error', (_ctx: unknown, err: Error) => console.error('oidc-provider server_error', err));
  // The development login page reports no authentication methods: the login gets the account's
  // `amr` and `acr`, as from a provider that asked for a second factor (RFC 8176).
  const finished = provider.interactionFinished.bind(provider);
  provider.interactionFinished = (req, res, result, options) => {
    const login = (result as { login?: { accountId: string } }).login;
    if (login) Object.assign(login, state.authContext[login.accountId] ?? {});
    return finished(req, res, result, options);
  };
  const backend: Server = provider.listen(0);
  await new Promise<void>((r) => backend.once('listening', () => r()));
  const backendPort = (backend.address() as AddressInfo).port;

  const state: TestProvider = {
    issuer,
    clientId,
    clientSecret,
    tamper: false,
    down: false,
    requests: [],
    authContext: {},
    groups: {},
    // The check its token endpoint makes: found, not used and not expired.
    codeValid: async (code) => (await provider.AuthorizationCode.find(code))?.isValid === true,
    close: async () => {
      await new Promise((r) => proxy.close(r));
      await new Promise((r) => backend.close(r));
    },
  };
  const proxy = createServer((req, res) => {
    state.requests.push(new URL(req.url ?? '/', issuer).pathname);
    if (state.down) {
      req.socket.destroy();
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port: backendPort, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (d: Buffer) => chunks.push(d));
        up.on('end', () => {
          let body = Buffer.concat(chunks);
          const headers = { ...up.headers };
          if (state.tamper && req.url?.startsWith('/token') && up.statusCode === 200) {
            const json = JSON.parse(body.toString()) as { id_token: string };
            const [h, p, s] = json.id_token.split('.');
            const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
            payload.name = 'Mallory';
            json.id_token = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
            body = Buffer.from(JSON.stringify(json));
            delete headers['content-length'];
          }
          res.writeHead(up.statusCode ?? 502, headers);
          res.end(body);
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(proxyPort, '127.0.0.1', () => r()));
  return state;
}

/**
 * Starts a login at the service (`serviceUrl`: its base URL with ROOT_PATH) through provider record
 * `name` and goes through the provider's pages (login, consent) as a browser would, logging in as
 * `user` (the test provider's `sub` and `preferred_username`); returns the callback URL the provider
 * sends back, without following it. `abort` cancels at the provider (access_denied).
 */
export async function throughProvider(
  b: Browser,
  serviceUrl: string,
  name: string,
  user: string,
  o: { abort?: boolean } = {},
): Promise<string> {
  const start = await b.fetch(`${serviceUrl}/v3/oidc/login/${name}`);
  if (start.status !== 302)
    throw new Error(`the login did not redirect to the provider: ${start.status} ${await start.text()}`);
  let url = start.headers.get('location')!;
  for (let i = 0; i < 20; i++) {
    if (url.startsWith(serviceUrl)) return url;
    const res = await b.fetch(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`unexpected provider page at ${url}: ${res.status} ${html.slice(0, 200)}`);
    const formUrl = new URL(action, url).href;
    const hidden = Object.fromEntries(
      [...html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    if (o.abort) {
      const abortHref = /href="([^"]*\/abort)"/.exec(html)?.[1] ?? `${new URL(formUrl).pathname}/abort`;
      const aborted = await b.fetch(new URL(abortHref, url).href);
      url = new URL(aborted.headers.get('location')!, url).href;
      continue;
    }
    const fields = hidden.prompt === 'login' ? { ...hidden, login: user, password: 'any-password' } : hidden;
    const posted = await b.postForm(formUrl, fields, { origin: new URL(url).origin });
    url = new URL(posted.headers.get('location')!, formUrl).href;
  }
  throw new Error('too many redirects');
}
