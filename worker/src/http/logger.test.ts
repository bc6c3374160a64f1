/** The JSON logger: fields of a child, later fields win, credentials redacted at any depth, thresholds. */
import { describe, expect, it } from 'vitest';
import { createLogger, type Level } from './logger.js';

describe('logger', () => {
  it('writes one JSON object per line with the fields of its parents, redacting credential-like keys', () => {
    const lines: string[] = [];
    let threshold: Level = 'INFO';
    const root = createLogger({
      threshold: () => threshold,
      write: (l) => lines.push(l),
      now: () => 0,
      fields: { logger: 'app' },
    });
    const child = root.child({ requestId: 'r1', password: 'p' });
    child.info('hello', { nested: { token: 't', ok: 1, deeper: [{ Authorization: 'x' }] }, err: new Error('e') });
    child.debug('hidden');
    threshold = 'DEBUG';
    child.debug('shown', { requestId: 'r2' });
    const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(a).toMatchObject({
      time: '1970-01-01T00:00:00.000Z',
      level: 'INFO',
      msg: 'hello',
      logger: 'app',
      requestId: 'r1',
      password: '[redacted]',
    });
    expect(a!.nested).toEqual({ token: '[redacted]', ok: 1, deeper: [{ Authorization: '[redacted]' }] });
    expect(a!.err).toMatchObject({ name: 'Error', message: 'e' });
    expect(b).toMatchObject({ level: 'DEBUG', msg: 'shown', requestId: 'r2' });
  });

  it('a child may have its own threshold', () => {
    const lines: string[] = [];
    const root = createLogger({ threshold: () => 'ERROR', write: (l) => lines.push(l) });
    root.child({}, () => 'INFO').info('yes');
    root.info('no');
    expect(lines).toHaveLength(1);
  });
});
