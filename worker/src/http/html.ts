/** The service's few HTML pages (docs, error tracking): one document shell, escaped by hono/html. */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/**
 * A complete HTML document. Every interpolated value is escaped by `html` (only the `head` and
 * `body` fragments, themselves built with `html`, go in as markup).
 */
export function htmlDocument(o: { title: string; head: Html; body: Html; root?: string; lang?: string }): Html {
  return html`<!doctype html>
<html lang="${o.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title}</title>
${o.head}
</head>
<body${o.root === undefined ? '' : html` data-root="${o.root}"`}>
${o.body}
</body>
</html>`;
}
