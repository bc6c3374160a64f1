/**
 * Structured JSON logs, one object per line. Fields whose names suggest credentials are never
 * written (defence in depth: callers are expected not to pass them in the first place).
 */
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

function scrub(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SENSITIVE.test(k) ? '[redacted]' : scrub(v, depth + 1);
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

/** Creates a JSON-lines logger. */
export function createLogger(o: LoggerOptions): Logger {
  const write = o.write ?? ((line: string) => console.log(line));
  const now = o.now ?? Date.now;
  const base = o.fields ?? {};
  const log = (level: Level, msg: string, fields: LogFields = {}) => {
    if (LEVELS[level] < LEVELS[o.threshold()]) return;
    const entry = { time: new Date(now()).toISOString(), level, msg, ...(scrub({ ...base, ...fields }) as LogFields) };
    write(JSON.stringify(entry));
  };
  return {
    log,
    debug: (m, f) => log('DEBUG', m, f),
    info: (m, f) => log('INFO', m, f),
    warning: (m, f) => log('WARNING', m, f),
    error: (m, f) => log('ERROR', m, f),
    child: (fields, threshold) => createLogger({ threshold: threshold ?? o.threshold, write, now, fields: { ...base, ...fields } }),
  };
}
