/**
 * Scripts of the users pages (worker/src/pages/admin-pages.ts): the list (search, filters, sort,
 * pages, create) and one user (edit, block, unblock, unlock, password reset, super-access with its
 * countdown, sessions, tokens, second factors, delete). Everything through /v4/users (admin only, enforced by the API).
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { Me, PageScript, TokenItem } from '../context.js';
import { formatDate, sessionColumns, t, tokenColumns, tokenLimitsText } from '../i18n.js';
import {
  add,
  agentCell,
  byId,
  clip,
  confirmAction,
  el,
  loading,
  onSubmit,
  showError,
  showMessage,
  whileBusy,
} from '../ui.js';
import { showPolicyProblem, watchPolicy } from './password-check.js';
import { actionButton, facts, given, selectById, showPager, table } from './admin-common.js';
import { wireUserFactors } from './admin-factors.js';

/** An account as the admin API answers (the API's `User`). */
interface User extends Me {
  blockedReason: 'admin' | 'inactivity' | null;
  passwordChangedAt: string | null;
  mustChangePassword: boolean;
  sessionLimit: number | null;
  superAccessUntil: string | null;
  createdAt: string;
}

interface UserPage {
  items: User[];
  total: number;
  limit: number;
  offset: number;
}

const PAGE_SIZE = 20;

/** The account's source in words. */
function sourceText(u: User): string {
  const source = u.source === 'local' ? t('source.local') : t(`source.${u.source}`, { name: u.sourceName ?? '' });
  return u.kind === 'service' ? `${source} · ${t('users.kindService')}` : source;
}

/** A countdown as h:mm:ss or m:ss. */
function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/** Whether failed sign-ins lock the account now. */
function isLocked(u: User): boolean {
  return u.lockedUntil !== null && Date.parse(u.lockedUntil) > Date.now();
}

const list: PageScript = async (ctx) => {
  const region = byId('users-region');
  const message = byId('users-message');
  const form = byId<HTMLFormElement>('users-search');
  const pager = byId('users-pager');
  const prev = byId<HTMLButtonElement>('users-prev');
  const next = byId<HTMLButtonElement>('users-next');
  const fields = ['q', 'role', 'status', 'source', 'kind', 'sort'].map((f) => byId<HTMLInputElement>(`users-${f}`));
  // The search lives in the address (bookmarkable; Back returns to it). An older address's `login`
  // (a prefix) is searched as a substring.
  const fromUrl = new URLSearchParams(location.search);
  if (!fromUrl.has('q') && fromUrl.has('login')) fromUrl.set('q', fromUrl.get('login') ?? '');
  for (const f of fields) f.value = fromUrl.get(f.name) ?? f.value;
  let offset = Math.max(0, Number(fromUrl.get('offset')) || 0);

  const query = () => {
    const q = new URLSearchParams();
    for (const f of fields) if (given(f)) q.set(f.name, f.value.trim());
    if (offset) q.set('offset', String(offset));
    return q;
  };
  const render = async () => {
    region.replaceChildren();
    pager.hidden = true;
    const q = query();
    history.replaceState(null, '', `${location.pathname}${q.size ? `?${q}` : ''}`);
    q.set('limit', String(PAGE_SIZE));
    const page = await loading(region, () => api<UserPage>(`/v4/users?${q}`));
    if (!page) return;
    if (page.items.length === 0) return add(region, el('p', {}, t('users.empty')));
    const rows = page.items.map((u) => {
      const status =
        t(`status.${u.status}`) + (isLocked(u) ? ` · ${t('user.lockedUntil')} ${formatDate(u.lockedUntil)}` : '');
      return [
        el(
          'a',
          { href: `${ctx.base}/admin/user?id=${encodeURIComponent(u.id)}`, class: 'clip', title: u.login },
          u.login,
        ),
        u.displayName || t('user.none'),
        t(`role.${u.role}`),
        status,
        sourceText(u),
        formatDate(u.lastLoginAt) || t('user.none'),
      ];
    });
    const caption = t('users.caption', {
      from: page.offset + 1,
      to: page.offset + page.items.length,
      total: page.total,
    });
    add(
      region,
      table(
        caption,
        [
          t('profile.login'),
          t('users.displayName'),
          t('users.role'),
          t('users.status'),
          t('users.source'),
          t('users.lastLogin'),
        ],
        rows,
      ),
    );
    showPager(page, prev, next, pager);
  };
  onSubmit(form, message, async () => {
    offset = 0;
    await render();
  });
  const move = (button: HTMLButtonElement, delta: number) =>
    button.addEventListener(
      'click',
      () =>
        void whileBusy(button, async () => {
          offset = Math.max(0, offset + delta);
          await render();
          region.querySelector('caption')?.scrollIntoView();
        }),
    );
  move(prev, -PAGE_SIZE);
  move(next, PAGE_SIZE);

  const create = byId<HTMLFormElement>('user-create');
  const createMessage = byId('user-create-message');
  watchPolicy('create-password-policy', byId<HTMLInputElement>('create-password'), () =>
    byId<HTMLInputElement>('create-login').value.trim(),
  );
  onSubmit(create, createMessage, async () => {
    const v = (id: string) => byId<HTMLInputElement>(id);
    const limit = given(v('create-limit'));
    const email = given(v('create-email'));
    const password = v('create-password').value;
    const common = {
      login: v('create-login').value.trim(),
      displayName: v('create-display').value.trim(),
      role: v('create-role').value,
      ...(limit ? { sessionLimit: Number(limit) } : {}),
    };
    // A service account has no password or address: the fields are left out (the API refuses them).
    // Without a password a person chooses one through the welcome mail's link (docs/mail.md, "Kinds").
    const body = v('create-service').checked
      ? { ...common, kind: 'service' }
      : {
          ...common,
          ...(password ? { password } : {}),
          mustChangePassword: v('create-must').checked,
          ...(email ? { email } : {}),
        };
    let made: User;
    try {
      made = await api<User>('/v4/users', { method: 'POST', json: body });
    } catch (err) {
      return showPolicyProblem(createMessage, err);
    }
    create.reset();
    const link = el('a', { href: `${ctx.base}/admin/user?id=${encodeURIComponent(made.id)}` }, made.login);
    showMessage(createMessage, 'success', t('users.created', { login: made.login }), [el('p', {}, link)]);
    await render();
  });
  await render();
};

