/**
 * The console's page model and its one document shell (architecture.md §8): landmarks (banner with
 * the section and language navigation, main with the page's h1 and message region, contentinfo),
 * no inline script or style, the error-tracking dialog, and the one bundle (console/main.ts) that
 * runs the page named by `<body data-page>`.
 */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/db.js';
import { errtrackDialog } from '../errtrack/page-csp.js';
import { LANGS, text, type Lang } from './texts.js';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export { CONSOLE_PATH } from '../http/console-path.js';

/** What a page's markup may use: its language, paths, the request's URL and read-only data. */
export interface PageRender {
  lang: Lang;
  /** A text of the dictionary in the page's language. */
  t: (key: string, vars?: Record<string, string | number>) => string;
  /** ROOT_PATH. */
  root: string;
  /** ROOT_PATH + CONSOLE_PATH (no trailing slash). */
  base: string;
  url: URL;
  config: ConfigSnapshot;
  db: Db;
}

/** One page of the console. Register it in pages.ts and its script in console/pages.ts. */
export interface ConsolePage {
  /** `<body data-page>`: the key of its script in console/pages.ts. */
  id: string;
  /** Below CONSOLE_PATH, without a leading slash ('' is the console's home). */
  path: string;
  /** Text key of the page's title (and h1). */
  title: string;
  /**
   * 'required': the script sends a visitor without a session to the sign-in page; 'none': sign-in
   * pages; 'optional': the page works with or without a session (the expired-password change).
   */
  auth: 'required' | 'none' | 'optional';
  /**
   * Shown in the section navigation; `admin`: only to administrators, `audit`: to administrators and
   * auditors (revealed by the script from `data-role`).
   */
  nav?: { label: string; group: 'self' | 'admin' | 'audit' };
  /** The page's content after its h1 and message region. */
  body: (r: PageRender) => Html | Promise<Html>;
}

/** The path of a page, e.g. /api/auth/ui/sessions. */
export function pageHref(base: string, page: Pick<ConsolePage, 'path'>): string {
  return `${base}/${page.path}`;
}

function navigation(r: PageRender, pages: readonly ConsolePage[], current: ConsolePage) {
  const items = pages.filter((p) => p.nav);
  const item = (p: ConsolePage) => {
    const roles = p.nav!.group === 'audit' ? 'admin auditor' : 'admin';
    const mark = p.id === current.id ? html` aria-current="page"` : '';
    return html`<li${p.nav!.group === 'self' ? '' : html` data-role="${roles}" hidden`}
><a href="${pageHref(r.base, p)}"${mark}>${r.t(p.nav!.label)}</a></li>`;
  };
  return html`<nav class="sections" id="console-nav" aria-label="${r.t('nav.label')}"
${current.auth === 'none' ? html` hidden` : ''}>
<ul>${items.map(item)}</ul>
</nav>`;
}

function languageSwitch(r: PageRender) {
  const names: Record<Lang, string> = { ru: 'Русский', en: 'English' };
  const link = (l: Lang) =>
    html`<li><a href="?lang=${l}" lang="${l}" hreflang="${l}"
${l === r.lang ? html` aria-current="true"` : ''}>${names[l]}</a></li>`;
  return html`<nav class="languages" aria-label="${r.t('lang.label')}"><ul>${LANGS.map(link)}</ul></nav>`;
}

/** The complete document of a page. */
export async function renderPage(
  r: PageRender,
  page: ConsolePage,
  pages: readonly ConsolePage[],
  o: { title: string; staticBase: string },
) {
  const title = r.t(page.title);
  const body = await page.body(r);
  return html`<!doctype html>
<html lang="${r.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — ${o.title}</title>
<link rel="stylesheet" href="${o.staticBase}/console/console.css">
</head>
<body data-root="${r.root}" data-console="${r.base}" data-page="${page.id}" data-auth="${page.auth}">
<a class="skip" href="#main">${r.t('skip')}</a>
<header class="top">
<a class="brand" href="${r.base}/">${o.title}</a>
${navigation(r, pages, page)}
<div class="tools">
<span id="console-user" class="user" hidden></span>
<button type="button" id="console-signout" class="link" hidden>${r.t('nav.signout')}</button>
${languageSwitch(r)}
</div>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
<div id="page-message" class="message" hidden></div>
${body}
</main>
<footer class="bottom"><p>${text(r.lang, 'app.title')} · <button type="button" id="errtrack-show-dsn"
class="link">${r.t('errtrack.title')}</button> (Ctrl+Shift+I)</p></footer>
${errtrackDialog({
  title: r.t('errtrack.title'),
  dsn: r.t('errtrack.dsn'),
  route: r.t('errtrack.route'),
  off: r.t('errtrack.off'),
  nowhere: r.t('errtrack.nowhere'),
  close: r.t('errtrack.close'),
})}
<script src="${o.staticBase}/vendor/sentry/sentry.min.js"></script>
<script src="${o.staticBase}/console/console.js"></script>
</body>
</html>`;
}
