/** Helpers shared by the administrator pages' scripts (console/pages/admin-*.ts). */
import { byId, el } from '../ui.js';

/** A table with a caption, header cells with scope, and rows (cells labelled for the phone layout). */
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

/** A definition list's terms and descriptions. */
export function facts(pairs: Array<[string, Node | string]>): Node[] {
  return pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]);
}

/** The value of a text input, or undefined when empty (blank means "not given"). */
export function given(input: HTMLInputElement | HTMLSelectElement): string | undefined {
  const v = input.value.trim();
  return v === '' ? undefined : v;
}

/**
 * The `<select>` with `id` (byId's HTMLElement bound rejects HTMLSelectElement under the Workers
 * types the project also loads, whose `remove()` differs).
 */
export function selectById(id: string): HTMLSelectElement {
  return byId(id) as unknown as HTMLSelectElement;
}