interface SessionItem {
  id: string;
  kind: 'cookie' | 'oauth';
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  authMethod: string | null;
}

/** A button that asks `question` first (a dialog), then runs `action`; its failure is shown in `region`. */
function confirmedButton(
  label: string,
  aria: string,
  question: string,
  region: HTMLElement,
  action: () => Promise<void>,
): HTMLButtonElement {
  return actionButton(label, { aria, errors: region, ask: () => confirmAction(question, label) }, action);
}

const one: PageScript = async (ctx) => {
  const id = new URLSearchParams(location.search).get('id');
  const region = byId('user-region');
  const factList = byId('user-facts');
  if (!id) return showMessage(ctx.message, 'error', t('user.missing'));
  const path = `/v4/users/${encodeURIComponent(id)}`;
  let user: User | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;

  const suState = byId('user-su-state');
  const suRevoke = byId<HTMLButtonElement>('su-revoke');
  const showSuperAccess = () => {
    if (timer) clearInterval(timer);
    const until = user?.superAccessUntil ? Date.parse(user.superAccessUntil) : 0;
    const tick = () => {
      const left = (until - Date.now()) / 1000;
      const on = left > 0;
      suState.textContent = on
        ? t('user.superAccessLeft', { time: clock(left), until: formatDate(user?.superAccessUntil) })
        : t('user.superAccessOff');
      suRevoke.hidden = !on;
      if (!on && timer) clearInterval(timer);
    };
    tick();
    // The countdown: re-rendered each second while super-access lasts (not a live region: no announcements).
    if (until > Date.now()) timer = setInterval(tick, 1000);
  };

  const show = (u: User) => {
    user = u;
    const none = t('user.none');
    const yesNo = (b: boolean) => (b ? t('user.yes') : t('user.no'));
    factList.replaceChildren(
      ...facts([
        [t('profile.login'), u.login],
        [t('users.displayName'), u.displayName || none],
        [t('users.email'), u.email ?? none],
        [t('users.role'), t(`role.${u.role}`)],
        [t('users.source'), sourceText(u)],
        [
          t('users.status'),
          t(`status.${u.status}`) + (u.blockedReason ? ` (${t(`user.reason.${u.blockedReason}`)})` : ''),
        ],
        [t('user.lockedUntil'), isLocked(u) ? formatDate(u.lockedUntil) : t('user.notLocked')],
        [t('users.lastLogin'), formatDate(u.lastLoginAt) || none],
        [
          t('user.passwordExpires'),
          u.source === 'local' ? formatDate(u.passwordExpiresAt) || t('profile.never') : none,
        ],
        [t('user.mustChange'), yesNo(u.mustChangePassword)],
        [t('users.sessionLimit'), u.sessionLimit === null ? none : String(u.sessionLimit)],
        [t('user.created'), formatDate(u.createdAt)],
      ]),
    );
    byId('user-block').hidden = u.status === 'blocked';
    byId('user-unblock').hidden = u.status !== 'blocked';
    byId('user-unlock').hidden = !isLocked(u);
    byId<HTMLInputElement>('edit-display').value = u.displayName;
    byId<HTMLInputElement>('edit-email').value = u.email ?? '';
    selectById('edit-role').value = u.role;
    byId<HTMLInputElement>('edit-limit').value = u.sessionLimit === null ? '' : String(u.sessionLimit);
    byId('user-reset').hidden = u.source !== 'local' || u.kind === 'service';
    byId('user-token-form').hidden = u.kind !== 'service';
    byId('delete-confirm-label').textContent = t('user.deleteConfirm', { login: u.login });
    showSuperAccess();
    byId('user-panels').hidden = false;
  };
  const loaded = await loading(region, () => api<User>(path));
  if (!loaded) return;
  show(loaded);

  /** An action of the account; `question`: asked first (block, which ends the user's sessions). */
  const simple = (buttonId: string, verb: string, done: string, question?: () => string) => {
    const button = byId<HTMLButtonElement>(buttonId);
    const msg = byId('user-actions-message');
    button.addEventListener(
      'click',
      async () =>
        (!question || (await confirmAction(question(), button.textContent ?? verb))) &&
        void whileBusy(button, async () => {
          showMessage(msg, null);
          try {
            show(await api<User>(`${path}/${verb}`, { method: 'POST' }));
          } catch (err) {
            return showError(msg, err);
          }
          showMessage(msg, 'success', t(done));
          // The button pressed is now hidden: the keyboard focus goes to the message saying what happened.
          msg.setAttribute('tabindex', '-1');
          msg.focus();
          await renderSessions();
        }),
    );
  };
  simple('user-block', 'block', 'user.blocked', () => t('confirm.block', { login: user?.login ?? '' }));
  simple('user-unblock', 'unblock', 'user.unblocked');
  simple('user-unlock', 'unlock', 'user.unlocked');

  onSubmit(byId<HTMLFormElement>('user-edit'), byId('user-edit-message'), async () => {
    if (!user) return;
    const displayName = byId<HTMLInputElement>('edit-display').value.trim();
    const email = byId<HTMLInputElement>('edit-email').value.trim() || null;
    const role = selectById('edit-role').value;
    const limit = given(byId<HTMLInputElement>('edit-limit'));
    const sessionLimit = limit === undefined ? null : Number(limit);
    // Only what changed: e.g. the role is sent only when it changes (nobody may change their own).
    const patch: Record<string, unknown> = {};
    if (displayName !== user.displayName) patch.displayName = displayName;
    if (email !== user.email) patch.email = email;
    if (role !== user.role) patch.role = role;
    if (sessionLimit !== user.sessionLimit) patch.sessionLimit = sessionLimit;
    show(await api<User>(path, { method: 'PATCH', json: patch }));
    showMessage(byId('user-edit-message'), 'success', t('user.saved'));
  });

  const resetForm = byId<HTMLFormElement>('user-reset');
  watchPolicy('reset-password-policy', byId<HTMLInputElement>('reset-password'), () => user?.login ?? '');
  onSubmit(resetForm, byId('user-reset-message'), async () => {
    const password = byId<HTMLInputElement>('reset-password').value;
    const mustChangePassword = byId<HTMLInputElement>('reset-must').checked;
    const endPasskeys = byId<HTMLInputElement>('reset-passkeys').checked;
    try {
      await api(`${path}/password`, { method: 'POST', json: { password, mustChangePassword, endPasskeys } });
    } catch (err) {
      return showPolicyProblem(byId('user-reset-message'), err);
    }
    resetForm.reset();
    showMessage(byId('user-reset-message'), 'success', t('user.resetDone'));
    show(await api<User>(path));
    await Promise.all([renderSessions(), renderTokens()]);
  });

  const suMessage = byId('user-su-message');
  onSubmit(byId<HTMLFormElement>('user-su'), suMessage, async () => {
    const minutes = given(byId<HTMLInputElement>('su-minutes'));
    show(
      await api<User>(`${path}/super-access`, { method: 'POST', json: minutes ? { minutes: Number(minutes) } : {} }),
    );
    showMessage(suMessage, 'success', t('user.suGranted'));
  });
  suRevoke.addEventListener(
    'click',
    () =>
      void whileBusy(suRevoke, async () => {
        showMessage(suMessage, null);
        try {
          show(await api<User>(`${path}/super-access`, { method: 'DELETE' }));
        } catch (err) {
          return showError(suMessage, err);
        }
        showMessage(suMessage, 'success', t('user.suRevoked'));
      }),
  );

  const sessionsRegion = byId('user-sessions');
  const sessionsMessage = byId('user-sessions-message');
  const renderSessions = async () => {
    sessionsRegion.replaceChildren();
    const r = await loading(sessionsRegion, () => api<{ items: SessionItem[] }>(`${path}/sessions`));
    if (!r) return;
    if (r.items.length === 0) return add(sessionsRegion, el('p', {}, t('user.sessionsEmpty')));
    const rows = r.items.map((s) => {
      const started = formatDate(s.createdAt);
      const end = confirmedButton(
        t('sessions.end'),
        t('sessions.endNamed', { date: started }),
        t('confirm.endSession', { date: started }),
        sessionsMessage,
        async () => {
          await api(`${path}/sessions/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
          showMessage(sessionsMessage, 'success', t('user.sessionEnded'));
          await renderSessions();
        },
      );
      return [
        started,
        formatDate(s.lastSeenAt),
        formatDate(s.expiresAt),
        agentCell(s.userAgent),
        `${t(`kind.${s.kind}`)}, ${t(`method.${s.authMethod ?? 'unknown'}`)}`,
        end,
      ];
    });
    add(sessionsRegion, table(t('user.sessions'), sessionColumns(), rows));
  };

  const tokensRegion = byId('user-tokens');
  const tokensMessage = byId('user-tokens-message');
  const renderTokens = async () => {
    tokensRegion.replaceChildren();
    const r = await loading(tokensRegion, () => api<{ items: TokenItem[] }>(`${path}/tokens`));
    if (!r) return;
    if (r.items.length === 0) return add(tokensRegion, el('p', {}, t('user.tokensEmpty')));
    const rows = r.items.map((tok) => {
      const revoke = confirmedButton(
        t('tokens.revoke'),
        t('tokens.revokeNamed', { name: tok.name }),
        t('confirm.revokeToken', { name: tok.name }),
        tokensMessage,
        async () => {
          await api(`${path}/tokens/${encodeURIComponent(tok.id)}`, { method: 'DELETE' });
          showMessage(tokensMessage, 'success', t('user.tokenRevoked'));
          await renderTokens();
        },
      );
      return [
        tok.name,
        clip(`${tok.prefix}…`, 'code'),
        ...tokenLimitsText(tok),
        formatDate(tok.createdAt),
        tok.lastUsedAt
          ? `${formatDate(tok.lastUsedAt)}${tok.lastUsedIp ? ` (${tok.lastUsedIp})` : ''}`
          : t('tokens.never'),
        formatDate(tok.expiresAt) || t('profile.never'),
        revoke,
      ];
    });
    add(tokensRegion, table(t('user.tokens'), tokenColumns(), rows));
  };

  // A service account's tokens are issued here (docs/api.md, "Service accounts"); the secret is shown once.
  const tokenForm = byId<HTMLFormElement>('user-token-form');
  const tokenMessage = byId('user-token-message');
  onSubmit(tokenForm, tokenMessage, async () => {
    const name = byId<HTMLInputElement>('user-token-name').value.trim();
    const scopes = [...tokenForm.querySelectorAll<HTMLInputElement>('input[name="scopes"]:checked')].map(
      (i) => i.value,
    );
    const made = await api<TokenItem & { token: string }>(`${path}/tokens`, {
      method: 'POST',
      json: { name, ...(scopes.length ? { scopes } : {}) },
    });
    tokenForm.reset();
    byId<HTMLInputElement>('user-token-secret').value = made.token;
    byId('user-token-issued').hidden = false;
    showMessage(tokenMessage, 'success', t('tokens.issued', { name: made.name }));
    await renderTokens();
  });

  const delMessage = byId('user-delete-message');
  onSubmit(byId<HTMLFormElement>('user-delete'), delMessage, async () => {
    if (!user) return;
    if (byId<HTMLInputElement>('delete-confirm').value.trim() !== user.login) {
      return showMessage(delMessage, 'error', t('user.deleteMismatch'));
    }
    await api(path, { method: 'DELETE' });
    if (timer) clearInterval(timer);
    byId('user-panels').hidden = true;
    factList.replaceChildren();
    showMessage(ctx.message, 'success', t('user.deleted'), [
      el('p', {}, el('a', { href: `${ctx.base}/admin/users` }, t('user.back'))),
    ]);
  });

  await Promise.all([renderSessions(), renderTokens(), wireUserFactors(path, () => user?.login ?? '', renderSessions)]);
};

export const USERS_SCRIPTS: Record<string, PageScript> = { 'admin-users': list, 'admin-user': one };
