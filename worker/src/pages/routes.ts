/**
 * The web console's pages, ROOT_PATH + /ui/... (architecture.md §8): HTML shells rendered here in
 * the visitor's language, whose one script calls the public API with the session cookie. Not API
 * operations, so not in the OpenAPI description (docs/console.md).
 */
import { setCookie } from 'hono/cookie';
import { browserPageCsp } from '../errtrack/page-csp.js';
import type { App } from '../http/context.js';
import { CONSOLE_PATH, renderPage, type PageRender } from './page.js';
import { CONSOLE_PAGES } from './pages.js';
import { chooseLang, isLang, loadTexts, text } from './texts.js';
import { ProblemError } from '../http/problem.js';
import { requestHeader } from '../http/node-messages.js';
import { readCookie } from '../http/cookies.js';

const LANG_COOKIE = 'auth_console_lang';
const YEAR_S = 365 * 86_400;

/** Registers GET ROOT_PATH/ui (to /ui/) and every page of CONSOLE_PAGES. */
export function registerConsole(app: App): void {
  app.get(CONSOLE_PATH, (c) => c.redirect(`${c.var.deps.config.env.get('ROOT_PATH')}${CONSOLE_PATH}/`, 301));
  for (const page of CONSOLE_PAGES) {
    app.get(`${CONSOLE_PATH}/${page.path}`, async (c) => {
      const env = c.var.deps.config.env;
      // The texts come with the console's build, like its script (texts.ts): without them, no page.
      if (!(await loadTexts(c.var.deps.staticFiles))) {
        const detail = 'the console is not built: run `npm run build:console` (scripts/build-console.mjs)';
        throw new ProblemError('SERVICE_UNAVAILABLE', { detail });
      }
      const root = env.get('ROOT_PATH');
      const base = `${root}${CONSOLE_PATH}`;
      // The language switch's choice is kept in a cookie of the console's path (a preference only).
      const chosen = c.req.query('lang');
      if (isLang(chosen)) {
        setCookie(c, LANG_COOKIE, chosen, {
          path: base,
          sameSite: 'Lax',
          httpOnly: true,
          maxAge: YEAR_S,
          secure: new URL(c.req.url).protocol === 'https:',
        });
      }
      const lang = chooseLang(
        isLang(chosen) ? chosen : readCookie(c, LANG_COOKIE),
        requestHeader(c, 'Accept-Language'),
      );
      const r: PageRender = {
        lang,
        t: (key, vars) => text(lang, key, vars),
        root,
        base,
        url: new URL(c.req.url),
        config: c.var.scope.config,
        db: c.var.scope.db,
      };
      const doc = await renderPage(r, page, CONSOLE_PAGES, {
        title: env.get('PROJECT_NAME'),
        staticBase: `${root}${env.get('STATIC_PATH')}`,
      });
      return c.html(doc, 200, {
        'Content-Security-Policy': browserPageCsp(env),
        // Pages carry no personal data (the script fetches it), but their language varies.
        'Cache-Control': 'no-cache',
        Vary: 'Accept-Language, Cookie',
        'Content-Language': lang,
        ...(c.var.scope.config.get('PROFILE') ? { 'Document-Policy': 'js-profiling' } : {}),
      });
    });
  }
}
