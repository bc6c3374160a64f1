/**
 * The Node host's start banner on a terminal (worker/node/start-banner.ts; docs/architecture.md §5.4, "Start
 * messages"): the bridge it uses, or none and what then fails; the kept sealing key's file.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { startBanner } from '../../worker/node/start-banner.js';

const facts = {
  url: 'http://127.0.0.1:8001/api/auth',
  config: parseEnvironment({}),
  adminExists: true,
  bridge: null,
};

describe("the terminal's start banner", () => {
  it('names the external bridge when one is configured', () => {
    const banner = startBanner({ ...facts, bridge: 'https://bridge.example.internal:8443' });
    expect(banner).toMatch(/\n {2}bridge: +https:\/\/bridge\.example\.internal:8443\n/);
  });

  it('says when there is no bridge, and what then answers 503', () => {
    expect(startBanner(facts)).toMatch(
      /\n {2}bridge: +none: LDAP logins, mail through a server and the log store answer 503/,
    );
  });

  it('names the kept key file and says to back it up with the database', () => {
    const file = join(process.cwd(), 'data', 'secrets.key');
    const banner = startBanner({ ...facts, sealingKey: { file, created: true } });
    expect(banner).toMatch(
      /secrets key: +data\/secrets\.key \(generated at this start; no AUTH_SECRETS_ENCRYPTION_KEY\)/,
    );
    expect(banner).toContain('back it up with the database');
    // A configured key: nothing kept, nothing to name.
    expect(startBanner(facts)).not.toContain('secrets key');
  });
});
