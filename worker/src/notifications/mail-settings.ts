/**
 * The Mail settings as one send needs them, read when the mail is sent (so a change through
 * /v3/settings applies to the next mail). EMAIL_HOST_PASSWORD saved through the settings API is
 * stored sealed (secret-box) and opened here, for that call only; one from the environment is used
 * as it is. While EMAIL_HOST is the placeholder nothing is attempted, nor while credentials are set
 * with EMAIL_USE_TLS off (they never go in clear).
 */
import { and, eq } from 'drizzle-orm';
import { REGISTRY, type ConfigSnapshot } from '../config/index.js';
import { isSealed, openSecret } from '../store/secret-box.js';
import type { Db } from '../store/index.js';
import { mailCredentialsSet } from '../settings/mail-secret.js';
import { settings } from '../../../schema/index.js';
import type { Mailbox, MailServer } from '../../../schema/bridge/index.js';

/** Connect and greeting timeouts of a send, and the idle time allowed on the socket. */
export const MAIL_TIMEOUTS = { connectTimeoutMs: 10_000, greetingTimeoutMs: 10_000, socketTimeoutMs: 30_000 } as const;

/**
 * No mail server is configured: EMAIL_HOST is the placeholder. The Node host's development outbox
 * then takes the mails (docs/mail.md, "Development outbox").
 */
export function noMailServer(config: ConfigSnapshot): boolean {
  return config.get('EMAIL_HOST') === REGISTRY.EMAIL_HOST.default;
}

/** Why mail cannot be sent at all with these settings, or null when it can be tried. */
export function mailNotConfigured(config: ConfigSnapshot): string | null {
  if (noMailServer(config)) return 'mail is not configured (EMAIL_HOST is the placeholder)';
  if (!senderOf(config)) return 'mail is not configured (EMAIL_FROM is not an address)';
  // Settings from the environment are not checked as a write is (settings/mail-secret.ts): refuse here.
  if (!config.get('EMAIL_USE_TLS') && mailCredentialsSet(config))
    return (
      'mail is not configured (EMAIL_HOST_USER and EMAIL_HOST_PASSWORD are set while EMAIL_USE_TLS is off: ' +
      'credentials never go without TLS)'
    );
  return null;
}

/** EMAIL_FROM as a mailbox: "Name <address>" or a bare address; null when it holds no address. */
export function senderOf(config: ConfigSnapshot): Mailbox | null {
  const raw = config
    .get('EMAIL_FROM')
    .replace(/[\r\n\0]/g, ' ')
    .trim();
  const named = /^(.*?)\s*<([^<>\s]+@[^<>\s]+)>$/.exec(raw);
  if (named) {
    const name = named[1]!.replace(/^"(.*)"$/, '$1').trim();
    return name ? { address: named[2]!, name } : { address: named[2]! };
  }
  return /^[^\s@<>]+@[^\s@<>]+$/.test(raw) ? { address: raw } : null;
}

/** The server settings for the bridge, with the password opened for this call. */
export async function mailServerOf(db: Db, config: ConfigSnapshot): Promise<MailServer> {
  const useTls = config.get('EMAIL_USE_TLS');
  // Without TLS no credentials at all (only the placeholder ones can be left here: see mailNotConfigured).
  return {
    host: config.get('EMAIL_HOST'),
    port: config.get('EMAIL_PORT'),
    useTls,
    user: useTls ? config.get('EMAIL_HOST_USER') : '',
    password: useTls ? await mailPassword(db, config) : '',
    ...MAIL_TIMEOUTS,
  };
}

/** EMAIL_HOST_PASSWORD in clear: opened when it was saved sealed through the settings API. */
export async function mailPassword(db: Db, config: ConfigSnapshot): Promise<string> {
  const value = config.get('EMAIL_HOST_PASSWORD');
  if (config.source('EMAIL_HOST_PASSWORD') !== 'ui' || !isSealed(value)) return value;
  // Sealed with a previous key (a rotation): re-sealed with the current one as it is read.
  const unchanged = and(eq(settings.name, 'EMAIL_HOST_PASSWORD'), eq(settings.value, value));
  return openSecret(config, value, (fresh) => db.update(settings).set({ value: fresh }).where(unchanged));
}
