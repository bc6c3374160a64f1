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

  it("a mail of the development outbox does not read as 'not sent' under the column of when it was sent", () => {
    // The notifications table shows the outbox file's time in this column (docs/mail.md, "Development outbox").
    expect(text('en', 'notif.sentAt')).toBe('Sent or written');
    expect(text('en', 'notif.status.outbox')).toBe('written to the outbox (no mail server)');
    expect(text('ru', 'notif.sentAt')).toBe('Отправлено или записано');
    for (const lang of ['en', 'ru'] as const)
      expect(text(lang, 'notif.status.outbox')).not.toMatch(/not sent|не отправлено/);
  });

  it('every notification kind of the one list has its name in both languages (the notifications filter)', () => {
    for (const kind of NOTIFICATION_KINDS) {
      for (const lang of ['en', 'ru'] as const) expect(text(lang, `notif.kind.${kind}`)).not.toBe(`notif.kind.${kind}`);
    }
  });
});
