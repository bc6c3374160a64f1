/** Results of the benchmark: the table printed at the end and bench-results.json. */
import { writeFileSync } from 'node:fs';

export interface ScenarioResult {
  scenario: string;
  /** flagged: it ran, but the numbers are not to be trusted (e.g. non-2xx answers) */
  status: 'ok' | 'flagged' | 'failed';
  /** the reason when flagged or failed, else a summary */
  message?: string;
  requestsPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  non2xx?: number;
  /** CPU of the host process during the measured part, in percent of one core */
  hostCpuPercent?: number;
  /** CPU of the whole machine meanwhile, in percent of all cores (others' processes included) */
  machineCpuPercent?: number;
  /** CPU of the server per answered request, in microseconds */
  cpuPerRequestUs?: number;
  /** largest resident set size of the server during the measured part, KiB */
  rssMaxKiB?: number;
  details?: Record<string, unknown>;
}

export interface BenchReport {
  time: string;
  node: string;
  /** whether the host and the load generator ran on separate pinned cores */
  pinned: boolean;
  /** CPU of the whole machine, in percent of all cores, during 1 s before anything started */
  machineBusyBefore: number;
  config: Record<string, unknown>;
  /** the targets of docs/performance.md and whether this run met them */
  targets?: Record<string, boolean | undefined>;
  results: ScenarioResult[];
}

const show = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '-' : String(v));

/** A fixed-width table; one line per scenario, then the messages. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header = [
    'scenario',
    'status',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'host cpu%',
    'cpu us/req',
    'RSS max MiB',
    'machine cpu%',
  ];
  const rows = results.map((r) => [
    r.scenario,
    r.status === 'ok' ? 'ok' : r.status.toUpperCase(),
    show(r.requestsPerSec),
    show(r.p50Ms),
    show(r.p99Ms),
    show(r.non2xx),
    show(r.hostCpuPercent),
    show(r.cpuPerRequestUs),
    r.rssMaxKiB === undefined ? '-' : String(Math.round(r.rssMaxKiB / 1024)),
    show(r.machineCpuPercent),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
  const notes = results
    .filter((r) => r.message)
    .map((r) => `${r.status === 'ok' ? '  ' : '!!'} ${r.scenario}: ${r.message}`);
  return [...out, '', ...notes].join('\n');
}

/** Loud banner for a scenario whose numbers must not be used. */
export function warnLoudly(r: ScenarioResult): void {
  if (r.status === 'ok') return;
  const bar = '!'.repeat(78);
  console.error(`\n${bar}\n!! ${r.scenario} ${r.status.toUpperCase()}: ${r.message ?? ''}\n${bar}\n`);
}

export function writeReport(path: string, report: BenchReport): void {
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
