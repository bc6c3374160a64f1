/**
 * Script of the administrator's overview (worker/src/pages/overview-pages.ts): one call to
 * GET /v4/admin/overview, shown as cards (a count, the first few items, a link to the page behind
 * it); and where administrators land after signing in (`landingPage`).
 */
import '../../worker/src/pages/admin-texts.js';
import '../../worker/src/pages/overview-texts.js';
import { api } from '../api.js';
import type { Me, PageContext, PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, el, loading } from '../ui.js';

interface Listed {
  count: number;
  items: { id: string; login: string; at: string | null }[];
}

/** GET /v4/admin/overview (the API's `AdminOverview`). */
interface Overview {
  generatedAt: string;
  last24h: {
    failedLogins: {
      count: number;
      items: { at: string; login: string | null; userId: string | null; ip: string | null }[];
    };
    lockEvents: { count: number; logins: number };
    throttledAddresses: number;
    mailGivenUp: number;
  };
  now: {
    activeSessions: number;
    lockedLogins: {
      count: number;
      items: { login: string; source: 'local' | 'ldap'; until: string; userId: string | null }[];
    };
    blocked: Listed;
    passwordExpired: Listed;
    inactiveSoon: Listed;
    mailFailing: number;
    mailFailures: { id: string; kind: string; userLogin: string | null; lastError: string | null }[];
  };
  logStore: {
    state: 'configured' | 'embedded';
    size: { bytes: number; maxBytes: number; percent: number; warning: boolean; measuredAt: string } | null;
  };
  mail: { state: 'configured' | 'not_configured'; detail: string | null };
}

/**
 * Where a sign-in goes on: the page asked for (`next`), except that administrators who asked for
 * nothing in particular (the console's home) land on the overview.
 */
export async function landingPage(ctx: PageContext, next: string | undefined): Promise<string> {
  const home = `${ctx.base}/`;
  if (next !== undefined && next !== home) return next;
  try {
    const me = await api<Me>('/v4/users/me');
    if (me.role === 'admin') return `${ctx.base}/admin/overview`;
  } catch {
    // The profile is the way on whatever happened here; it shows its own errors.
  }
  return home;
}

