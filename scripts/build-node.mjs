// `npm run build` (run by `npm start` first, as `prestart`): the Node host compiled into one ES module,
// dist/node/main.js, with esbuild. The packages stay external (node_modules, native bindings). Running
// compiled JavaScript spares the host tsx's compile at start and its per-closure name helpers on the
// hot path (architecture.md §6). dist/node sits two folders deep like worker/node, so paths
// built from import.meta.url (the migrations folder) resolve the same from both.
// The files are written whole and renamed into place: the HTTP suites build it too (their global
// setup) while the other suite's hosts may be starting from it (docs/testing.md).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const result = await build({
  entryPoints: ['worker/node/main.ts'],
  outfile: 'dist/node/main.js',
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  write: false,
});
mkdirSync('dist/node', { recursive: true });
for (const file of result.outputFiles) {
  const part = `${file.path}.${process.pid}.part`;
  writeFileSync(part, file.contents);
  renameSync(part, file.path);
}
