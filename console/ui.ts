/**
 * DOM helpers of the console: building elements (text only, never HTML strings), the message region
 * of a form or page, and the busy state of an action (loading and error states on every action).
 */
import { ApiError } from './api.js';
import { agentText, t } from './i18n.js';

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes (`class`, `aria-*`, ...) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  add(node, ...children);
  return node;
}

/**
 * Appends children (strings become text). Node.append is not used: the Workers types the project
 * also loads declare an HTMLRewriter `append` on Element that hides the DOM's in type checking.
 */
export function add(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** The element with `id`, or an error naming it (a page's markup and script disagree). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

export type MessageKind = 'info' | 'success' | 'error';

/**
 * Shows a message in a region (`role="status"` for info and success, `role="alert"` for errors, so
 * screen readers announce it); `null` clears it.
 */
export function showMessage(region: HTMLElement, kind: MessageKind | null, message = '', extra: Child[] = []): void {
  region.replaceChildren();
  region.hidden = kind === null;
  if (kind === null) return;
  region.className = `message message-${kind}`;
  region.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  add(region, el('p', {}, message), ...extra);
}

/** The text of a failure for the user: the problem's `detail` (the API's own words), and its request id. */
export function errorText(err: unknown): { message: string; requestId?: string } {
  if (err instanceof ApiError) return { message: err.message, requestId: err.problem.requestId };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** Shows a failure in a region: the message, and the request id (for support) when there is one. */
export function showError(region: HTMLElement, err: unknown, message?: string): void {
  const e = errorText(err);
  const extra = e.requestId ? [el('p', { class: 'request-id' }, t('error.requestId', { id: e.requestId }))] : [];
  showMessage(region, 'error', message ?? e.message, extra);
}

/**
 * Runs an action with `control` disabled and marked busy (aria-busy, its label replaced by
 * "Working…"); the control is restored however the action ends.
 */
export async function whileBusy<T>(control: HTMLButtonElement, action: () => Promise<T>): Promise<T> {
  const label = control.textContent;
  control.disabled = true;
  control.setAttribute('aria-busy', 'true');
  control.textContent = t('saving');
  try {
    return await action();
  } finally {
    control.disabled = false;
    control.removeAttribute('aria-busy');
    control.textContent = label;
  }
}

/**
 * Wires a form: on submit (button or Enter), clears the message region and runs `action` while the
 * submit button is busy; a thrown error is shown in the region unless `action` handled it.
 */
export function onSubmit(form: HTMLFormElement, region: HTMLElement, action: () => Promise<void>): void {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const button = form.querySelector<HTMLButtonElement>('button[type=submit]');
    showMessage(region, null);
    const run = async () => {
      try {
        await action();
      } catch (err) {
        showError(region, err);
      }
    };
    void (button ? whileBusy(button, run) : run());
  });
}

/** Marks the page's loading region as loading (aria-busy) until `work` ends; a failure is shown in it. */
export async function loading<T>(region: HTMLElement, work: () => Promise<T>): Promise<T | undefined> {
  region.setAttribute('aria-busy', 'true');
  const note = el('p', { class: 'loading' }, t('loading'));
  region.insertBefore(note, region.firstChild);
  try {
    return await work();
  } catch (err) {
    const box = el('div', {});
    showError(box, err);
    add(region, box);
    return undefined;
  } finally {
    note.remove();
    region.removeAttribute('aria-busy');
  }
}

/**
 * A list as a table: a caption, column headers with scope, and rows of cells (each labelled with its
 * column, which the phone layout shows before the cell's content).
 */
export function table(caption: string, heads: string[], rows: Array<Array<Node | string>>): HTMLTableElement {
  return el(
    'table',
    { class: 'list' },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { scope: 'col' }, h)))),
    el(
      'tbody',
      {},
      ...rows.map((cells) => el('tr', {}, ...cells.map((c, i) => el('td', { 'data-label': heads[i] }, c)))),
    ),
  );
}

/**
 * A long value without spaces (an address, an id, a User-Agent) in a table: cut with an ellipsis
 * (CSS `.clip`), the whole value in its title and its text (copy and screen readers get all of it).
 */
export function clip(value: string, tag: 'span' | 'code' = 'span'): HTMLElement {
  return el(tag, { class: 'clip', title: value }, value);
}

/** A session's client in words ("Chrome 131 on Windows"), the raw User-Agent in its title. */
export function agentCell(userAgent: string | null): HTMLElement {
  const { text, raw } = agentText(userAgent);
  return raw && raw !== text ? el('span', { title: raw }, text) : clip(text);
}

/**
 * Asks before a destructive action (block, revoke, end): a modal `<dialog>` with the question and
 * the action's own name on its button, Cancel focused first (Escape cancels). True when confirmed.
 */
export function confirmAction(question: string, confirmLabel: string): Promise<boolean> {
  const title = el('h2', { id: 'confirm-title' }, question);
  const yes = el('button', { type: 'button', class: 'danger', value: 'yes' }, confirmLabel);
  const no = el('button', { type: 'button', class: 'secondary', value: 'no', autofocus: true }, t('confirm.cancel'));
  const dialog = el(
    'dialog',
    { class: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-modal': 'true' },
    title,
    el('p', { class: 'actions' }, no, yes),
  );
  document.body.appendChild(dialog);
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  return new Promise((resolve) => {
    const close = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      opener?.focus();
      resolve(answer);
    };
    yes.addEventListener('click', () => close(true));
    no.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      close(false);
    });
    dialog.showModal();
    no.focus();
  });
}
