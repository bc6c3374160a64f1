/**
 * Memory of a running test host, from /proc (Linux): the peak resident size (VmHWM) of its
 * processes, i.e. the Node host's process, or every workerd process of the edge host's group
 * (wrangler starts them in its process group).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { RunningHost } from './hosts.js';

function status(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
}

/** The process group of a pid (field 5 of /proc/pid/stat), or null. */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/** The pids serving requests: the Node host's own, or the edge host's workerd processes. */
function servingPids(host: RunningHost): number[] {
  const pid = host.child.pid!;
  if (host.kind === 'node') return [pid];
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => groupOf(p) === pid && /^Name:\s*workerd$/m.test(status(p) ?? ''));
}

/** The sum of the peak resident sizes of the host's serving processes, in bytes. */
export function peakMemoryBytes(host: RunningHost): number {
  let total = 0;
  for (const pid of servingPids(host)) {
    const kb = /^VmHWM:\s*(\d+) kB/m.exec(status(pid) ?? '')?.[1];
    total += kb ? Number(kb) * 1024 : 0;
  }
  return total;
}
