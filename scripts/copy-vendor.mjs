// Copies the Swagger UI assets from swagger-ui-dist into STATIC_DIR/vendor/swagger-ui, so the docs
// page works with no network (run by `npm install` as the postinstall step).
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const src = dirname(require.resolve('swagger-ui-dist/package.json'));
const dest = join(process.env.AUTH_STATIC_DIR ?? 'static', 'vendor', 'swagger-ui');
mkdirSync(dest, { recursive: true });
for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'oauth2-redirect.html']) {
  copyFileSync(join(src, file), join(dest, file));
}
console.log(`swagger-ui assets copied to ${dest}`);