const overview: PageScript = async (ctx) => {
  const region = byId('overview-region');
  const data = await loading(region, () => api<Overview>('/v4/admin/overview'));
  if (!data) return;
  byId('overview-updated').textContent = t('overview.updated', { date: formatDate(data.generatedAt) });
  const href = (path: string) => `${ctx.base}/${path}`;
  const userLink = (login: string, id: string | null) =>
    id ? el('a', { href: href(`admin/user?id=${encodeURIComponent(id)}`) }, login) : login;
  const list = (items: Array<Node | string>) =>
    items.length === 0 ? el('p', {}, t('overview.none')) : el('ul', {}, ...items.map((i) => el('li', {}, i)));
  /** One card: a heading, a count (when there is one), what follows it, and the link to its page. */
  const card = (id: string, title: string, count: number | null, body: Node[], link: [string, string][]) =>
    el(
      'section',
      { class: 'card', id: `overview-${id}`, 'aria-labelledby': `overview-${id}-title` },
      el('h2', { id: `overview-${id}-title` }, title),
      count === null ? null : el('p', { class: 'count' }, String(count)),
      ...body,
      ...link.map(([path, label]) => el('p', {}, el('a', { href: href(path) }, label))),
    );
  /** An item: a text with `{login}` made a link to the account. */
  const withLogin = (key: string, login: string, id: string | null, vars: Record<string, string>) => {
    const [before, after] = t(key, { ...vars, login: '\u0000' }).split('\u0000');
    return el('span', {}, before ?? '', userLink(login, id), after ?? '');
  };
  const accounts = (l: Listed, key: string) =>
    list(l.items.map((i) => withLogin(key, i.login, i.id, { date: formatDate(i.at) })));

  const { last24h, now } = data;
  add(
    region,
    el(
      'div',
      { class: 'grid' },
      card(
        'failed',
        t('overview.failed'),
        last24h.failedLogins.count,
        [
          el(
            'p',
            {},
            t('overview.failedNote', {
              locks: last24h.lockEvents.count,
              logins: last24h.lockEvents.logins,
              throttled: last24h.throttledAddresses,
            }),
          ),
          list(
            last24h.failedLogins.items.map((f) =>
              withLogin('overview.failedItem', f.login ?? t('overview.unknownLogin'), f.userId, {
                date: formatDate(f.at),
                ip: f.ip ?? t('overview.unknownIp'),
              }),
            ),
          ),
        ],
        // The audit page opens on the failures themselves (its search runs at once).
        [['admin/audit?type=user_activity&outcome=failure', t('overview.failedLink')]],
      ),
      card(
        'locked',
        t('overview.locked'),
        now.lockedLogins.count,
        [
          list(
            now.lockedLogins.items.map((l) =>
              withLogin('overview.lockedItem', l.login, l.userId, { date: formatDate(l.until) }),
            ),
          ),
        ],
        [['admin/users', t('overview.lockedLink')]],
      ),
      card(
        'sessions',
        t('overview.sessions'),
        now.activeSessions,
        [],
        [['admin/sessions', t('overview.sessionsLink')]],
      ),
      card(
        'blocked',
        t('overview.blocked'),
        now.blocked.count,
        [accounts(now.blocked, 'overview.blockedItem')],
        [['admin/users?status=blocked', t('overview.blockedLink')]],
      ),
      card(
        'expired',
        t('overview.expired'),
        now.passwordExpired.count,
        [accounts(now.passwordExpired, 'overview.expiredItem')],
        [['admin/users', t('overview.usersLink')]],
      ),
      card(
        'soon',
        t('overview.soon'),
        now.inactiveSoon.count,
        [accounts(now.inactiveSoon, 'overview.soonItem')],
        [['admin/users', t('overview.usersLink')]],
      ),
      card(
        'mail',
        t('overview.mail'),
        now.mailFailing + last24h.mailGivenUp,
        [
          el('p', {}, t(`overview.mail.${data.mail.state}`)),
          el('p', {}, t('overview.mailFailing', { n: now.mailFailing, given: last24h.mailGivenUp })),
          list(
            // The mail server's own words, quoted as code (not the page's language).
            now.mailFailures.map((m) =>
              el(
                'span',
                {},
                t('overview.mailItem', { kind: t(`notif.kind.${m.kind}`), login: m.userLogin ?? t('user.none') }),
                ' ',
                m.lastError ? el('code', {}, m.lastError) : t('user.none'),
              ),
            ),
          ),
        ],
        [
          ['admin/notifications', t('overview.mailLink')],
          ['admin/settings', t('overview.mailSettings')],
        ],
      ),
      card(
        'store',
        t('overview.store'),
        null,
        [el('p', {}, t(`overview.store.${data.logStore.state}`)), ...storeSize(data.logStore.size)],
        [['admin/audit', t('overview.storeLink')]],
      ),
    ),
  );
};

/** The audit store against its size bound (docs/audit-logs-embedded.md, "Size bound"). */
function storeSize(size: Overview['logStore']['size']): HTMLElement[] {
  if (!size) return [];
  const mb = (b: number) => String(Math.round((b / 1048576) * 10) / 10);
  const line = t('overview.store.size', {
    percent: size.percent,
    mb: mb(size.bytes),
    maxMb: mb(size.maxBytes),
    date: formatDate(size.measuredAt),
  });
  return [
    el('p', { id: 'overview-store-size' }, line),
    ...(size.warning ? [el('p', { class: 'warning', role: 'status' }, t('overview.store.sizeWarning'))] : []),
  ];
}

export const OVERVIEW_SCRIPTS: Record<string, PageScript> = { 'admin-overview': overview };
