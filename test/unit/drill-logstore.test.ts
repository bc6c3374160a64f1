import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('npm run drill:logstore', () => {
  it('runs the test log store, prints the variables, and goes down and up on command', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/drill-logstore.ts'], { cwd: ROOT });
    const exited = new Promise((r) => child.on('exit', r));
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const waitFor = async (text: string) => {
      for (let i = 0; i < 300 && !out.includes(text); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toContain(text);
    };
    await waitFor('Commands:');
    const url = /LOGSTORE_URLS=(https:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    expect(out).toContain(`LOGSTORE_ALLOWED_URLS=${url}`);
    const caFile = /LOGSTORE_CA_FILE=(\S+)/.exec(out)![1]!;
    // A new connection each time (a kept-alive one would outlive "down"), verified with the printed CA.
    const get = () =>
      undiciFetch(url!, {
        headers: { Authorization: `Basic ${btoa('drill:drill-password')}` },
        dispatcher: new Agent({ connect: { ca: readFileSync(caFile, 'utf8') }, pipelining: 0 }),
      }).then(
        (r) => r.status,
        () => 'refused',
      );
    expect(await get()).toBe(200);
    child.stdin.write('down\n');
    await waitFor('store: refuse');
    expect(await get()).toBe('refused');
    child.stdin.write('up\n');
    await waitFor('store: up');
    expect(await get()).toBe(200);
    child.stdin.write('count\nquit\n');
    await waitFor('0 audit documents');
    expect(await exited).toBe(0);
  }, 60_000);
});
