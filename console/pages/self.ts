/** Scripts of the self-service pages (worker/src/pages/self-pages.ts): profile, password, sessions, tokens. */
import { ApiError, api } from '../api.js';
import type { PageContext, PageScript, TokenItem } from '../context.js';
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
  table,
  whileBusy,
} from '../ui.js';
import { basicAuth, showLoginRefusal } from './signin.js';
import { selectById } from './admin-common.js';
import { repeatMatches, showPolicyProblem, watchPolicy } from './password-check.js';

const profile: PageScript = ({ me }) => {
  if (!me) return;
  const none = t('profile.none');
  const source = me.source === 'local' ? t('source.local') : t(`source.${me.source}`, { name: me.sourceName ?? '' });
  const facts: Array<[string, string]> = [
    ['profile.login', me.login],
    ['profile.displayName', me.displayName || none],
    ['profile.email', me.email ?? none],
    ['profile.role', t(`role.${me.role}`)],
    ['profile.source', source],
    ['profile.status', t(`status.${me.status}`)],
    ['profile.lastLogin', formatDate(me.lastLoginAt) || none],
    ['profile.passwordExpires', me.source === 'local' ? formatDate(me.passwordExpiresAt) || t('profile.never') : none],
  ];
  byId('profile').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, t(k)), el('dd', {}, v)]));
};

