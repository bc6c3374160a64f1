/**
 * Mail on the embedded default (docs/mail.md, "Development outbox"): no mail server configured (the
 * placeholder EMAIL_HOST) and no bridge. The Node host writes each mail as an .eml file into
 * `mail-outbox/` beside its database, names the folder at start, serves the file to administrators,
 * and a reset link read from it works; the edge (no file system) records the mail as given up, "mail
 * is not configured", as documented. "Send a test mail" says the same on each host.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, createSuperAccessHolder, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
let host: RunningHost;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';

beforeAll(async () => {
  // No DEFAULT_FRONTEND_URL: the links of the mails point at this host's own console (docs/mail.md, "Links").
  host = await startTestHost(kind, {});
}, 180_000);
afterAll(async () => {
  await host?.stop();
});

const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

async function newUser() {
  const login = uniqueLogin('ob');
  const email = `${login}@example.com`;
  const r = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD, email },
  });
  expect(r.status).toBe(201);
  return { id: r.body.id, login, email };
}

/** The notifications of `email` of `kind`, once one is no longer pending. */
async function settled(email: string, kindOf: string) {
  let found: Record<string, any> | undefined;
  await expect
    .poll(
      async () => {
        const r = await api<{ items: Array<Record<string, any>> }>(
          `/v4/notifications?recipient=${encodeURIComponent(email)}&kind=${kindOf}`,
          { auth: admin },
        );
        found = r.body.items[0];
        return found?.status;
      },
      { timeout: 20_000 },
    )
    .toMatch(/^(outbox|given_up|sent)$/);
  return found!;
}

