/** TOTP codes for the tests, from Debian's oathtool: an implementation independent of the service's. */
import { execFileSync } from 'node:child_process';

/** The code of the base32 `secret` at `atMs` (a time on the service's clock) plus `steps` periods of 30 s. */
export function totpCode(secret: string, atMs: number, steps = 0): string {
  const at = Math.floor(atMs / 1000) + steps * 30;
  return execFileSync('oathtool', ['--totp', '-b', secret, '-N', `@${at}`], { encoding: 'utf8' }).trim();
}

/**
 * Enrols a TOTP factor for the account signed in in `browser` (a cookie session at `base`, ROOT_PATH
 * included): starts it, confirms it with the current code; returns the base32 secret.
 */
export async function enrolTotp(
  browser: {
    fetch(url: string, init?: RequestInit): Promise<Response>;
    postJson(url: string, body: unknown): Promise<Response>;
  },
  base: string,
): Promise<string> {
  const started = await browser.fetch(`${base}/v4/users/me/totp`, { method: 'POST' });
  if (started.status !== 201) throw new Error(`TOTP enrolment refused: ${started.status}`);
  const { otpauthUri } = (await started.json()) as { otpauthUri: string };
  const secret = new URL(otpauthUri).searchParams.get('secret')!;
  const confirmed = await browser.postJson(`${base}/v4/users/me/totp/confirm`, { code: totpCode(secret, Date.now()) });
  if (confirmed.status !== 204) throw new Error(`TOTP confirmation refused: ${confirmed.status}`);
  return secret;
}
