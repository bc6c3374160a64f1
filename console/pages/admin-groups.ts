/**
 * Script of the groups page (worker/src/pages/admin-pages.ts, docs/groups.md): the groups of /v4/groups
 * with their source, member count and the roles GROUP_ROLES gives them; a local group made or deleted
 * (pressed twice); a group's members, an account added by its login and a local membership removed.
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showMessage, table, whileBusy } from '../ui.js';
import { actionButton, pressedTwice, showPager } from './admin-common.js';

interface Group {
  id: string;
  name: string;
  description: string;
  source: 'local' | 'ldap' | 'oidc';
  sourceName: string | null;
  members: number;
  roles: Array<'admin' | 'auditor'>;
}
interface Member {
  id: string;
  login: string;
  displayName: string;
  source: 'local' | 'ldap' | 'oidc';
  readAt: string;
}
interface Page<T> {
  items: T[];
  total: number;
  offset: number;
}

const PAGE_SIZE = 50;
const MEMBERS = 100;
const groupPath = (id: string) => `/v4/groups/${encodeURIComponent(id)}`;
const sourceText = (source: Group['source'], name: string | null) =>
  source === 'local' ? t('grp.source.local') : t(`grp.source.${source}`, { name: name ?? '' });

const groups: PageScript = async () => {
  const region = byId('grp-region');
  const message = byId('grp-message');
  const [prev, next, pager] = [
    byId<HTMLButtonElement>('grp-prev'),
    byId<HTMLButtonElement>('grp-next'),
    byId('grp-pager'),
  ];
  const box = byId('grp-members-box');
  const membersRegion = byId('grp-members');
  const membersMessage = byId('grp-members-message');
  let offset = 0;
  /** The group whose members are shown. */
  let open: Group | undefined;

  const list = async () => {
    region.replaceChildren();
    const page = await loading(region, () => api<Page<Group>>(`/v4/groups?limit=${PAGE_SIZE}&offset=${offset}`));
    if (!page) return;
    if (page.items.length === 0 && page.offset === 0) add(region, el('p', {}, t('grp.empty')));
    else {
      const rows = page.items.map((g) => [
        el('span', { 'data-group': g.name }, g.name),
        sourceText(g.source, g.sourceName),
        String(g.members),
        g.roles.length ? g.roles.map((r) => t(`role.${r}`)).join(', ') : t('grp.noRoles'),
        g.description || '—',
        el(
          'span',
          { class: 'actions' },
          actionButton(
            t('grp.members'),
            { aria: t('grp.membersNamed', { name: g.name }), cls: 'secondary', errors: message },
            () => showMembers(g, true),
          ),
          g.source === 'local'
            ? actionButton(
                t('dir.delete'),
                { aria: t('dir.deleteNamed', { name: g.name }), errors: message },
                pressedTwice(message, t('dir.deleteConfirm', { name: g.name }), async () => {
                  await api(groupPath(g.id), { method: 'DELETE' });
                  if (open?.id === g.id) closeMembers();
                  await list();
                  showMessage(message, 'success', t('dir.deleted', { name: g.name }));
                }),
              )
            : null,
        ),
      ]);
      const heads = ['name', 'source', 'members', 'roles', 'description', 'actions'].map((k) => t(`grp.col.${k}`));
      const to = page.offset + page.items.length;
      add(region, table(t('grp.caption', { from: page.offset + 1, to, total: page.total }), heads, rows));
    }
    showPager({ ...page, offset }, prev, next, pager);
  };

  const closeMembers = () => {
    open = undefined;
    box.hidden = true;
    membersRegion.replaceChildren();
  };

  /** Shows the members of `g` (the focus moves to the panel when `focus`). */
  const showMembers = async (g: Group, focus = false) => {
    open = g;
    box.hidden = false;
    const title = byId('grp-members-title');
    title.textContent = t('grp.membersNamed', { name: g.name });
    membersRegion.replaceChildren();
    if (focus) title.focus();
    const page = await loading(membersRegion, () => api<Page<Member>>(`${groupPath(g.id)}/members?limit=${MEMBERS}`));
    if (!page) return;
    if (page.items.length === 0) return add(membersRegion, el('p', {}, t('grp.membersEmpty')));
    const rows = page.items.map((m) => [
      m.login,
      m.displayName || '—',
      m.source === 'local' ? t('grp.source.local') : m.source.toUpperCase(),
      formatDate(m.readAt),
      m.source === 'local'
        ? actionButton(
            t('grp.remove'),
            { aria: t('grp.removeNamed', { login: m.login, name: g.name }), errors: membersMessage },
            pressedTwice(membersMessage, t('grp.removeConfirm', { login: m.login, name: g.name }), async () => {
              await api(`${groupPath(g.id)}/members/${encodeURIComponent(m.id)}`, { method: 'DELETE' });
              await Promise.all([showMembers(g), list()]);
              showMessage(membersMessage, 'success', t('grp.removed', { login: m.login, name: g.name }));
            }),
          )
        : '',
    ]);
    const heads = ['login', 'displayName', 'membership', 'readAt', 'actions'].map((k) => t(`grp.col.${k}`));
    const caption = t('grp.membersCaption', { name: g.name, shown: page.items.length, total: page.total });
    add(membersRegion, table(caption, heads, rows));
  };

  const addForm = byId<HTMLFormElement>('grp-add');
  const addMessage = byId('grp-add-message');
  onSubmit(addForm, addMessage, async () => {
    const g = open;
    if (!g) return;
    const login = byId<HTMLInputElement>('grp-add-login').value.trim();
    // The API adds by account id: the login is looked up first (a prefix search, then the exact login).
    const found = await api<Page<{ id: string; login: string }>>(
      `/v4/users?login=${encodeURIComponent(login)}&limit=100`,
    );
    const account = found.items.find((u) => u.login.toLowerCase() === login.toLowerCase());
    if (!account) return showMessage(addMessage, 'error', t('grp.noAccount', { login }));
    await api(`${groupPath(g.id)}/members/${encodeURIComponent(account.id)}`, { method: 'PUT' });
    addForm.reset();
    await Promise.all([showMembers(g), list()]);
    showMessage(addMessage, 'success', t('grp.added', { login: account.login, name: g.name }));
  });

  const createForm = byId<HTMLFormElement>('grp-create');
  const createMessage = byId('grp-create-message');
  onSubmit(createForm, createMessage, async () => {
    const name = byId<HTMLInputElement>('grp-name').value.trim();
    const description = byId<HTMLInputElement>('grp-description').value.trim();
    const made = await api<Group>('/v4/groups', { method: 'POST', json: { name, description } });
    createForm.reset();
    await list();
    showMessage(createMessage, 'success', t('grp.created', { name: made.name }));
  });

  const move = (button: HTMLButtonElement, delta: number) =>
    button.addEventListener(
      'click',
      () =>
        void whileBusy(button, async () => {
          offset = Math.max(0, offset + delta);
          await list();
        }),
    );
  move(prev, -PAGE_SIZE);
  move(next, PAGE_SIZE);
  await list();
};

export const GROUPS_SCRIPTS: Record<string, PageScript> = { 'admin-groups': groups };
