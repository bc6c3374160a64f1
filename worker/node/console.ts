/**
 * Messages of the Node host and the scripts before (or instead of) serving: readable lines for a
 * person at a terminal, one JSON log line each when the output goes to a file or a log collector.
 */
import { createServer } from 'node:net';
import { createLogger } from '../src/http/logger.js';

export type StartLevel = 'INFO' | 'WARNING' | 'CRITICAL';

/** Formats a message for `stream`: plain lines on a terminal, else one JSON line (the log format). */
export function formatMessage(level: StartLevel, message: string, tty: boolean, now = new Date()): string {
  if (!tty) {
    // The service's log line, written by its logger (the same fields and scrubbing as every other).
    let line = '';
    createLogger({ threshold: () => 'DEBUG', now: () => now.getTime(), write: (l) => (line = l) }).log(level, message);
    return `${line}\n`;
  }
  const prefix = level === 'CRITICAL' ? 'error: ' : level === 'WARNING' ? 'warning: ' : '';
  // A multi-line message (one line per bad variable) stays multi-line, indented under the first.
  const [first, ...rest] = message.split('\n');
  return `${prefix}${first}\n${rest.map((l) => `  ${l}\n`).join('')}`;
}

/** Writes a message to stderr in the form that suits it (terminal or not). */
export function say(level: StartLevel, message: string): void {
  process.stderr.write(formatMessage(level, message, process.stderr.isTTY === true));
}

/** Thrown when a port to listen on is taken; the message names the variable that sets it. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly variable: string,
    what: string,
  ) {
    super(
      `port ${port} is already in use, so ${what} cannot listen there (${variable}). ` +
        `Stop what listens on it (another start of this service?), or set ${variable} to a free port.`,
    );
    this.name = 'PortInUseError';
  }
}

/**
 * Checks that `port` can be listened on at `host` (all interfaces when undefined) by briefly
 * listening on it. Port 0 (any free port) always passes. Throws PortInUseError when taken.
 */
export async function assertPortFree(port: number, host: string | undefined, variable: string, what: string) {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err) => reject(describeListenError(err, port, variable, what)));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** Turns a listen error into the message a person can act on (EADDRINUSE names the variable). */
export function describeListenError(err: unknown, port: number, variable: string, what: string): Error {
  const inUse = err instanceof Error && (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
  if (inUse) return new PortInUseError(port, variable, what);
  return err instanceof Error ? err : new Error(String(err));
}
