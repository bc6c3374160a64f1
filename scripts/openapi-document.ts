/**
 * The OpenAPI document as the build writes it (docs/generate.ts): the app built on a configuration
 * without a server, a database or the network (the dependencies below are never called while the
 * document is generated). scripts/build-console.mjs bundles this module and writes the default
 * configuration's document to STATIC_DIR/openapi/openapi.json; scripts/openapi-lint.ts lints it.
 */
import { buildApp } from '../worker/src/app.js';
import type { PasswordVerifier } from '../worker/src/passwords/verifier.js';
import { ConfigService, parseEnvironment } from '../worker/src/config/index.js';
import { generateApiDocument } from '../worker/src/docs/generate.js';
import type { ApiDocument } from '../worker/src/docs/document.js';
import type { Db } from '../worker/src/store/index.js';

const unused = (what: string) => () => {
  throw new Error(`generating the OpenAPI document used ${what}`);
};

/** The document of the configuration `vars` (environment variables; default: none set, ROOT_PATH /api/auth). */
export function generatedDocument(vars: Record<string, string> = {}): ApiDocument {
  const env = parseEnvironment(vars);
  const { api, docs } = buildApp({
    db: unused('the database') as () => Db,
    config: new ConfigService({ env, load: unused('saved settings') }),
    clock: Date.now,
    hostName: 'openapi-document',
    staticFiles: unused('static files'),
    verifier: {} as PasswordVerifier,
  });
  return generateApiDocument(api, docs);
}
