/**
 * The console's reader of outbox mails (console/eml.ts) against what the service composes (the bridge's
 * composeMessage, as the Node outbox writes it) and against mailparser, the reference the mail tests use.
 */
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { composeMessage } from '../../ldap-bridge/src/mail.js';
import { readMail } from '../../console/eml.js';

describe("the console's outbox mail reader", () => {
  it(
    'reads From, To, Subject, Date and the text part as mailparser does, Russian and long lines ' + 'included',
    async () => {
      const text =
        'Здравствуйте, Иван!\n\nЗадайте свой пароль по ссылке (она действует до 2026-12-01 23:36 UTC):\n\n' +
        `http://127.0.0.1:8001/api/auth/ui/reset-password#token=${'x'.repeat(60)}\n\nÄ € — ${'слово '.repeat(40)}\n`;
      const raw = await composeMessage({
        from: { name: 'Сервис авторизации', address: 'noreply@auth.test' },
        to: { name: 'Иван Петров', address: 'ivan@example.com' },
        subject: 'Для вас создана учётная запись в сервисе «Сервис авторизации»',
        text,
        html: '<p>html</p>',
        language: 'ru',
        messageId: '<a@auth.test>',
      });
      const view = readMail(new Uint8Array(raw));
      const ref = await simpleParser(raw);
      expect(view.subject).toBe(ref.subject);
      expect(view.subject).toBe('Для вас создана учётная запись в сервисе «Сервис авторизации»');
      expect(view.from).toContain('noreply@auth.test');
      expect(view.from).toContain('Сервис авторизации');
      expect(view.to).toContain('Иван Петров');
      expect(view.to).toContain('ivan@example.com');
      expect(new Date(view.date).getTime()).toBe(ref.date!.getTime());
      expect(view.text.replace(/\r\n/g, '\n')).toBe(text);
    },
  );
});
