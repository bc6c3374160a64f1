/**
 * The Node host's log output: JSON lines on stdout, written in batches. A line per request (the
 * access log) written with console.log costs a system call and console's formatting each time,
 * about a tenth of an authenticated request's CPU (architecture.md §6). The lines go out in one write
 * every FLUSH_MS at most, or at once past MAX_BUFFERED characters: one write per turn of the event loop
 * still cost about 5 µs of a Bearer request's 75 (docs/performance.md, "Logins and the hot path"). Lines
 * after FLUSH_MS without a write go out at the end of their turn of the event loop, without a timer: at a
 * few lines a second (logins) each would otherwise wake the process FLUSH_MS later for its write alone.
 * Writes to stdout are synchronous for files and pipes on Linux, so nothing is lost on a normal exit
 * or a crash: the buffer is flushed on `exit` (which uncaught exceptions and process.exit also reach);
 * only a SIGKILL (or the machine's end) can drop the lines of the last FLUSH_MS.
 */

/** The longest a line waits for its write. */
export const FLUSH_MS = 10;

/** Flush at once past this many buffered characters. */
const MAX_BUFFERED = 64 * 1024;

/** A line writer batching to `out` (default: stdout). */
export function createBatchedLogWriter(out: { write(text: string): unknown } = process.stdout): {
  write(line: string): void;
  flush(): void;
} {
  let buffered: string[] = [];
  let size = 0;
  let scheduled = false;
  let lastWrite = Number.NEGATIVE_INFINITY;
  const flush = () => {
    scheduled = false;
    if (buffered.length === 0) return;
    const text = `${buffered.join('\n')}\n`;
    buffered = [];
    size = 0;
    lastWrite = Date.now();
    out.write(text);
  };
  process.on('exit', flush);
  return {
    write(line) {
      buffered.push(line);
      size += line.length;
      if (size >= MAX_BUFFERED) flush();
      else if (!scheduled) {
        scheduled = true;
        // After FLUSH_MS without a write, the lines of this turn of the event loop go out at its end
        // (setImmediate): a timer would wake an idle process for them alone (at login rates, a wake
        // per login, taking the core from the password hash). Otherwise within FLUSH_MS. Unref'd: a
        // waiting write keeps no process alive (`exit` flushes it).
        if (Date.now() - lastWrite >= FLUSH_MS) setImmediate(flush);
        else setTimeout(flush, FLUSH_MS).unref();
      }
    },
    flush,
  };
}
