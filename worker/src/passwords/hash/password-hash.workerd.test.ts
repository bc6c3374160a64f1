/**
 * Proves the WASM backend runs INSIDE workerd, built the way production is:
 * a throw-away worker entry that uses the exact production import line is
 * bundled by `wrangler deploy --dry-run` (default module rules: `.wasm`
 * becomes a CompiledWasm module, i.e. a WebAssembly.Module compiled at upload)
 * and run in workerd through Miniflare.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNobleHasher, parsePhc } from './index.js';
import { createNodeNativeHasher } from '../../../node/native-hasher.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '../../../..');
const require = createRequire(import.meta.url);
const COMPATIBILITY_DATE = '2026-04-20'; // same as the project's wrangler.toml

// The worker under test. `import argon2Wasm from '@phi-ag/argon2/argon2.wasm'`
// is the line the real worker entry uses.
const entrySource = (indexPath: string): string => `
import argon2Wasm from '@phi-ag/argon2/argon2.wasm';
import { createEdgeHasher } from ${JSON.stringify(indexPath)};

let wasmError;
const hasher = createEdgeHasher(argon2Wasm, { onWasmUnavailable: (e) => { wasmError = String(e); } });
const fallback = createEdgeHasher(undefined); // noble, as used when WASM is unavailable

// An empty but valid module: workerd must refuse to compile it at run time.
const EMPTY_WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);

export default {
  async fetch(request) {
    const body = await request.json();
    const h = body.backend === 'fallback' ? fallback : hasher;
    switch (body.op) {
      case 'info':
        return Response.json({
          name: hasher.name,
          fallbackName: fallback.name,
          wasmError,
          isModule: argon2Wasm instanceof WebAssembly.Module,
        });
      case 'hash':
        return Response.json({ name: h.name, phc: await h.hash(body.password) });
      case 'verify':
        return Response.json({ name: h.name, ok: await h.verify(body.phc, body.password) });
      case 'runtime-compile': {
        const errors = [];
        try { new WebAssembly.Module(EMPTY_WASM); errors.push(null); } catch (e) { errors.push(String(e)); }
        try { await WebAssembly.compile(EMPTY_WASM); errors.push(null); } catch (e) { errors.push(String(e)); }
        return Response.json({ errors });
      }
      default:
        return new Response('bad op', { status: 400 });
    }
  },
};
`;

interface WorkerReply {
  name?: string;
  fallbackName?: string;
  wasmError?: string;
  isModule?: boolean;
  phc?: string;
  ok?: boolean;
  errors?: (string | null)[];
}

describe('WASM backend inside workerd (wrangler bundle + Miniflare)', () => {
  let tmp = '';
  let mf: Miniflare | undefined;

  const call = async (body: Record<string, unknown>): Promise<WorkerReply> => {
    const res = await mf!.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    return (await res.json()) as WorkerReply;
  };

  beforeAll(async () => {
    // Inside node_modules so the bare '@phi-ag/argon2/...' specifier resolves
    // exactly as from worker/src; removed in afterAll.
    const cacheDir = join(projectRoot, 'node_modules', '.cache');
    await mkdir(cacheDir, { recursive: true });
    tmp = await mkdtemp(join(cacheDir, 'password-hash-workerd-'));
    const outDir = join(tmp, 'dist');
    await writeFile(join(tmp, 'entry.js'), entrySource(join(here, 'index.ts')));
    await writeFile(
      join(tmp, 'wrangler.json'),
      JSON.stringify({ name: 'password-hash-test', main: 'entry.js', compatibility_date: COMPATIBILITY_DATE }),
    );
    const wrangler = join(dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js');
    await promisify(execFile)(
      process.execPath,
      [wrangler, 'deploy', '--dry-run', '--outdir', outDir, '--config', join(tmp, 'wrangler.json')],
      { cwd: tmp, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' } },
    );
    mf = new Miniflare({
      modules: true,
      scriptPath: join(outDir, 'entry.js'),
      modulesRoot: outDir,
      // What wrangler's default rules declare for the .wasm file it emitted.
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: COMPATIBILITY_DATE,
    });
  }, 120_000);

  afterAll(async () => {
    await mf?.dispose();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('the import yields a WebAssembly.Module and the WASM backend is used (no fallback)', async () => {
    const info = await call({ op: 'info' });
    expect(info).toMatchObject({ name: 'wasm', fallbackName: 'noble', isModule: true });
    expect(info.wasmError).toBeUndefined();
  });

  it('workerd refuses run-time WebAssembly compilation (why the module is injected)', async () => {
    const { errors } = await call({ op: 'runtime-compile' });
    expect(errors).toHaveLength(2);
    for (const error of errors!) expect(error).toMatch(/code generation disallowed/i);
  });

  it('a hash made in workerd verifies with noble and native on Node', async () => {
    const password = 'Grüße aus workerd 🔐';
    const { name, phc } = await call({ op: 'hash', password });
    expect(name).toBe('wasm');
    expect(parsePhc(phc!)).toMatchObject({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(await createNobleHasher().verify(phc!, password)).toBe(true);
    expect(await createNodeNativeHasher().verify(phc!, password)).toBe(true);
    expect(await createNodeNativeHasher().verify(phc!, password.normalize('NFD'))).toBe(false);
  }, 60_000);

  it('a noble hash made on Node verifies inside workerd; wrong password is false', async () => {
    const password = 'pässwörd from node';
    const phc = await createNobleHasher().hash(password);
    expect(await call({ op: 'verify', phc, password })).toEqual({ name: 'wasm', ok: true });
    expect(await call({ op: 'verify', phc, password: 'pässwörd from nodE' })).toEqual({ name: 'wasm', ok: false });
    expect(await call({ op: 'verify', phc: phc.replace('t=2', 't=3'), password })).toEqual({ name: 'wasm', ok: false });
    expect(await call({ op: 'verify', phc: 'garbage', password })).toEqual({ name: 'wasm', ok: false });
  }, 60_000);

  it('the noble fallback also runs in workerd and reads WASM hashes', async () => {
    const password = 'fallback';
    const { phc } = await call({ op: 'hash', password });
    expect(await call({ op: 'verify', backend: 'fallback', phc, password })).toEqual({ name: 'noble', ok: true });
  }, 60_000);
});
