/**
 * Password reset requests for the accounts the HTTP suites cannot make (LDAP, OIDC, blocked), and
 * the templates of every kind in both languages.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOutbox, loginLocks, notifications, passwordResetTokens, users } from '../../schema/index.js';
import { throttleKey } from '../../worker/src/accounts/throttle.js';
import { loginKey } from '../../worker/src/accounts/login-name.js';
import { mintToken, tokenInsert } from '../../worker/src/accounts/reset-tokens.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { confirmReset, requestReset } from '../../worker/src/password-reset/flow.js';
import { NOTIFICATION_KINDS, renderMail } from '../../worker/src/notifications/templates.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { testScope } from '../harness/scope.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const config = parseEnvironment({
  SESSION_SECRET_KEY: 'test-session-secret-key-0123456789abcdef',
  AUTH_MAIL_LANGUAGE: 'en',
});
const NOW = Date.parse('2026-11-26T10:00:00.000Z');

async function account(o: Partial<typeof users.$inferInsert>) {
  const login = `r${Math.random().toString(36).slice(2, 10)}`;
  const row = {
    id: crypto.randomUUID(),
    login,
    loginKey: login,
    email: `${login}@example.com`,
    createdAt: NOW,
    updatedAt: NOW,
    ...o,
  };
  await t.db.insert(users).values(row);
  return row;
}

describe('a reset through the link lifts the restrictions', () => {
  it('of a locked login: audited as account.unlocked (via reset_link); of an unrestricted one: no event', async () => {
    for (const locked of [true, false]) {
      const u = await account({ passwordChangedAt: null });
      const token = mintToken();
      const record = { id: crypto.randomUUID(), userId: u.id, token, purpose: 'reset' as const, now: NOW };
      await t.db.batch([
        tokenInsert(t.db, { ...record, expiresAt: NOW + 3_600_000 }, { ...u, passwordChangedAt: null }),
      ]);
      const key = throttleKey(loginKey(u.login));
      if (locked) await t.db.insert(loginLocks).values({ throttleKey: key, until: NOW + 900_000 });
      await confirmReset(testScope(t.db, config, { now: NOW }), token, 'N3w#Passw0rd9x');
      const events = await t.db
        .select()
        .from(auditOutbox)
        .where(and(eq(auditOutbox.subjectId, u.id), eq(auditOutbox.type, 'account.unlocked')));
      expect(events.map((e) => [e.stream, e.data, e.sourceIp])).toEqual(
        locked ? [['user_activity', { via: 'reset_link' }, '192.0.2.1']] : [],
      );
      expect(await t.db.select().from(loginLocks).where(eq(loginLocks.throttleKey, key))).toHaveLength(0);
    }
  });
});

describe('reset requests', () => {
  it(
    'LDAP and OIDC accounts are told to use their directory or provider; ' +
      'blocked ones to ask an administrator; no link for either',
    async () => {
      const ldap = await account({ source: 'ldap', sourceName: 'corp' });
      const oidc = await account({ source: 'oidc', sourceName: 'sso' });
      const blocked = await account({ status: 'blocked', blockedReason: 'admin' });
      const scope = testScope(t.db, config, { now: NOW });
      for (const u of [ldap, oidc, blocked]) await requestReset(scope, { login: u.login });
      for (const [u, mode] of [
        [ldap, 'external'],
        [oidc, 'external'],
        [blocked, 'blocked'],
      ] as const) {
        const [n] = await t.db.select().from(notifications).where(eq(notifications.userId, u.id));
        expect(n).toMatchObject({ kind: 'password_reset', status: 'pending', sealedLink: null, data: { mode } });
        expect(await t.db.select().from(passwordResetTokens).where(eq(passwordResetTokens.userId, u.id))).toHaveLength(
          0,
        );
      }
      const mail = renderMail('password_reset', 'en', { login: ldap.login, mode: 'external', source: 'ldap' }, null);
      expect(mail.text).toContain('corporate directory (LDAP)');
      expect(
        renderMail('password_reset', 'ru', { login: oidc.login, mode: 'external', source: 'oidc' }, null).text,
      ).toContain('(OIDC)');
      expect(renderMail('password_reset', 'en', { mode: 'blocked' }, null).text).toContain('ask your administrator');
    },
  );

  it(
    'an address shared by several accounts reaches each with its own link; ' + 'an account without one is given up',
    async () => {
      const shared = `shared-${Date.now()}@example.com`;
      const a = await account({ email: shared });
      const b = await account({ email: shared.toUpperCase() });
      const none = await account({ email: null });
      await requestReset(testScope(t.db, config, { now: NOW }), { email: shared });
      await requestReset(testScope(t.db, config, { now: NOW }), { login: none.login });
      const tokens = await t.db.select().from(passwordResetTokens);
      expect(tokens.filter((r) => r.userId === a.id || r.userId === b.id)).toHaveLength(2);
      expect(new Set(tokens.map((r) => r.tokenHash)).size).toBe(tokens.length);
      // Only hashes are stored: 64 hex digits, never the token of the link.
      for (const r of tokens) expect(r.tokenHash).toMatch(/^[0-9a-f]{64}$/);
      const [n] = await t.db.select().from(notifications).where(eq(notifications.userId, none.id));
      expect(n).toMatchObject({ status: 'given_up', lastError: 'the account has no e-mail address', recipient: null });
    },
  );
});

describe('templates', () => {
  it('every kind renders in both languages, data escaped in HTML, none in the subject', () => {
    const data = {
      login: 'x<y>&"z',
      displayName: '<script>alert(1)</script>',
      at: '2026-11-26T10:00:00.000Z',
      until: '2026-11-26T10:15:00.000Z',
      expiresAt: '2026-12-01T00:00:00.000Z',
      days: 5,
      mode: 'link',
    };
    for (const language of ['ru', 'en'] as const) {
      for (const kind of NOTIFICATION_KINDS) {
        const m = renderMail(kind, language, data, 'https://console.example.com/reset-password#token=abc&x=<1>');
        expect(m.subject.length).toBeGreaterThan(5);
        expect(m.subject).not.toContain('x<y>');
        expect(m.text).toContain(data.displayName);
        expect(m.html).not.toContain('<script>');
        expect(m.html).toContain('&lt;script&gt;');
        expect(m.html).toContain(`<html lang="${language}">`);
        if (kind === 'account_created' || kind === 'password_reset') {
          expect(m.text).toContain('#token=abc&x=<1>');
          expect(m.html).toContain('href="https://console.example.com/reset-password#token=abc&amp;x=&lt;1&gt;"');
        }
      }
    }
  });
});
