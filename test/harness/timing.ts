/**
 * Comparing the response times of two kinds of request robustly on a loaded machine: the samples
 * are interleaved (so load spikes hit both), many, and compared by their medians, in measurements
 * repeated until a majority of them agree.
 */

export interface TimingComparison {
  /** Median of each kind, in ms. */
  medians: Record<string, number>;
  /** The slower median over the faster one (1 = the same). */
  ratio: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function measure(kinds: Record<string, () => Promise<void>>, rounds: number): Promise<TimingComparison> {
  const names = Object.keys(kinds);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < rounds + 2; i++) {
    // Alternate the order each round, so neither kind always runs right after the other.
    const order = i % 2 ? [...names].reverse() : names;
    for (const name of order) {
      const t = performance.now();
      await kinds[name]!();
      // The first two rounds warm caches and connections: not counted.
      if (i >= 2) samples[name]!.push(performance.now() - t);
    }
  }
  const medians = Object.fromEntries(names.map((n) => [n, median(samples[n]!)]));
  const values = Object.values(medians);
  return { medians, ratio: Math.max(...values) / Math.min(...values) };
}

/** A measurement's verdict: `within` the tolerance, or the name of the kind that was slower beyond it. */
function verdict(m: TimingComparison, tolerance: number): string {
  if (m.ratio < tolerance) return 'within';
  const [slower] = Object.entries(m.medians).reduce((a, b) => (b[1] > a[1] ? b : a));
  return slower;
}

/**
 * Measures `kinds` interleaved over `rounds`, three times at most, and counts what a majority of the
 * measurements say: the first two, when they agree, else a third one (twice the rounds) decides. Each one
 * says "within `tolerance`" or "kind K slower beyond it": a real difference shows the same slower kind in
 * every measurement, while a load spike spoils one measurement, not two, and makes either kind the slower
 * one (a 10 ms request's medians 13 % apart, the slower side changing from one run to the next). Three
 * measurements that all disagree (one of them within, then) show no consistent difference: within. The
 * result is the deciding verdict's measurement nearest the tolerance (within: the slowest of them; beyond:
 * the least beyond), so its ratio says the verdict, and `ratios` lists them all.
 */
export async function compareTimings(
  kinds: Record<string, () => Promise<void>>,
  o: { rounds?: number; tolerance?: number } = {},
): Promise<TimingComparison & { ratios: number[] }> {
  const rounds = o.rounds ?? 25;
  const tolerance = o.tolerance ?? 1.1;
  const runs = [await measure(kinds, rounds), await measure(kinds, rounds)];
  const says = (m: TimingComparison) => verdict(m, tolerance);
  if (says(runs[0]!) !== says(runs[1]!)) runs.push(await measure(kinds, 2 * rounds));
  const counts = new Map<string, number>();
  for (const m of runs) counts.set(says(m), (counts.get(says(m)) ?? 0) + 1);
  const [top] = [...counts].find(([, n]) => n * 2 > runs.length) ?? ['within'];
  const chosen = runs.filter((m) => says(m) === top);
  const pick = chosen.reduce((a, b) => (top === 'within' ? (b.ratio > a.ratio ? b : a) : b.ratio < a.ratio ? b : a));
  return { ...pick, ratios: runs.map((m) => Math.round(m.ratio * 1000) / 1000) };
}
