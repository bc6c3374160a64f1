/**
 * Process helpers of the benchmark: CPU pinning with `taskset`, stopping children, and reading CPU
 * time from /proc (Linux only; the edge CPU scenario needs it, the others do not).
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';

let tasksetCache: boolean | undefined;

/** Whether `taskset` (util-linux) is available and this machine has at least two CPUs to pin to. */
export function canPin(): boolean {
  if (tasksetCache === undefined) {
    if (availableParallelism() < 2) return (tasksetCache = false);
    try {
      execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
      tasksetCache = true;
    } catch {
      tasksetCache = false;
    }
  }
  return tasksetCache;
}

/**
 * Keeps every CPU out of its sleep states while the benchmark runs (Linux's PM QoS interface:
 * 0 µs written to /dev/cpu_dma_latency, in force while the file stays open, so until this process
 * exits). Without it, on a virtual machine whose idle CPU halts (cpuidle-haltpoll with no polling,
 * as here), every response to a load generator that went idle pays for waking its CPU (an
 * inter-processor interrupt and an exit to the hypervisor) inside the server's socket write: a
 * quarter of an authenticated request's CPU, and more the slower the server, which a client across
 * a network never costs the server (docs/performance.md, "Idle CPUs"). BENCH_IDLE_POLL=off leaves
 * the sleep states alone. Returns what was done, for the report.
 */
export function holdCpusAwake(): { held: boolean; reason?: string } {
  if (process.env.BENCH_IDLE_POLL === 'off') return { held: false, reason: 'BENCH_IDLE_POLL=off' };
  try {
    const fd = openSync('/dev/cpu_dma_latency', 'w');
    const zero = Buffer.alloc(4);
    writeSync(fd, zero);
    return { held: true };
  } catch (err) {
    return { held: false, reason: (err as Error).message };
  }
}

/**
 * Spawns `command args` pinned to `core` with `taskset -c core` when possible, else unpinned.
 * taskset execs the command, so the child's pid is the command's own pid.
 */
export function spawnPinned(core: number, command: string, args: string[], options: SpawnOptions): ChildProcess {
  return canPin() ? spawn('taskset', ['-c', String(core), command, ...args], options) : spawn(command, args, options);
}

/** Pins every thread of a running process to `core` (`taskset -a -p -c`); false when not possible. */
export function pinRunning(pid: number, core: number): boolean {
  if (!canPin()) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether the child has exited (or was killed). */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Collects a child's stdout and stderr; returns a reader of everything so far. */
export function captureOutput(child: ChildProcess): () => string {
  let text = '';
  const add = (d: Buffer) => (text += d.toString());
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => text;
}

/** The last `n` lines of a text (for error messages). */
export function tail(text: string, n = 15): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

// ---- /proc -------------------------------------------------------------------------------------

interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime, in clock ticks */
  ticks: number;
}

/**
 * Parses /proc/<pid>/stat (with `thread`, /proc/<pid>/task/<thread>/stat: one thread's own figures);
 * undefined when the process is gone.
 */
export function procStat(pid: number, thread?: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ..." - comm may contain spaces and parentheses, so split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' '); // fields[0] is field 3 (state)
  const ppid = Number(fields[1]);
  const utime = Number(fields[11]); // field 14
  const stime = Number(fields[12]); // field 15
  return { pid, comm, ppid, ticks: utime + stime };
}

/** Every live descendant of `root` (children, grandchildren, ...), from the ppid links in /proc. */
export function descendants(root: number): ProcStat[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => procStat(Number(name)))
    .filter((s): s is ProcStat => s !== undefined);
  const found: ProcStat[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const s of all) {
      if (s.ppid === parent) {
        found.push(s);
        frontier.push(s.pid);
      }
    }
  }
  return found;
}

/**
 * Every process this one started, directly or not, that is still running (wrangler's detached
 * group included), except tsx's own esbuild service, which belongs to this process.
 */
export function ownDescendants(): ProcStat[] {
  return descendants(process.pid).filter((p) => !(p.ppid === process.pid && p.comm === 'esbuild'));
}

/** SIGKILLs the given processes (a snapshot: take it before killing parents, whose children get re-parented). */
export function killAll(procs: readonly ProcStat[]): void {
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

let clkTck: number | undefined;

/** Clock ticks per second (`getconf CLK_TCK`, 100 on practically every Linux). */
export function clockTicksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** Sum of utime+stime (clock ticks) of the given pids that are still alive. */
export function cpuTicks(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (procStat(pid)?.ticks ?? 0), 0);
}

/** Busy and total clock ticks of all CPUs together, from the first line of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy, total: busy + idle! + iowait! };
}

export interface CpuShare {
  /** CPU of the process, in percent of one core */
  processCpuPercent: number;
  /**
   * CPU of its main thread alone (a Node process's event loop: everything but the thread pool's work,
   * such as argon2id, and V8's helper threads: the JIT compilers, the GC's), in percent of one core
   */
  mainThreadCpuPercent: number;
  /** CPU of the whole machine (every process), in percent of all cores */
  machineCpuPercent: number;
}

/**
 * Measures how busy `pid` and the whole machine are between start() and stop(). The host under
 * test should be near 100% of its core in a closed-loop run; if it is not while the machine is
 * busy, something else (another process, the load generator) limited the measurement.
 */
export function cpuMeter(pid: number): { start(): void; stop(): CpuShare } {
  let m0 = machineTicks();
  const mainTicks = () => procStat(pid, pid)?.ticks ?? 0;
  let p0 = cpuTicks([pid]);
  let e0 = mainTicks();
  let t0 = performance.now();
  return {
    start() {
      m0 = machineTicks();
      p0 = cpuTicks([pid]);
      e0 = mainTicks();
      t0 = performance.now();
    },
    stop() {
      const wallMs = performance.now() - t0;
      const m1 = machineTicks();
      const tick = 1000 / clockTicksPerSecond();
      return {
        processCpuPercent: ((cpuTicks([pid]) - p0) * tick * 100) / wallMs,
        mainThreadCpuPercent: ((mainTicks() - e0) * tick * 100) / wallMs,
        machineCpuPercent: ((m1.busy - m0.busy) * 100) / Math.max(1, m1.total - m0.total),
      };
    },
  };
}

/**
 * Resolves once `pid` has used less than `maxPercent` of a core over `windowMs` (or after `timeoutMs`):
 * e.g. when a closed-loop load stops, the requests it left queued at the server still run.
 */
export async function untilQuiet(pid: number, maxPercent = 5, windowMs = 200, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const meter = cpuMeter(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    if (meter.stop().processCpuPercent < maxPercent) return;
  }
}

/** Resident set size of a process in KiB (VmRSS from /proc/<pid>/status); undefined when gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the RSS of `pid` every `everyMs` until stop(); returns the largest seen (KiB). */
export function rssSampler(pid: number, everyMs = 250): { stop(): number | undefined } {
  let max: number | undefined;
  const sample = () => {
    const v = rssKiB(pid);
    if (v !== undefined && (max === undefined || v > max)) max = v;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}
