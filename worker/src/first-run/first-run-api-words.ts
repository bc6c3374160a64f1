/**
 * The words of the first run (FIRST_RUN_PATH) in the API description (routes.ts): their summaries and descriptions.
 * The document is generated at build time on the Node host (architecture.md §10), so the edge script needs none of
 * them: wrangler.toml's [alias] replaces this module there with worker/edge-aliases/first-run-api-words.js (empty
 * strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
import { FIRST_RUN_CODE_TRIES } from './code.js';

const DESCRIPTION = [
  'While no administrator exists, creates the first one: no login needed, so only a client on the',
  "service's machine may use it: the client address must be loopback (Node host: the socket's peer;",
  "edge host: the CF-Connecting-IP of `wrangler dev`, so never in production), the URL's host a",
  'loopback name (no DNS rebinding) and no proxy header (Forwarded, X-Forwarded-For, X-Forwarded-Host,',
  'X-Real-IP, True-Client-IP, X-Client-IP, CF-Connecting-IP on Node, ...) present. Otherwise 403. 404',
  'once an administrator exists (then `npm run ops` is the way back to a locked-out or forgotten one).',
].join(' ');

export const W: Record<string, string> = {
  d1:
    'the one-time code that `npm start` (or `npm run dev:edge`) printed at start (docs/security.md, "First ' +
    'administrator")',
  d2: 'when sent, must equal password',
  s3: 'First-run page: the form that creates the first administrator',
  s4: 'Create the first administrator (first-run form post)',
  get: DESCRIPTION,
  post: [
    DESCRIPTION,
    'The form post must be same-origin (Origin, or `Origin: null` with `Sec-Fetch-Site: same-origin` as',
    "Chromium sends under the page's no-referrer policy, else Sec-Fetch-Site; a client that sends none,",
    "such as curl, is no browser and cannot be led into a cross-site post); a browser's refused post gets",
    'an HTML page. It must carry the one-time code printed at start (403 when missing or wrong, nothing',
    `changed; 429 after ${FIRST_RUN_CODE_TRIES} wrong codes, until a restart issues a new one).`,
    'The password must pass the password policy (422 PASSWORD_POLICY). ' +
      'The creation is audited (user.created, via first-run).',
    'A browser (Accept: text/html) gets HTML pages, other clients JSON.',
  ].join(' '),
};
