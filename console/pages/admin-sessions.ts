/**
 * Script of the sessions of all users (worker/src/pages/overview-pages.ts): GET /v4/sessions by a
 * login substring, 20 a page (the search kept in the address), and End with a confirmation in the
 * row, through DELETE /v4/users/{userId}/sessions/{sessionId}.
 */
import '../../worker/src/pages/admin-texts.js';
import '../../worker/src/pages/overview-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, sessionColumns, t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showError, showMessage, whileBusy } from '../ui.js';
import { given, showPager, table } from './admin-common.js';

interface AccountSession {
  id: string;
  kind: 'cookie' | 'oauth';
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  authMethod: string | null;
  current: boolean;
  user: { id: string; login: string; displayName: string };
}

const PAGE_SIZE = 20;

const sessions: PageScript = async (ctx) => {
  const region = byId('all-sessions-region');
  const message = byId('all-sessions-message');
  const pager = byId('all-sessions-pager');
  const prev = byId<HTMLButtonElement>('all-sessions-prev');
  const next = byId<HTMLButtonElement>('all-sessions-next');
  const login = byId<HTMLInputElement>('all-sessions-login');
  const fromUrl = new URLSearchParams(location.search);
  login.value = fromUrl.get('login') ?? '';
  let offset = Math.max(0, Number(fromUrl.get('offset')) || 0);

  /** The End button of a row: asks in the row first, then ends the session and reloads the page. */
  const endControl = (s: AccountSession): HTMLElement => {
    const started = formatDate(s.createdAt);
    const box = el('div', {});
    const end = el(
      'button',
      { type: 'button', class: 'danger', 'aria-label': t('sessions.endNamed', { date: started }) },
      t('sessions.end'),
    );
    end.addEventListener('click', () => {
      const question = el('p', {}, t('allSessions.confirm', { login: s.user.login, date: started }));
      const yes = el('button', { type: 'button', class: 'danger' }, t('allSessions.confirmYes'));
      const no = el('button', { type: 'button', class: 'secondary' }, t('allSessions.cancel'));
      no.addEventListener('click', () => {
        box.replaceChildren(end);
        end.focus();
      });
      yes.addEventListener(
        'click',
        () =>
          void whileBusy(yes, async () => {
            showMessage(message, null);
            try {
              const path = `/v4/users/${encodeURIComponent(s.user.id)}/sessions/${encodeURIComponent(s.id)}`;
              await api(path, { method: 'DELETE' });
            } catch (err) {
              showError(message, err);
              return;
            }
            await render();
            showMessage(message, 'success', t('allSessions.ended', { login: s.user.login }));
          }),
      );
      box.replaceChildren(question, el('p', { class: 'actions' }, yes, no));
      yes.focus();
    });
    add(box, end);
    return box;
  };

  const render = async () => {
    region.replaceChildren();
    pager.hidden = true;
    const q = new URLSearchParams();
    const filter = given(login);
    if (filter) q.set('login', filter);
    if (offset) q.set('offset', String(offset));
    history.replaceState(null, '', `${location.pathname}${q.size ? `?${q}` : ''}`);
    q.set('limit', String(PAGE_SIZE));
    const page = await loading(region, () =>
      api<{ items: AccountSession[]; total: number; offset: number }>(`/v4/sessions?${q}`),
    );
    if (!page) return;
    if (page.items.length === 0) return add(region, el('p', {}, t('allSessions.empty')));
    const rows = page.items.map((s) => [
      el('a', { href: `${ctx.base}/admin/user?id=${encodeURIComponent(s.user.id)}` }, s.user.login),
      formatDate(s.createdAt),
      formatDate(s.lastSeenAt),
      formatDate(s.expiresAt),
      s.userAgent ?? '',
      `${t(`kind.${s.kind}`)}, ${t(`method.${s.authMethod ?? 'unknown'}`)}`,
      s.current ? t('sessions.current') : endControl(s),
    ]);
    const caption = t('allSessions.caption', {
      from: page.offset + 1,
      to: page.offset + page.items.length,
      total: page.total,
    });
    add(region, table(caption, [t('allSessions.user'), ...sessionColumns()], rows));
    showPager(page, prev, next, pager);
  };

  onSubmit(byId<HTMLFormElement>('all-sessions-search'), message, async () => {
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

export const SESSIONS_SCRIPTS: Record<string, PageScript> = { 'admin-sessions': sessions };
