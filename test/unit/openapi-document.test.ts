/**
 * The served OpenAPI document (docs/api.md): generated from the routes at build time
 * (worker/src/docs/generate.ts), written by scripts/build-console.mjs as STATIC_DIR/openapi/openapi.json,
 * and served by both hosts made the deployment's (`deployedAs`, worker/src/docs/routes.ts), so neither
 * host, and not the edge script, carries the generator (docs/performance.md, "The edge bundle").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedDocument } from '../../scripts/openapi-document.js';
import { deployedAs } from '../../worker/src/docs/routes.js';

describe('the OpenAPI document written at build time', () => {
  it('is the generated document of the default configuration', () => {
    const dir = mkdtempSync(join(tmpdir(), 'static-'));
    try {
      execFileSync(process.execPath, ['scripts/build-console.mjs'], {
        env: { ...process.env, AUTH_STATIC_DIR: dir },
        stdio: 'ignore',
      });
      const built = JSON.parse(readFileSync(join(dir, 'openapi', 'openapi.json'), 'utf8'));
      expect(built).toEqual(generatedDocument());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('is in one language: English, its title and description too (unless the deployment sets its own)', () => {
    const doc = generatedDocument();
    // Words, not letters: the login rules quote a homoglyph (`аdmin` with a Cyrillic `а`) on purpose.
    const cyrillic = JSON.stringify(doc).match(/[^"]{0,40}[\u0400-\u04FF]{2,}[^"]{0,40}/g);
    expect(cyrillic, 'Cyrillic words in the default OpenAPI document').toBeNull();
    expect((doc as { info?: unknown }).info).toMatchObject({
      title: 'AUTH',
      description: expect.stringMatching(/authorization service/),
    });
  });

  it("made a deployment's, is what that configuration generates: nothing else depends on it", () => {
    const vars = {
      AUTH_ROOT_PATH: '/edge/auth',
      AUTH_PROJECT_NAME: 'Another name',
      AUTH_PROJECT_DESCRIPTION: 'Another description',
      AUTH_DOCS_PREFIX: '/reference',
      AUTH_STATIC_PATH: '/assets',
      AUTH_MAX_BODY_SIZE: '4096',
      AUTH_METRICS_TOKEN: 'a-metrics-token-of-32-characters-x',
    };
    const o = { root: vars.AUTH_ROOT_PATH, title: vars.AUTH_PROJECT_NAME, description: vars.AUTH_PROJECT_DESCRIPTION };
    const deployed = deployedAs(generatedDocument(), o);
    expect(deployed).toEqual(generatedDocument(vars));
    expect(deployed).toMatchObject({
      info: { title: 'Another name', description: 'Another description' },
      servers: [{ url: '/edge/auth' }],
      components: { securitySchemes: { oauth2: { flows: { password: { tokenUrl: '/edge/auth/v3/oauth_login' } } } } },
    });
    // The root path is the server's, never the paths'.
    expect(Object.keys(deployed.paths ?? {})).toContain('/v3/login');
  });
});
