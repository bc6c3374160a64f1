/**
 * Structured JSON logs, one object per line. Fields whose names suggest credentials are never
 * written (defence in depth: callers are expected not to pass them in the first place).
 */
import { isoTime } from './iso-time.js';

export const LEVELS = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 } as const;
export type Level = keyof typeof LEVELS;

export type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: Level, msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warning(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line, with its own threshold source. */
  child(fields: LogFields, threshold?: () => Level): Logger;
}

const SENSITIVE = /authorization|cookie|password|passwd|secret|token|api[-_]?key|credential/i;

/** Field names seen so far and whether they are sensitive (a few dozen names; a line per request). */
const sensitiveNames = new Map<string, boolean>();
function isSensitive(name: string): boolean {
  let sensitive = sensitiveNames.get(name);
  if (sensitive === undefined) {
    sensitive = SENSITIVE.test(name);
    // Bounded, should callers ever build field names from data.
    if (sensitiveNames.size < 1_000) sensitiveNames.set(name, sensitive);
  }
  return sensitive;
}

function scrub(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSensitive(k) ? '[redacted]' : scrub(v, depth + 1);
  return out;
}

/** Normalises a LOG_LEVEL value (WARN is WARNING). */
export function toLevel(value: string): Level {
  const v = value.toUpperCase();
  return v === 'WARN' ? 'WARNING' : v in LEVELS ? (v as Level) : 'INFO';
}

export interface LoggerOptions {
  /** The current threshold; read at every line so a settings change applies at once. */
  threshold: () => Level;
  write?: (line: string) => void;
  now?: () => number;
  fields?: LogFields;
}

const writeToConsole = (line: string) => console.log(line);

/**
 * A JSON-lines logger. A class rather than closures: the app makes a child per request (bound to
 * its request id) and writes an access line per request, so making one must cost next to nothing.
 */
class JsonLogger implements Logger {
  constructor(
    private readonly threshold: () => Level,
    private readonly write: (line: string) => void,
    private readonly now: () => number,
    private readonly base: LogFields,
  ) {}

  log(level: Level, msg: string, fields?: LogFields): void {
    if (LEVELS[level] < LEVELS[this.threshold()]) return;
    const entry: LogFields = { time: isoTime(this.now()), level, msg };
    // Later keys win, as in { ...base, ...fields }; every value scrubbed.
    for (const k in this.base) entry[k] = isSensitive(k) ? '[redacted]' : scrub(this.base[k], 1);
    if (fields) for (const k in fields) entry[k] = isSensitive(k) ? '[redacted]' : scrub(fields[k], 1);
    this.write(JSON.stringify(entry));
  }

  debug(msg: string, fields?: LogFields): void {
    this.log('DEBUG', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.log('INFO', msg, fields);
  }

  warning(msg: string, fields?: LogFields): void {
    this.log('WARNING', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.log('ERROR', msg, fields);
  }

  child(fields: LogFields, threshold?: () => Level): Logger {
    return new JsonLogger(threshold ?? this.threshold, this.write, this.now, { ...this.base, ...fields });
  }
}

/** Creates a JSON-lines logger. */
export function createLogger(o: LoggerOptions): Logger {
  return new JsonLogger(o.threshold, o.write ?? writeToConsole, o.now ?? Date.now, o.fields ?? {});
}
