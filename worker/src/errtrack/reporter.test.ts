/** The reporter's events: what they carry, and what they never carry. */
import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { errorEvent, maskSecrets, reportError, secretValues } from './reporter.js';
import { MalformedEnvelopeError, readEnvelope } from './envelope.js';
import { envelopeEndpoint, parseDsn, sameProject } from './dsn.js';

const opts = { environment: 'unit', logger: 'auth-service', clock: () => 1_700_000_000_000 };

describe('maskSecrets', () => {
  it('masks secret configuration values, credentials, API tokens and password-like pairs', () => {
    const config = parseEnvironment({
      SESSION_SECRET_KEY: 'session-secret-key-0123456789abcdef0123',
      LIBSQL_AUTH_TOKEN: 'libsql-token-value',
    });
    const secrets = secretValues(config);
    expect(secrets).toContain('session-secret-key-0123456789abcdef0123');
    const text = maskSecrets(
      'key session-secret-key-0123456789abcdef0123 token libsql-token-value auth Basic YWRtaW46cHc= Bearer ' +
        'ast_abc123 password=hunter2 {"password":"p@ss"} cookie: sid=1',
      secrets,
    );
    for (const s of [
      'session-secret-key',
      'libsql-token-value',
      'YWRtaW46cHc=',
      'ast_abc123',
      'hunter2',
      'p@ss',
      'sid=1',
    ])
      expect(text).not.toContain(s);
  });
});

describe('errorEvent', () => {
  it('carries type, masked message, frames, method, path and request id', () => {
    const err = new TypeError('failed with Bearer abc.def');
    const event = errorEvent(
      err,
      { ...opts, secrets: [] },
      { method: 'GET', url: 'https://svc/api/auth/x', requestId: 'r-1' },
    );
    expect(event.environment).toBe('unit');
    expect(event.timestamp).toBe(1_700_000_000);
    const ex = event.exception!.values![0]!;
    expect(ex).toMatchObject({
      type: 'TypeError',
      value: 'failed with Bearer [masked]',
      mechanism: { handled: false },
    });
    expect(ex.stacktrace!.frames!.length).toBeGreaterThan(0);
    expect(ex.stacktrace!.frames!.at(-1)!.filename).toContain('reporter.test.ts');
    expect(event.request).toEqual({ method: 'GET', url: 'https://svc/api/auth/x' });
    expect(event.tags).toEqual({ request_id: 'r-1' });
  });

  it('sends nothing without a DSN or without ERRTRACK_ENV', async () => {
    const base = {
      ...opts,
      ca: '',
      bridge: undefined,
      secrets: [],
      fetch: () => Promise.reject(new Error('must not be called')),
    };
    expect(await reportError({ ...base, dsn: '' }, new Error('x'))).toBeNull();
    expect(await reportError({ ...base, dsn: 'https://k@h/1', environment: '' }, new Error('x'))).toBeNull();
  });
});

describe('envelopes and DSNs', () => {
  it('reads framing with binary items, and refuses broken framing', () => {
    const bin = new Uint8Array([0, 10, 255, 10]);
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"dsn":"https://k@h/1"}\n{"type":"replay_recording","length":4}\n'),
      ...bin,
      ...new TextEncoder().encode('\n{"type":"event"}\n{}\n'),
    ]);
    expect(readEnvelope(bytes)).toEqual({ header: { dsn: 'https://k@h/1' }, itemTypes: ['replay_recording', 'event'] });
    expect(() => readEnvelope(new TextEncoder().encode('{"dsn":1}\n\n{"type":"event"}\n{}'))).toThrow(
      MalformedEnvelopeError,
    );
  });

  it('compares projects by host, port and id, and computes the ingest URL from the DSN only', () => {
    const a = parseDsn('https://key@Errors.Example.com:443/prefix/42')!;
    expect(a).toMatchObject({ host: 'errors.example.com', pathPrefix: '/prefix', projectId: '42' });
    expect(sameProject(a, parseDsn('https://other@errors.example.com/42')!)).toBe(true);
    expect(sameProject(a, parseDsn('https://key@errors.example.com:8443/42')!)).toBe(false);
    expect(envelopeEndpoint(a)).toBe('https://errors.example.com/prefix/api/42/envelope/');
    for (const bad of ['https://errors.example.com/42', 'ftp://k@h/1', 'https://k@h/x', 'https://k@h/1?x=1'])
      expect(parseDsn(bad)).toBeNull();
  });
});
