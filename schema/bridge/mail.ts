/**
 * The bridge's mail capability (architecture.md §1): the worker sends one message per call with the
 * effective Mail settings (EMAIL_HOST, EMAIL_PORT, EMAIL_USE_TLS, EMAIL_HOST_USER and
 * EMAIL_HOST_PASSWORD, the password decrypted for that call only), read when the mail is sent, so a
 * change applies to the next mail. The mail server's CA (MAIL_CA_FILE) stays in the bridge's
 * environment.
 *
 * Header injection is refused here, on both sides: no address, display name or subject may hold a
 * CR, LF or NUL (a 400 from the bridge; the worker strips them from data before it calls).
 *
 * An SMTP reply, even a refusal, is an outcome (200, `outcome: 'rejected'` with the reply code and
 * the stage that refused). No reply at all is a problem: 502 MAIL_UNAVAILABLE (refused, dropped),
 * MAIL_TLS (TLS required but not offered, or the certificate not verified), 504 MAIL_TIMEOUT.
 */
import { z } from 'zod';

/** No CR, LF or NUL: what would let data start a new header line. */
const headerSafe = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/[\r\n\0]/.test(s), 'must not contain CR, LF or NUL (header injection)');

/** An address as a mail header and an SMTP envelope accept it: local@domain, nothing else. */
export const MailAddressSchema = headerSafe(320).pipe(
  z.string().regex(/^[^\s@<>(),;:"\\[\]]{1,64}@[^\s@<>(),;:"\\[\]]{1,255}$/, 'an address such as name@example.com'),
);

/** A mailbox: the address and an optional display name (encoded by the bridge as RFC 2047 when needed). */
export const MailboxSchema = /* @__PURE__ */ (() =>
  z.object({
    address: MailAddressSchema,
    name: headerSafe(256).optional(),
  }))();
export type Mailbox = z.infer<typeof MailboxSchema>;

/** How to reach the mail server: the effective Mail settings of the worker. */
export const MailServerSchema = /* @__PURE__ */ (() =>
  z.object({
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9.:[\]_-]+$/, 'a host name or IP address'),
    port: z.number().int().min(1).max(65535),
    /**
     * EMAIL_USE_TLS: TLS is required. Port 465: implicit TLS; any other port: STARTTLS, and a server
     * that does not offer it is refused (never a silent fall-back to plain text).
     */
    useTls: z.boolean(),
    /** EMAIL_HOST_USER; empty: no authentication. */
    user: z.string().max(256),
    /** EMAIL_HOST_PASSWORD, decrypted for this call only. */
    password: z.string().max(1024),
    connectTimeoutMs: z.number().int().min(100).max(600_000),
    greetingTimeoutMs: z.number().int().min(100).max(600_000),
    socketTimeoutMs: z.number().int().min(100).max(600_000),
  }))();
export type MailServer = z.infer<typeof MailServerSchema>;

/** Largest text or HTML body the bridge takes. */
export const MAIL_BODY_MAX_CHARS = 512 * 1024;

/** POST /v1/mail/send: one message to one recipient. */
export const MailSendRequestSchema = /* @__PURE__ */ (() =>
  z.object({
    server: MailServerSchema,
    from: MailboxSchema,
    to: MailboxSchema,
    subject: headerSafe(998),
    text: z.string().max(MAIL_BODY_MAX_CHARS),
    html: z.string().max(MAIL_BODY_MAX_CHARS),
    /** The Message-ID, stable per notification (a resend after a lost answer keeps it). */
    messageId: z.string().regex(/^<[A-Za-z0-9._-]{1,200}@[A-Za-z0-9.-]{1,200}>$/, 'a Message-ID such as <id@host>'),
    /** Content-Language of the message (ru, en). */
    language: z.string().regex(/^[a-z]{2}$/),
  }))();
export type MailSendRequest = z.infer<typeof MailSendRequestSchema>;

/** Where an SMTP refusal came: connecting, authenticating, the envelope (MAIL FROM, RCPT TO), the message. */
export const MailStageSchema = z.enum(['connect', 'auth', 'envelope', 'message']);

export const MailSendResponseSchema = z.discriminatedUnion('outcome', [
  /** The server accepted the message (250 after DATA). */
  z.object({ outcome: z.literal('sent'), response: z.string().max(1000) }),
  /** The server answered with a refusal; 4xx is temporary, 5xx permanent (per SMTP). */
  z.object({
    outcome: z.literal('rejected'),
    stage: MailStageSchema,
    responseCode: z.number().int().min(100).max(599).nullable(),
    response: z.string().max(1000),
  }),
]);
export type MailSendResponse = z.infer<typeof MailSendResponseSchema>;

/** A message as the worker composes it: what /v1/mail/send carries beside the server (and the outbox writes). */
export type MailMessage = Omit<MailSendRequest, 'server'>;

/**
 * The stages of one SMTP dialogue, in order, as "send a test mail" reports the one it reached:
 * connecting (and the greeting), TLS (implicit or STARTTLS), AUTH, MAIL FROM, RCPT TO, DATA.
 */
export const MAIL_TEST_STAGES = ['connect', 'tls', 'auth', 'mail_from', 'rcpt', 'data'] as const;
export const MailTestStageSchema = z.enum(MAIL_TEST_STAGES);
export type MailTestStage = z.infer<typeof MailTestStageSchema>;

/** POST /v1/mail/test: one message over a connection of its own (no pool), stage by stage. */
export const MailTestRequestSchema = MailSendRequestSchema;

/**
 * The result of a test: `ok` when the server accepted the message (`stage` data, its 250 reply);
 * otherwise the stage that failed, the server's reply code and text when it answered (null and the
 * bridge's own words when it did not: refused, dropped, timed out, TLS not verified), and `code`.
 */
export const MailTestResponseSchema = z.object({
  ok: z.boolean(),
  stage: MailTestStageSchema,
  responseCode: z.number().int().min(100).max(599).nullable(),
  response: z.string().max(1000),
  /** Without a reply: MAIL_UNAVAILABLE, MAIL_TIMEOUT or MAIL_TLS; with a reply: SMTP_4XX or SMTP_5XX. */
  code: z.string().max(40).nullable(),
});
export type MailTestResponse = z.infer<typeof MailTestResponseSchema>;
