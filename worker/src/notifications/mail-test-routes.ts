/**
 * "Send a test mail" (docs/mail.md, "Test mail"): POST /v3/settings/mail/test makes one real attempt
 * with the Mail settings in force, or with unsaved ones given in the request (nothing is saved), and
 * reports the SMTP stage reached and the server's reply. The password follows the rule of a settings
 * write (settings/mail-secret.ts): the stored one never goes to a host, port or plain connection
 * given here. While no mail server is configured, the Node host writes the test mail to its
 * development outbox and names the file; the edge says mail is not configured.
 */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { parseValue, type VarName } from '../config/index.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses, type FieldError } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { mailSecretErrors, type SettingsView } from '../settings/mail-secret.js';
import {
  MAIL_TEST_STAGES,
  MailAddressSchema,
  MailTestResponseSchema,
  type MailMessage,
} from '../../../schema/bridge/index.js';
import { MAIL_TIMEOUTS, mailNotConfigured, mailPassword, noMailServer, senderOf } from './mail-settings.js';
import { W } from './mail-test-api-words.js';

const TEST_VARS = [
  'EMAIL_HOST',
  'EMAIL_PORT',
  'EMAIL_USE_TLS',
  'EMAIL_HOST_USER',
  'EMAIL_HOST_PASSWORD',
  'EMAIL_FROM',
] as const satisfies readonly VarName[];

const TestRequest = z
  .object({
    to: z.string().trim().max(320).optional().openapi({
      description: W.d1,
      example: 'admin@example.com',
    }),
    values: z
      .object(Object.fromEntries(TEST_VARS.map((n) => [n, z.union([z.string(), z.number(), z.boolean()]).optional()])))
      .strict()
      .optional()
      .openapi({
        description: W.d2,
        example: { EMAIL_HOST: 'smtp.example.com', EMAIL_PORT: 587, EMAIL_HOST_PASSWORD: 'secret' },
      }),
  })
  .strict()
  .openapi('MailTestRequest');

const OUTCOMES = ['sent', 'refused', 'failed', 'outbox', 'not_configured'] as const;

const TestResult = z
  .object({
    outcome: z.enum(OUTCOMES).openapi({
      description: W.d3,
    }),
    to: z.string(),
    server: z.string().nullable().openapi({ description: W.d4 }),
    stage: z.enum(MAIL_TEST_STAGES).nullable().openapi({
      description: W.d5,
    }),
    responseCode: z.number().int().nullable().openapi({ description: W.d6 }),
    response: z.string().nullable().openapi({ description: W.d7 }),
    file: z.string().nullable().openapi({ description: W.d8 }),
    detail: z.string().openapi({ description: 'the result in words' }),
  })
  .openapi('MailTestResult');
type TestResult = z.infer<typeof TestResult>;

const route = protectedRoute(
  { ...adminOnly(superAccess.refused('send a test mail'), 'settings:write'), stepUp: true },
  {
    method: 'post',
    operationId: 'sendTestMail',
    path: '/v3/settings/mail/test',
    tags: ['settings'],
    summary: 'Send a test mail',
    description: W.d9,
    request: { body: { required: true, content: { 'application/json': { schema: TestRequest } } } },
    responses: {
      200: { description: 'what the attempt reached', content: { 'application/json': { schema: TestResult } } },
      ...problemResponses(400, 422, 502, 503, 504),
    },
  },
);

/** The one answer of a test mail that got no SMTP reply, whatever the cause. */
const NO_SMTP_SERVER =
  'no SMTP server answered there (nothing listening, the connection refused or dropped, no greeting in time, or ' +
  'TLS failed before the greeting): the service log names the cause';

/** The test mail's words, in the language of the mails. */
function testMessage(language: string, sender: MailMessage['from'], to: string, id: string): MailMessage {
  const ru = language === 'ru';
  const subject = ru ? 'Тестовое письмо' : 'Test mail';
  const text = ru
    ? 'Это тестовое письмо сервиса авторизации: настройки почты работают.'
    : 'This is a test mail of the authorization service: the mail settings work.';
  const domain = sender.address.split('@')[1]!.replace(/[^A-Za-z0-9.-]/g, '') || 'auth-service';
  return {
    from: sender,
    to: { address: to },
    subject,
    text: `${text}\n`,
    html: `<!doctype html><html lang="${ru ? 'ru' : 'en'}"><body><p>${text}</p></body></html>`,
    messageId: `<${id}@${domain}>`,
    language: ru ? 'ru' : 'en',
  };
}

