import { describe, expect, it } from 'vitest';
import { NOTIFICATION_KINDS } from '../../../schema/notifications.js';
import './all-texts.js';
import { chooseLang, text } from './texts.js';

describe('console texts', () => {
  it('the switch wins, then Accept-Language by quality, then Russian', () => {
    expect(chooseLang('en', 'ru-RU')).toBe('en');
    expect(chooseLang(undefined, 'de-DE, en;q=0.8, ru;q=0.9')).toBe('ru');
    expect(chooseLang(undefined, 'de-DE, en-GB;q=0.8')).toBe('en');
    expect(chooseLang('fr', 'en-US')).toBe('en');
    expect(chooseLang(undefined, 'de, en;q=0')).toBe('ru');
    expect(chooseLang(undefined, undefined)).toBe('ru');
  });

  it('fills placeholders in the chosen language, and falls back to the key', () => {
    expect(text('en', 'signin.locked', { time: '15 min' })).toBe('Too many failed sign-ins. Try again in 15 min.');
    expect(text('ru', 'signin.locked', { time: '15 мин' })).toContain('через 15 мин');
    expect(text('ru', 'no.such.key')).toBe('no.such.key');
  });

  it('every notification kind of the one list has its name in both languages (the notifications filter)', () => {
    for (const kind of NOTIFICATION_KINDS) {
      for (const lang of ['en', 'ru'] as const) expect(text(lang, `notif.kind.${kind}`)).not.toBe(`notif.kind.${kind}`);
    }
  });
});
