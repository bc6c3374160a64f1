/**
 * Script of the notifications page (worker/src/pages/admin-pages.ts): the mail history of
 * GET /v4/notifications, filtered by status, kind and recipient, 20 a page, newest first.
 */
import '../../worker/src/pages/admin-texts.js';
import '../../worker/src/pages/mail-texts.js';
import { ApiError, api, rootPath, type Problem } from '../api.js';
import { readMail } from '../eml.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, clip, el, loading, onSubmit, showError, whileBusy } from '../ui.js';
import { facts, given, showPager, table } from './admin-common.js';

interface Notification {
  id: string;
  kind: string;
  userLogin: string | null;
  recipient: string | null;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
}

const PAGE_SIZE = 20;

/**
 * A mail of the development outbox: when it was written, "Open the mail" (shown on the page by `viewer`) and
 * a link to download its .eml (administrators only).
 */
function outboxCell(n: Notification, viewer: HTMLElement): Node {
  const href = `${rootPath()}/v4/notifications/${encodeURIComponent(n.id)}/message`;
  const open = el('button', { type: 'button', class: 'secondary', 'aria-controls': viewer.id }, t('notif.openMail'));
  open.addEventListener('click', () => void whileBusy(open, () => showMail(href, viewer)));
  return el(
    'span',
    {},
    formatDate(n.sentAt),
    ' ',
    open,
    ' ',
    el('a', { href, download: `${n.id}.eml` }, t('notif.downloadMail')),
  );
}

/** Fetches the .eml at `href` and shows its headers and text part in `viewer` (console/eml.ts reads it). */
async function showMail(href: string, viewer: HTMLElement): Promise<void> {
  let bytes: Uint8Array;
  try {
    const res = await fetch(href, {
      headers: { Accept: 'message/rfc822', 'X-Requested-With': 'XMLHttpRequest' },
      credentials: 'same-origin',
      cache: 'no-store',
    });
    if (!res.ok) throw new ApiError(res.status, ((await res.json().catch(() => ({}))) ?? {}) as Problem, res.headers);
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch (err) {
    viewer.hidden = false;
    viewer.replaceChildren();
    const message = el('div', { class: 'message' });
    showError(message, err instanceof ApiError ? err : new ApiError(0, {}, undefined, t('error.network')));
    add(viewer, message);
    return;
  }
  const mail = readMail(bytes);
  const date = Number.isNaN(Date.parse(mail.date)) ? mail.date : formatDate(new Date(mail.date).toISOString());
  viewer.replaceChildren(
    el('h2', { id: `${viewer.id}-title` }, t('notif.mail.title')),
    el(
      'dl',
      { class: 'facts' },
      ...facts([
        [t('notif.mail.from'), mail.from],
        [t('notif.mail.to'), mail.to],
        [t('notif.mail.subject'), mail.subject],
        [t('notif.mail.date'), date],
      ]),
    ),
    // The mail's own words, in its language: quoted as the mail has them.
    el('pre', { class: 'mail-text' }, mail.text),
  );
  viewer.hidden = false;
  viewer.focus();
}

/**
 * Why a mail failed, in the page's language where the service's reason is known by its data (an account
 * without an address is never tried); else the mail server's or the outbox's own words, as code.
 */
function lastError(n: Notification): Node | string | null {
  if (n.status === 'given_up' && !n.recipient) return t('notif.reason.noAddress');
  return n.lastError ? el('code', {}, n.lastError) : null;
}

const notifications: PageScript = async () => {
  const region = byId('notif-region');
  const pager = byId('notif-pager');
  const prev = byId<HTMLButtonElement>('notif-prev');
  const next = byId<HTMLButtonElement>('notif-next');
  const fields = ['status', 'kind', 'recipient'].map((f) => byId<HTMLInputElement>(`notif-${f}`));
  let offset = 0;
  // Where "Open the mail" shows one (after the table).
  const viewer = el('section', {
    id: 'notif-mail',
    class: 'card',
    hidden: true,
    tabindex: '-1',
    'aria-labelledby': 'notif-mail-title',
  });
  const render = async () => {
    region.replaceChildren();
    viewer.hidden = true;
    pager.hidden = true;
    const q = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
    for (const f of fields) {
      const v = given(f);
      if (v) q.set(f.name, v);
    }
    const page = await loading(region, () =>
      api<{ items: Notification[]; total: number; offset: number }>(`/v4/notifications?${q}`),
    );
    if (!page) return;
    if (page.items.length === 0) return add(region, el('p', {}, t('notif.empty')));
    const none = t('user.none');
    const rows = page.items.map((n) => [
      formatDate(n.createdAt),
      t(`notif.kind.${n.kind}`),
      n.userLogin ? clip(n.userLogin) : none,
      n.recipient ? clip(n.recipient) : none,
      t(`notif.status.${n.status}`),
      String(n.attempts),
      lastError(n) ?? none,
      n.status === 'outbox' ? outboxCell(n, viewer) : formatDate(n.sentAt) || none,
    ]);
    add(
      region,
      table(
        t('notif.caption', { from: page.offset + 1, to: page.offset + page.items.length, total: page.total }),
        [
          t('notif.created'),
          t('notif.kind'),
          t('notif.user'),
          t('notif.recipient'),
          t('notif.status'),
          t('notif.attempts'),
          t('notif.lastError'),
          t('notif.sentAt'),
        ],
        rows,
      ),
    );
    add(region, viewer);
    showPager(page, prev, next, pager);
  };
  onSubmit(byId<HTMLFormElement>('notif-search'), byId('notif-message'), async () => {
    offset = 0;
    await render();
  });
  for (const [button, delta] of [
    [prev, -PAGE_SIZE],
    [next, PAGE_SIZE],
  ] as const) {
    button.addEventListener(
      'click',
      () =>
        void whileBusy(button, async () => {
          offset = Math.max(0, offset + delta);
          await render();
        }),
    );
  }
  await render();
};

export const NOTIFICATIONS_SCRIPTS: Record<string, PageScript> = { 'admin-notifications': notifications };
