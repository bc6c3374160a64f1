/** The console's texts in the page's language (`<html lang>`, chosen by the server). */
import { describeUserAgent } from '../worker/src/notifications/user-agent.js';
import { isLang, text, type Lang } from '../worker/src/pages/texts.js';
import '../worker/src/pages/base-texts.js';
import '../worker/src/pages/ui-texts.js';

/** The page's language. */
export function lang(): Lang {
  const l = document.documentElement.lang;
  return isLang(l) ? l : 'ru';
}

/** A text of the console's dictionary in the page's language. */
export function t(key: string, vars: Record<string, string | number> = {}): string {
  return text(lang(), key, vars);
}

/** A date and time in the page's language ('' for null). */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  return new Date(iso).toLocaleString(lang() === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** A duration in seconds as minutes (rounded up) or, under a minute, seconds. */
export function formatDuration(seconds: number): string {
  return seconds >= 60
    ? t('time.minutes', { n: Math.ceil(seconds / 60) })
    : t('time.seconds', { n: Math.max(1, Math.ceil(seconds)) });
}

/** The column heads of a sessions table: the user's own (sessions page) and a user's (administrator). */
export function sessionColumns(): string[] {
  return ['started', 'lastSeen', 'expires', 'agent', 'method', 'actions'].map((k) => t(`sessions.${k}`));
}

/** The column heads of an API tokens table: the user's own (tokens page) and a user's (administrator). */
export function tokenColumns(): string[] {
  return ['name', 'prefix', 'scopesColumn', 'audiencesColumn', 'created', 'lastUsed', 'expires', 'actions'].map((k) =>
    t(`tokens.${k}`),
  );
}

/** A token's scopes and audiences in words, for its row. */
export function tokenLimitsText(tok: { scopes: string[] | null; audiences?: string[] | null }): [string, string] {
  const scopes = tok.scopes === null ? t('tokens.everything') : tok.scopes.join(', ') || t('tokens.noScope');
  return [scopes, tok.audiences ? tok.audiences.join(', ') : t('tokens.anyService')];
}

/**
 * A session's client in words ("Chrome 131 on Windows"), with the new-device mail's parser (one for
 * both); the header itself when nothing in it is recognised, "unknown" without one.
 */
export function agentText(userAgent: string | null | undefined): { text: string; raw: string } {
  const raw = userAgent ?? '';
  const { browser, system } = describeUserAgent(raw);
  if (browser && system) return { text: t('agent.on', { browser, system }), raw };
  return { text: browser ?? system ?? (raw || t('agent.unknown')), raw };
}
