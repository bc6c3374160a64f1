/** Helpers shared by the administrator pages' scripts (console/pages/admin-*.ts). */
import { byId, el, showError, showMessage, whileBusy } from '../ui.js';

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

/** What an action button does around its action (actionButton). */
export interface ActionOptions {
  /** The button's accessible name (naming the record it acts on). */
  aria: string;
  /** `secondary` or `danger` (the default). */
  cls?: 'secondary' | 'danger';
  /** Where a failure is shown. */
  errors: HTMLElement;
  /** A message region cleared when it is pressed (default: `errors`). */
  clears?: HTMLElement;
  /** Asked first (e.g. confirmAction's dialog); false: nothing is done. */
  ask?: () => Promise<boolean>;
}

/**
 * A button that runs `action` while busy (whileBusy), after `ask` when given; pressing it clears
 * `clears`, and a failure is shown in `errors`.
 */
export function actionButton(label: string, o: ActionOptions, action: () => Promise<void>): HTMLButtonElement {
  const button = el('button', { type: 'button', class: o.cls ?? 'danger', 'aria-label': o.aria }, label);
  button.addEventListener('click', async () => {
    if (o.ask && !(await o.ask())) return;
    void whileBusy(button, async () => {
      showMessage(o.clears ?? o.errors, null);
      try {
        await action();
      } catch (err) {
        showError(o.errors, err);
      }
    });
  });
  return button;
}

/**
 * An action pressed twice: the first press only shows `question` in `region` (no modal dialog to
 * trap the keyboard), the second and later ones run `action`.
 */
export function pressedTwice(region: HTMLElement, question: string, action: () => Promise<void>): () => Promise<void> {
  let armed = false;
  return async () => {
    if (!armed) {
      armed = true;
      return showMessage(region, 'info', question);
    }
    await action();
  };
}
