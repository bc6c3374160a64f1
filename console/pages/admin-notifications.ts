/**
 * Script of the notifications page (worker/src/console/admin-pages.ts): the mail history of
 * GET /v4/notifications, filtered by status, kind and recipient, 20 a page, newest first.
 */
import '../../worker/src/console/admin-texts.js';
import '../../worker/src/console/mail-texts.js';
import { api, rootPath } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, clip, el, loading, onSubmit, whileBusy } from '../ui.js';
import { given, showPager, table } from './admin-common.js';

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

/** A mail of the development outbox: when it was written, and a link to its .eml (administrators only). */
function outboxLink(n: Notification): Node {
  const href = `${rootPath()}/v4/notifications/${encodeURIComponent(n.id)}/message`;
  return el('span', {}, formatDate(n.sentAt), ' ', el('a', { href, download: `${n.id}.eml` }, t('notif.openMail')));
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
  const render = async () => {
    region.replaceChildren();
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
      n.status === 'outbox' ? outboxLink(n) : formatDate(n.sentAt) || none,
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
