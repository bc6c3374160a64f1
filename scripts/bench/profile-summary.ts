/**
 * Sums a V8 CPU profile (.cpuprofile, from `node --cpu-prof`, e.g. BENCH_CPU_PROF=dir npm run bench)
 * by self time per function and per package, and prints the top entries:
 *
 *   npx tsx scripts/bench/profile-summary.ts DIR_OR_FILE [top=25] [skip=0]
 *
 * Idle time is left out of the percentages; `skip` leaves out the first seconds of each profile
 * (the start of the host: module loading, migrations).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [target, topArg, skipArg] = process.argv.slice(2);
if (!target) throw new Error('usage: profile-summary.ts DIR_OR_FILE [top] [skip]');
const top = Number(topArg ?? 25);
const skipUs = Number(skipArg ?? 0) * 1e6;
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
  : [target];

/** The package of a script URL: node_modules/<pkg>, our own folders, node internals or native. */
function packageOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node:internal';
  const own = /\/(worker\/src\/[^/]+|worker\/node|schema|scripts)\//.exec(url);
  return own ? own[1]! : url;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  let at = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const node = nodes.get(p.samples[i]!)!;
    const dt = p.timeDeltas[i] ?? 0;
    at += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    if (at < skipUs || functionName === '(idle)') continue;
    const pkg = packageOf(url, functionName);
    const fn =
      `${functionName || '(anonymous)'} ` + `${pkg}${url && !url.includes('node_modules') ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
    total += dt;
  }
}

const print = (title: string, m: Map<string, number>) => {
  console.log(
    `\n${title} (self time, idle excluded: ${(total / 1e6).toFixed(1)} s busy in ${files.length} profile(s))`,
  );
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((v * 100) / total).toFixed(1).padStart(5)}%  ${k}`);
};
print('By package', byPackage);
print('By function', byFunction);
