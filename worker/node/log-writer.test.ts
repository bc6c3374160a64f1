/**
 * The Node host's batched log writer: order kept, a write per FLUSH_MS at most (and the lines of a turn
 * after a quiet one at its end), nothing lost at exit.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBatchedLogWriter, FLUSH_MS } from './log-writer.js';

describe('batched log writer', () => {
  afterEach(() => vi.useRealTimers());

  it("writes a quiet FLUSH_MS's lines at the end of their turn, the lines within FLUSH_MS in one", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const writes: string[] = [];
    const w = createBatchedLogWriter({ write: (t: string) => writes.push(t) });
    // Nothing written for FLUSH_MS: the lines of this turn go out at its end, no timer (a timer would wake
    // an idle process for them alone).
    w.write('{"a":0}');
    w.write('{"a":0.5}');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['{"a":0}\n{"a":0.5}\n']);
    w.write('{"a":1}');
    await new Promise((r) => setImmediate(r));
    w.write('{"a":2}');
    await vi.advanceTimersByTimeAsync(FLUSH_MS - 1);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes[1]).toBe('{"a":1}\n{"a":2}\n');
    // Within FLUSH_MS of that write: batched again (here flushed by hand).
    w.write('{"a":3}');
    expect(writes).toHaveLength(2);
    w.flush();
    expect(writes[2]).toBe('{"a":3}\n');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    expect(writes).toHaveLength(3);
    // Quiet again for FLUSH_MS: at the end of the turn.
    w.write('{"a":4}');
    await new Promise((r) => setImmediate(r));
    expect(writes[3]).toBe('{"a":4}\n');
  });

  it('flushes a large batch at once', () => {
    const writes: string[] = [];
    const w = createBatchedLogWriter({ write: (t: string) => writes.push(t) });
    w.write('x'.repeat(70 * 1024));
    expect(writes).toHaveLength(1);
  });

  it('loses nothing when the process exits right after writing (process.exit, uncaught error)', () => {
    const loader = pathToFileURL(join(process.cwd(), 'node_modules/tsx/dist/loader.mjs')).href;
    const module = pathToFileURL(join(import.meta.dirname, 'log-writer.ts')).href;
    for (const ending of ['process.exit(0)', 'throw new Error("boom")']) {
      const script =
        `import { createBatchedLogWriter } from '${module}'; const w = createBatchedLogWriter(); for ` +
        `(let i = 0; i < 1000; i++) w.write('line ' + i); ${ending};`;
      const r = spawnSync(process.execPath, ['--import', loader, '--input-type=module', '-e', script], {
        encoding: 'utf8',
      });
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(1000);
      expect(lines[999]).toBe('line 999');
    }
  });
});
