/** Helpers shared by the administrator pages' scripts (console/pages/admin-*.ts). */
import { byId, el } from '../ui.js';

export { table } from '../ui.js';

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

/** Enables the previous and next buttons of an offset-paged list as the page allows; hides both if neither. */
export function showPager(
  page: { offset: number; total: number; items: unknown[] },
  prev: HTMLButtonElement,
  next: HTMLButtonElement,
  pager: HTMLElement,
): void {
  prev.disabled = page.offset === 0;
  next.disabled = page.offset + page.items.length >= page.total;
  pager.hidden = prev.disabled && next.disabled;
}
