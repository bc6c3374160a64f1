/**
 * The console's one bundle (built by scripts/build-console.mjs): error tracking, the session check
 * of the page (`data-auth`), the header (user, sign-out, administrator links) and the page's script.
 * `<body data-ready>` is set once the page is wired (true) or failed to start (error).
 */
import { ApiError, api, setRefusalHandler, setRoot } from './api.js';
import type { Me, PageContext } from './context.js';
import { installDsnShortcut, showDsnDialog, startErrorTracking } from './errtrack.js';
import { t } from './i18n.js';
import { PAGE_SCRIPTS } from './pages.js';
import { resolveRefusals } from './step-up.js';
import { byId, showError } from './ui.js';

const body = document.body;
const root = body.dataset.root ?? '';
const base = body.dataset.console ?? `${root}/ui`;
setRoot(root);
setRefusalHandler(resolveRefusals(base));

const routeTexts = { tunnel: (path: string) => t('errtrack.tunnel', { path }), direct: t('errtrack.direct') };
installDsnShortcut(routeTexts);
document.getElementById('errtrack-show-dsn')?.addEventListener('click', () => showDsnDialog(routeTexts));
void startErrorTracking(root);

/** The signed-in account, or null without a (live) session. */
async function currentUser(): Promise<Me | null> {
  try {
    return await api<Me>('/v4/users/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/** Shows who is signed in, the sign-out button, and the links their role may use (`data-role`). */
function showHeader(me: Me): void {
  const user = byId('console-user');
  user.textContent = me.displayName || me.login;
  user.hidden = false;
  for (const item of document.querySelectorAll<HTMLElement>('[data-role]')) {
    item.hidden = !(item.dataset.role ?? '').split(' ').includes(me.role);
  }
  const signout = byId<HTMLButtonElement>('console-signout');
  signout.hidden = false;
  signout.addEventListener('click', async () => {
    signout.disabled = true;
    try {
      await api('/v3/logout', { method: 'POST' });
    } catch (err) {
      // Already ended is fine (204); anything else is shown, and the visitor goes on to sign in.
      if (!(err instanceof ApiError && err.status === 401)) showError(byId('page-message'), err);
    }
    location.assign(`${base}/login`);
  });
}

/**
 * The sign-in page, coming back here afterwards. A refusal the service sent to the front end
 * (`auth_error`, e.g. of an OIDC login, when DEFAULT_FRONTEND_URL is the console) goes along, to be
 * shown there, and stays out of the way back.
 */
function signInUrl(): string {
  const here = new URLSearchParams(location.search);
  const target = new URLSearchParams();
  for (const name of ['auth_error', 'auth_error_description']) {
    const value = here.get(name);
    if (value !== null) target.set(name, value);
    here.delete(name);
  }
  const query = here.toString();
  target.set('next', location.pathname + (query ? `?${query}` : ''));
  return `${base}/login?${target.toString()}`;
}

/**
 * The page's language becomes the account's (its mails follow it, docs/mail.md "Language") when the user
 * picked it with the switch (`lang` in the address): a choice, never a guess from the browser's languages.
 * A preference: a failure to save it changes nothing on the page.
 */
function rememberLanguage(me: Me): void {
  const lang = document.documentElement.lang;
  if (lang !== 'ru' && lang !== 'en') return;
  if (me.language === lang || !new URLSearchParams(location.search).has('lang')) return;
  void api('/v4/users/me', { method: 'PATCH', json: { language: lang }, resolve: false }).catch(() => {});
}

async function start(): Promise<void> {
  const auth = body.dataset.auth;
  const message = byId('page-message');
  let me: Me | null = null;
  if (auth === 'required' || auth === 'optional') {
    me = await currentUser();
    if (!me && auth === 'required') {
      location.replace(signInUrl());
      return;
    }
    if (me) {
      showHeader(me);
      rememberLanguage(me);
    } else byId('console-nav').hidden = true;
  }
  const ctx: PageContext = { root, base, me, message };
  const script = PAGE_SCRIPTS[body.dataset.page ?? ''];
  if (script) await script(ctx);
}

start().then(
  () => body.setAttribute('data-ready', 'true'),
  (err: unknown) => {
    showError(byId('page-message'), err);
    body.setAttribute('data-ready', 'error');
  },
);
