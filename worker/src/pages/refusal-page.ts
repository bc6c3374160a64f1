/**
 * A browser's refused form post (CSRF, architecture.md §4) gets a page in the visitor's language
 * with the next step, not problem+json: a person sees it, not a program. API clients (no form
 * navigation) still get the problem.
 */
import type { Context } from 'hono';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { chooseLang, type Lang } from './texts.js';
import type { AppEnv } from '../http/context.js';
import { htmlDocument } from '../http/html.js';
import { requestHeader } from '../http/node-messages.js';
import type { ProblemError } from '../http/problem.js';

/** No script, no form, nothing from elsewhere. */
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const TEXTS: Record<Lang, { title: string; why: string; next: string; link: string }> = {
  en: {
    title: 'Form refused',
    why:
      'This form was sent from another site, or from a page that does not show where it comes from, so it ' +
      'was refused: nothing was changed. This protects your account from forms of other sites.',
    next: 'Open the page yourself, in this browser, and send the form again from there:',
    link: 'open the page',
  },
  ru: {
    title: 'Форма отклонена',
    why:
      'Эта форма отправлена с другого сайта или со страницы, которая не сообщает, откуда она, поэтому ' +
      'отклонена: ничего не изменено. Так ваша учётная запись защищена от форм других сайтов.',
    next: 'Откройте страницу сами, в этом браузере, и отправьте форму оттуда:',
    link: 'открыть страницу',
  },
};

/** Whether the request is a browser's form post (a navigation, or a form that asks for HTML). */
function isBrowserFormPost(c: Context<AppEnv>): boolean {
  if (requestHeader(c, 'Sec-Fetch-Mode') === 'navigate') return true;
  const type = requestHeader(c, 'Content-Type') ?? '';
  const form = type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
  return form && (requestHeader(c, 'Accept') ?? '').includes('text/html');
}

/**
 * The HTML answer to a refused browser form post, or undefined when the problem is no CSRF refusal
 * or the client no browser. `page` is where to start again (the form's own page, or the console).
 */
export function csrfRefusalPage(c: Context<AppEnv>, problem: ProblemError, page: string): Response | undefined {
  if (problem.extensions.reason !== 'csrf' || !isBrowserFormPost(c)) return undefined;
  const lang = chooseLang(undefined, requestHeader(c, 'Accept-Language'));
  const t = TEXTS[lang];
  const doc = htmlDocument({
    title: t.title,
    lang,
    head: html`<style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }
    </style>`,
    body: html`<h1>${t.title}</h1>
<p>${t.why}</p>
<p>${t.next} <a href="${page}">${t.link}</a>.</p>`,
  });
  // Every part is synchronous: the document is a string, not a promise.
  return c.html(doc as HtmlEscapedString, problem.status as 403, {
    'Content-Security-Policy': CSP,
    'Content-Language': lang,
    'Cache-Control': 'no-store',
    Vary: 'Accept-Language',
  });
}