/** Registers the test mail. */
export function registerTestMail(app: App): void {
  app.openapi(route, async (c) => {
    const body = validated(c, 'json', TestRequest);
    const before = c.var.scope.config;
    const errors: FieldError[] = [];
    const given = new Map<VarName, unknown>();
    for (const [name, value] of Object.entries(body.values ?? {})) {
      if (value === undefined) continue;
      const r = parseValue(name as VarName, typeof value === 'string' ? value : String(value), 'ui');
      if (r.ok) given.set(name as VarName, r.value);
      else
        errors.push({
          location: 'json',
          path: `values.${name}`,
          message: `expected ${r.issue.expected}, received ${r.issue.received}`,
        });
    }
    const after: SettingsView = {
      get: ((n: VarName) => (given.has(n) ? given.get(n) : before.get(n))) as SettingsView['get'],
      source: (n) => (given.has(n) ? 'ui' : before.source(n)),
    };
    errors.push(...mailSecretErrors(before, after, [...given.keys()], c.var.deps.config.env));
    const to = body.to || c.var.principal.user.email?.trim() || '';
    if (!MailAddressSchema.safeParse(to).success)
      errors.push({
        location: 'json',
        path: 'to',
        message: body.to ? 'an address such as name@example.com' : 'you have no e-mail address: name a recipient',
      });
    if (errors.length > 0)
      throw new ProblemError('VALIDATION', {
        detail: errors.map((e) => `${e.path}: ${e.message}`).join('; '),
        extensions: { errors },
      });

    const view = { get: after.get, source: after.source } as typeof before;
    const id = crypto.randomUUID();
    const sender = senderOf(view);
    const message = testMessage(before.get('MAIL_LANGUAGE'), sender ?? { address: 'noreply@example.com' }, to, id);
    const none = { server: null, stage: null, responseCode: null, response: null, file: null };
    const outbox = c.var.scope.mailOutbox;
    if (noMailServer(view) && outbox) {
      const file = await outbox.write(id, message);
      const result: TestResult = {
        ...none,
        outcome: 'outbox',
        to,
        file,
        detail: `no mail server is configured (EMAIL_HOST is the placeholder): the mail was written to ${file}`,
      };
      return c.json(result, 200);
    }
    const unusable =
      mailNotConfigured(view) ?? (c.var.scope.bridge ? null : 'mail is not configured (no bridge: AUTH_BRIDGE_URL)');
    if (unusable) return c.json({ ...none, outcome: 'not_configured', to, detail: unusable } satisfies TestResult, 200);

    const useTls = view.get('EMAIL_USE_TLS');
    const password = given.has('EMAIL_HOST_PASSWORD')
      ? (given.get('EMAIL_HOST_PASSWORD') as string)
      : await mailPassword(c.var.scope.db, before);
    const server = {
      host: view.get('EMAIL_HOST'),
      port: view.get('EMAIL_PORT'),
      useTls,
      user: useTls ? view.get('EMAIL_HOST_USER') : '',
      password: useTls ? password : '',
      ...MAIL_TIMEOUTS,
    };
    const answer = await c.var.scope.bridge!.call(
      '/v1/mail/test',
      { server, ...message },
      MailTestResponseSchema,
      60_000,
    );
    const at = `${server.host}:${server.port}`;
    // No SMTP reply at all (refused, unreachable, silent, dropped, or TLS before any greeting): one answer
    // whatever the cause, so that the test mail cannot tell an open port from a closed one on the bridge's
    // network (docs/mail.md, "Test mail"); the cause goes to the log, for the operator.
    const noServer = !answer.ok && !answer.responseCode && (answer.stage === 'connect' || answer.stage === 'tls');
    if (noServer) {
      c.var.scope.logger.warning('test mail: no SMTP server answered', { server: at, cause: answer.code });
      Object.assign(answer, { stage: 'connect', response: NO_SMTP_SERVER });
    }
    const reply = answer.responseCode ? `${answer.responseCode} ${answer.response}` : answer.response;
    const result: TestResult = {
      outcome: answer.ok ? 'sent' : answer.responseCode ? 'refused' : 'failed',
      to,
      server: at,
      stage: answer.stage,
      responseCode: answer.responseCode,
      response: answer.response,
      file: null,
      detail: answer.ok
        ? `${at} accepted the mail to ${to}: ${reply}`
        : answer.responseCode
          ? `${at} refused at ${answer.stage}: ${reply}`
          : `no answer from ${at} at ${answer.stage}: ${reply}`,
    };
    c.var.scope.logger.info('test mail', {
      outcome: result.outcome,
      stage: result.stage,
      responseCode: result.responseCode,
    });
    return c.json(result, 200);
  });
}
