/**
 * The Node host's log output: JSON lines on stdout, written in batches. A line per request (the
 * access log) written with console.log costs a system call and console's formatting each time,
 * about a tenth of an authenticated request's CPU (architecture.md §6). The lines go out in one write
 * every FLUSH_MS at most, or at once past MAX_BUFFERED characters: one write per turn of the event loop
 * still cost about 5 µs of a Bearer request's 75 (docs/performance.md, "Logins and the hot path"). A line
 * after FLUSH_MS without a write goes out at once, without a timer: at a few lines a second (logins)
 * each would otherwise wake the process FLUSH_MS later for its write alone.
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
      // A line after a quiet FLUSH_MS goes out at once: its own timer would wake an idle process
      // just for it (at login rates, a wake per login, preempting the password hash on its core).
      if (!scheduled && Date.now() - lastWrite >= FLUSH_MS) {
        lastWrite = Date.now();
        out.write(`${line}\n`);
        return;
      }
      buffered.push(line);
      size += line.length;
      if (size >= MAX_BUFFERED) flush();
      else if (!scheduled) {
        scheduled = true;
        // Unref'd: a waiting write keeps no process alive (`exit` flushes it).
        setTimeout(flush, FLUSH_MS).unref();
      }
    },
    flush,
  };
}
