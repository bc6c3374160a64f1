/** TOTP codes for the tests, from Debian's oathtool: an implementation independent of the service's. */
import { execFileSync } from 'node:child_process';

/** The code of the base32 `secret` at `atMs` (a time on the service's clock) plus `steps` periods of 30 s. */
export function totpCode(secret: string, atMs: number, steps = 0): string {
  const at = Math.floor(atMs / 1000) + steps * 30;
  return execFileSync('oathtool', ['--totp', '-b', secret, '-N', `@${at}`], { encoding: 'utf8' }).trim();
}
