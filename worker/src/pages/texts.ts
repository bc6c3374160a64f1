/**
 * The console's texts in Russian and English (architecture.md §8): one dictionary for the server (page
 * shells) and the browser bundle (messages), and its lookup. The texts themselves are modules of their
 * own (base-texts.ts, admin-texts.ts, ...) that register them at import. The browser bundle imports those
 * it needs; the server imports none: it reads every text from the built console's `texts.json` (written by
 * scripts/build-console.mjs from all-texts.ts) once per process or isolate, so the edge script carries no
 * texts (docs/performance.md, "The edge bundle").
 */
import type { StaticFiles } from '../http/context.js';

export const LANGS = ['ru', 'en'] as const;
export type Lang = (typeof LANGS)[number];

/** Where the built console keeps every text, in the static files. */
export const TEXTS_FILE = 'console/texts.json';

/** Every page group's texts, by language (`addTexts`, `loadTexts`). */
const DICTS: Record<Lang, Record<string, string>> = { en: {}, ru: {} };
let loaded = false;

/**
 * Installs every text from the built console's `texts.json` (once; after the first success, at once).
 * False when the file is missing or not a dictionary of both languages: the console is not built.
 */
export async function loadTexts(files: StaticFiles): Promise<boolean> {
  if (loaded) return true;
  const res = await files(TEXTS_FILE);
  if (!res?.ok) return false;
  const dicts = (await res.json().catch(() => undefined)) as Partial<typeof DICTS> | undefined;
  const isDict = (d: unknown): d is Record<string, string> =>
    typeof d === 'object' && d !== null && Object.values(d).every((v) => typeof v === 'string');
  if (!isDict(dicts?.en) || !isDict(dicts?.ru) || !('app.title' in dicts.en)) return false;
  addTexts({ en: dicts.en, ru: dicts.ru });
  loaded = true;
  return true;
}

/** Every text registered so far, by language (all-texts.ts, for `texts.json`). */
export const dictionaries = (): Record<Lang, Record<string, string>> => ({ en: { ...DICTS.en }, ru: { ...DICTS.ru } });

/** Adds a page group's texts; every key must exist in both languages (checked by the type). */
export function addTexts<K extends string>(texts: { en: Record<K, string>; ru: Record<K, string> }): void {
  Object.assign(DICTS.en, texts.en);
  Object.assign(DICTS.ru, texts.ru);
}

/** The text of `key` in `lang`, with `{name}` placeholders filled (the key itself when unknown). */
export function text(lang: Lang, key: string, vars: Record<string, string | number> = {}): string {
  const template = DICTS[lang][key] ?? DICTS.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

/** Whether a string names a supported language. */
export function isLang(value: string | undefined | null): value is Lang {
  return value === 'ru' || value === 'en';
}

/**
 * The page's language: an explicit choice (the switch's `lang` query or its cookie), else the first
 * supported language of Accept-Language, else Russian (the service's own language).
 */
export function chooseLang(choice: string | undefined, acceptLanguage: string | undefined): Lang {
  if (isLang(choice)) return choice;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { lang: tag.toLowerCase().split('-')[0] ?? '', q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked.map((r) => r.lang).find(isLang) ?? 'ru';
}
