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

/**
 * Measures `kinds` interleaved over `rounds`, three times at most, and counts what a majority of the
 * measurements say: the first two, when both are within `tolerance` or both beyond it, else a third one
 * (twice the rounds) decides. A load spike of a loaded machine spoils one measurement, not two (a 10 ms
 * request's medians 13 % apart, the slower side changing from one run to the next); a real difference
 * shows in every measurement. The result is the majority's measurement nearest the tolerance (within: the
 * slowest of them; beyond: the least beyond), so its ratio says the verdict, and `ratios` lists them all.
 */
export async function compareTimings(
  kinds: Record<string, () => Promise<void>>,
  o: { rounds?: number; tolerance?: number } = {},
): Promise<TimingComparison & { ratios: number[] }> {
  const rounds = o.rounds ?? 25;
  const tolerance = o.tolerance ?? 1.1;
  const runs = [await measure(kinds, rounds), await measure(kinds, rounds)];
  const within = (m: TimingComparison) => m.ratio < tolerance;
  if (within(runs[0]!) !== within(runs[1]!)) runs.push(await measure(kinds, 2 * rounds));
  const passed = runs.filter(within);
  const majority = passed.length * 2 > runs.length ? passed : runs.filter((m) => !within(m));
  const pick = majority.reduce((a, b) => (within(a) ? (b.ratio > a.ratio ? b : a) : b.ratio < a.ratio ? b : a));
  return { ...pick, ratios: runs.map((m) => Math.round(m.ratio * 1000) / 1000) };
}