describe.runIf(kind === 'node')('the development outbox (Node host)', () => {
  const folder = () => {
    const url = host.libsqlUrl.slice('file:'.length);
    return join(dirname(url), 'mail-outbox');
  };

  it('the start names the folder, in the INFO line of where mail goes, and where its links lead', () => {
    expect(host.output()).toContain(`mail: written as .eml files to ${folder()}`);
    expect(host.output()).toContain(`links: ${host.url}/ui/ (this service's console at AUTH_PUBLIC_URL)`);
  });

  it('a password-reset mail lands as an .eml; its link, followed, sets a new password', async () => {
    const u = await newUser();
    expect((await settled(u.email, 'account_created')).status).toBe('outbox');
    const asked = await api('/v3/password_reset/request', { method: 'POST', json: { login: u.login } });
    expect(asked.status).toBe(202);
    const n = await settled(u.email, 'password_reset');
    expect(n).toMatchObject({ status: 'outbox', attempts: 1, lastError: null });
    expect(n.sentAt).not.toBeNull();

    // The file, as the folder holds it (the owner's only) and as the console's link serves it.
    const file = join(folder(), `${n.id}.eml`);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o077).toBe(0);
    const served = await fetch(`${host.url}/v4/notifications/${n.id}/message`, {
      headers: { Authorization: admin },
    });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('message/rfc822');
    expect(served.headers.get('content-disposition')).toBe(`attachment; filename="${n.id}.eml"`);
    const raw = Buffer.from(await served.arrayBuffer());
    expect(raw.equals(readFileSync(file))).toBe(true);

    // What a mail client shows: the headers and both parts of the SMTP path's message.
    const mail = await simpleParser(raw);
    expect(mail.subject).toBe('Восстановление пароля');
    expect(mail.to).toMatchObject({ value: [{ address: u.email }] });
    expect(mail.messageId).toMatch(new RegExp(`^<${n.id}@`));
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    expect(mail.html).toContain('<html lang="ru">');
    const link = /(https?:\/\/\S+\/reset-password#token=([A-Za-z0-9_-]{40,}))/.exec(mail.text ?? '');
    expect(link).not.toBeNull();
    // Without a front end configured, the link opens this host's console page, which sets the password.
    expect(link![1]!.startsWith(`${host.url}/ui/reset-password#token=`), link![1]).toBe(true);

    // Followed: the console's page, then the token it posts sets the new password.
    const page = await fetch(link![1]!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const confirm = await api('/v3/password_reset/confirm', {
      method: 'POST',
      json: { token: link![2], newPassword: 'My0wn#pass' },
    });
    expect(confirm.status).toBe(204);
    const login = await api('/v3/login_without_session', { method: 'POST', auth: basic(u.login, 'My0wn#pass') });
    expect(login.status).toBe(200);
  });

  it('only administrators get a file, only of a notification in the outbox; ids are checked', async () => {
    const u = await newUser();
    const n = await settled(u.email, 'account_created');
    const own = await fetch(`${host.url}/v4/notifications/${n.id}/message`, {
      headers: { Authorization: basic(u.login, PASSWORD) },
    });
    expect(own.status).toBe(403);
    const unknown = await api(`/v4/notifications/${crypto.randomUUID()}/message`, { auth: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    for (const bad of ['..%2F..%2Fauth.db', 'not-an-id', `${n.id}.eml`]) {
      const r = await api(`/v4/notifications/${bad}/message`, { auth: admin });
      expect([404, 422], bad).toContain(r.status);
      expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it("lent rights never open an administrator's or auditor's mail (a reset link), only a user's", async () => {
    const holder = await createSuperAccessHolder({ base: host.url });
    const read = (id: string, auth: string) =>
      fetch(`${host.url}/v4/notifications/${id}/message`, { headers: { Authorization: auth } });
    const plain = await newUser();
    const plainMail = await settled(plain.email, 'account_created');
    expect((await read(plainMail.id, holder.auth)).status).toBe(200);
    for (const role of ['admin', 'auditor']) {
      const login = uniqueLogin(`ob${role}`);
      const email = `${login}@example.com`;
      const made = await api<{ id: string }>('/v4/users', {
        method: 'POST',
        auth: admin,
        json: { login, password: PASSWORD, email, role },
      });
      expect(made.status).toBe(201);
      await settled(email, 'account_created');
      expect((await api('/v3/password_reset/request', { method: 'POST', json: { login } })).status).toBe(202);
      const reset = await settled(email, 'password_reset');
      expect(reset.status).toBe('outbox');
      // The holder sees that the mail exists (the list never shows a link), and cannot open it.
      const listed = await api<{ items: Array<{ id: string }> }>(`/v4/notifications?recipient=${email}`, {
        auth: holder.auth,
      });
      expect(listed.body.items.map((i) => i.id)).toContain(reset.id);
      expect(JSON.stringify(listed.body)).not.toMatch(/token=/);
      const refused = await read(reset.id, holder.auth);
      expect(refused.status, role).toBe(403);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(
        /^super-access cannot read the mail of an account with administrator/,
      );
      // An administrator may: an administrator may set that password anyway (docs/mail.md).
      expect((await read(reset.id, admin)).status).toBe(200);
      if (role === 'admin') await api(`/v4/users/${made.body.id}`, { method: 'DELETE', auth: admin });
    }
  });

  it('"send a test mail" writes to the outbox and names the file', async () => {
    const r = await api('/v3/settings/mail/test', { method: 'POST', auth: admin, json: { to: 'ops@example.com' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ outcome: 'outbox', to: 'ops@example.com', stage: null, server: null });
    expect(r.body.file).toMatch(new RegExp(`^${folder()}/[0-9a-f-]{36}\\.eml$`));
    const mail = await simpleParser(readFileSync(r.body.file));
    expect(mail.subject).toBe('Тестовое письмо');
  });

  it("the administrator's overview says where mail goes: the outbox", async () => {
    const r = await api('/v4/admin/overview', { auth: admin });
    expect(r.status).toBe(200);
    expect(r.body.mail).toEqual({ state: 'outbox', detail: null });
  });
});

describe.runIf(kind === 'edge')('no mail server on the edge (no file system: no outbox)', () => {
  it('a mail is given up, "mail is not configured"; the test mail says so; no file is served', async () => {
    const u = await newUser();
    const n = await settled(u.email, 'account_created');
    expect(n).toMatchObject({ status: 'given_up', attempts: 0 });
    expect(n.lastError).toMatch(/^mail is not configured/);
    expect((await api(`/v4/notifications/${n.id}/message`, { auth: admin })).status).toBe(404);
    const r = await api('/v3/settings/mail/test', { method: 'POST', auth: admin, json: {} });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual(['to']);
    const t = await api('/v3/settings/mail/test', { method: 'POST', auth: admin, json: { to: 'ops@example.com' } });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ outcome: 'not_configured', stage: null, file: null });
    expect(t.body.detail).toMatch(/^mail is not configured/);
    const o = await api('/v4/admin/overview', { auth: admin });
    expect(o.body.mail).toMatchObject({ state: 'not_configured', detail: expect.stringMatching(/^mail is not/) });
  });
});