const password: PageScript = (ctx) => {
  const form = byId<HTMLFormElement>('password-form');
  const region = byId('password-message');
  const loginInput = byId<HTMLInputElement>('password-login');
  const oldInput = byId<HTMLInputElement>('password-old');
  const newInput = byId<HTMLInputElement>('password-new');
  const repeat = byId<HTMLInputElement>('password-repeat');
  // Without a session (an expired password refuses the sign-in), the login proves who with the old password.
  const expired = ctx.me === null;
  if (expired) {
    const intro = byId('password-expired-intro');
    intro.hidden = false;
    const reason = new URLSearchParams(location.search).get('reason');
    if (reason === 'reset') intro.textContent = t('password.resetIntro');
    // A new account's first password was the administrator's: the user now chooses one, nothing was reset.
    if (reason === 'initial') intro.textContent = t('password.initialIntro');
    byId('password-login-row').hidden = false;
    loginInput.disabled = false;
    loginInput.required = true;
    loginInput.value = new URLSearchParams(location.search).get('login') ?? '';
    (loginInput.value ? oldInput : loginInput).focus();
  } else if (ctx.me?.source !== 'local') {
    showMessage(region, 'info', t('password.external'));
  }
  watchPolicy('password-policy', newInput, () => ctx.me?.login ?? loginInput.value.trim());
  onSubmit(form, region, async () => {
    if (!repeatMatches(newInput, repeat, region)) return;
    const headers: Record<string, string> = expired
      ? { Authorization: basicAuth(loginInput.value, oldInput.value) }
      : {};
    try {
      await api('/v4/users/me/password', {
        method: 'PUT',
        headers,
        json: { oldPassword: oldInput.value, newPassword: newInput.value },
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS') {
        showError(region, err, t('password.wrongOld'));
      } else if (err instanceof ApiError && err.code === 'CONFLICT') {
        showError(region, err, t('password.external'));
      } else if (err instanceof ApiError && err.code === 'PASSWORD_POLICY') {
        showPolicyProblem(region, err);
      } else showLoginRefusal(ctx, region, err, loginInput.value);
      return;
    }
    for (const input of [oldInput, newInput, repeat]) input.value = '';
    if (!expired) {
      showMessage(region, 'success', t('password.done'));
      return;
    }
    showMessage(region, 'success', t('password.doneSignIn'), [
      el('p', {}, el('a', { href: `${ctx.base}/login` }, t('nav.signin'))),
    ]);
  });
};

interface SessionItem {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  authMethod: string | null;
  current: boolean;
}

const sessions: PageScript = async (ctx) => {
  const region = byId('sessions-region');
  const message = byId('sessions-message');
  const toLogin = () => location.assign(`${ctx.base}/login`);
  const render = async () => {
    region.replaceChildren();
    const list = await loading(region, () => api<{ items: SessionItem[] }>('/v4/users/me/sessions'));
    if (!list) return;
    if (list.items.length === 0) return add(region, el('p', {}, t('sessions.empty')));
    const rows = list.items.map((s) => {
      const started = formatDate(s.createdAt);
      const action: Node = el(
        'button',
        { type: 'button', class: 'danger', 'aria-label': t('sessions.endNamed', { date: started }) },
        t('sessions.end'),
      );
      action.addEventListener(
        'click',
        async () =>
          (await confirmAction(t('confirm.endSession', { date: started }), t('sessions.end'))) &&
          void whileBusy(action as HTMLButtonElement, async () => {
            try {
              await api(`/v4/users/me/sessions/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
            } catch (err) {
              return showError(message, err);
            }
            if (s.current) return toLogin();
            showMessage(message, 'success', t('sessions.ended'));
            await render();
          }),
      );
      const method = t(`method.${s.authMethod ?? 'unknown'}`);
      const when = el(
        'span',
        {},
        started,
        s.current ? el('strong', { class: 'tag' }, ` (${t('sessions.current')})`) : null,
      );
      return [
        when,
        document.createTextNode(formatDate(s.lastSeenAt)),
        document.createTextNode(formatDate(s.expiresAt)),
        agentCell(s.userAgent),
        document.createTextNode(method),
        action,
      ];
    });
    add(region, table(t('sessions.caption'), sessionColumns(), rows));
  };
  const endAll = byId<HTMLButtonElement>('sessions-end-all');
  endAll.addEventListener(
    'click',
    async () =>
      (await confirmAction(t('confirm.endAll'), t('sessions.endAll'))) &&
      void whileBusy(endAll, async () => {
        try {
          await api('/v3/logout/all', { method: 'POST' });
        } catch (err) {
          return showError(message, err);
        }
        toLogin();
      }),
  );
  await render();
};

/** Copies the secret: the Clipboard API, else the selection (older browsers, insecure origins). */
async function copySecret(input: HTMLInputElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    input.select();
    document.execCommand('copy');
  }
}

const tokens: PageScript = async (ctx: PageContext) => {
  const region = byId('tokens-region');
  const form = byId<HTMLFormElement>('token-form');
  const message = byId('token-message');
  const scopeFilter = selectById('token-filter-scope');
  const useFilter = selectById('token-filter-use');
  let items: TokenItem[] = [];
  /** The tokens the filters keep: with the scope (a token without scopes has them all), unused for so long. */
  const kept = () => {
    const scope = scopeFilter.value;
    const use = useFilter.value;
    return items.filter((tok) => {
      if (scope && tok.scopes !== null && !tok.scopes.includes(scope)) return false;
      if (use === 'never') return tok.lastUsedAt === null;
      // Unused for n days: its last use, or its issue when never used, lies that long ago.
      return !use || Date.now() - Date.parse(tok.lastUsedAt ?? tok.createdAt) >= Number(use) * 86_400_000;
    });
  };
  const render = async () => {
    region.replaceChildren();
    const list = await loading(region, () => api<{ items: TokenItem[] }>('/v4/users/me/tokens'));
    if (!list) return;
    items = list.items;
    show();
  };
  const show = () => {
    region.replaceChildren();
    if (items.length === 0) return add(region, el('p', {}, t('tokens.empty')));
    const shown = kept();
    if (shown.length === 0) return add(region, el('p', {}, t('tokens.noneMatch')));
    const rows = shown.map((tok) => {
      const revoke = el(
        'button',
        { type: 'button', class: 'danger', 'aria-label': t('tokens.revokeNamed', { name: tok.name }) },
        t('tokens.revoke'),
      );
      revoke.addEventListener(
        'click',
        async () =>
          (await confirmAction(t('confirm.revokeToken', { name: tok.name }), t('tokens.revoke'))) &&
          void whileBusy(revoke, async () => {
            try {
              await api(`/v4/users/me/tokens/${encodeURIComponent(tok.id)}`, { method: 'DELETE' });
            } catch (err) {
              return showError(ctx.message, err);
            }
            // The secret of a token just issued and now revoked leaves the page.
            if (issuedId === tok.id) {
              issuedId = null;
              secret.value = '';
              issued.hidden = true;
              showMessage(ctx.message, 'success', t('tokens.secretGone', { name: tok.name }));
            } else showMessage(ctx.message, 'success', t('tokens.revoked'));
            await render();
          }),
      );
      const text = (s: string) => document.createTextNode(s);
      return [
        text(tok.name),
        clip(`${tok.prefix}…`, 'code'),
        ...tokenLimitsText(tok).map(text),
        text(formatDate(tok.createdAt)),
        text(
          tok.lastUsedAt
            ? `${formatDate(tok.lastUsedAt)}${tok.lastUsedIp ? ` (${tok.lastUsedIp})` : ''}`
            : t('tokens.never'),
        ),
        text(formatDate(tok.expiresAt) || t('profile.never')),
        revoke,
      ];
    });
    add(region, table(t('tokens.caption'), tokenColumns(), rows));
  };
  scopeFilter.addEventListener('change', show);
  useFilter.addEventListener('change', show);

  // The services a token may be limited to: those the user may enter (docs/api.md, "API token audiences").
  const audienceList = byId('token-audience-list');
  const choices = await api<{ items: { name: string }[] }>('/v4/users/me/token-audiences').catch(() => undefined);
  if (choices?.items.length === 0) add(audienceList, el('p', { class: 'hint' }, t('tokens.noAudienceChoices')));
  for (const [i, { name }] of (choices?.items ?? []).entries()) {
    const id = `token-audience-${i}`;
    add(
      audienceList,
      el(
        'p',
        { class: 'check' },
        el('input', { id, name: 'audiences', type: 'checkbox', value: name }),
        el('label', { for: id }, el('code', {}, name)),
      ),
    );
  }

  const issued = byId('token-issued');
  const secret = byId<HTMLInputElement>('token-secret');
  let issuedId: string | null = null;
  const copy = byId<HTMLButtonElement>('token-copy');
  const copyState = byId('token-copy-state');
  copy.addEventListener('click', async () => {
    await copySecret(secret);
    copyState.textContent = t('tokens.copied');
  });
  onSubmit(form, message, async () => {
    const name = byId<HTMLInputElement>('token-name').value.trim();
    const days = byId<HTMLInputElement>('token-days').value;
    // None ticked: a token that may do everything its owner may (docs/api.md, "API token scopes").
    const ticked = (field: string) =>
      [...form.querySelectorAll<HTMLInputElement>(`input[name="${field}"]:checked`)].map((i) => i.value);
    const scopes = ticked('scopes');
    const audiences = ticked('audiences');
    let token: TokenItem & { token: string };
    try {
      token = await api('/v4/users/me/tokens', {
        method: 'POST',
        json: {
          name,
          ...(days ? { expiresInDays: Number(days) } : {}),
          ...(scopes.length ? { scopes } : {}),
          ...(audiences.length ? { audiences } : {}),
        },
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'REAUTHENTICATION_REQUIRED') {
        showError(message, err, t('tokens.reauth'));
        return;
      }
      throw err;
    }
    form.reset();
    byId('token-issued-text').textContent = t('tokens.issued', { name: token.name });
    secret.value = token.token;
    issuedId = token.id;
    copyState.textContent = '';
    issued.hidden = false;
    secret.focus();
    secret.select();
    await render();
  });
  await render();
};

export const SELF_SCRIPTS: Record<string, PageScript> = { profile, password, sessions, tokens };
