/**
 * Comparing the response times of two kinds of request robustly on a loaded machine: the samples
 * are interleaved (so load spikes hit both), many, and compared by their medians; a first
 * comparison beyond the tolerance is measured again once, with more samples.
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
 * Measures `kinds` interleaved over `rounds`; while the ratio is `tolerance` or worse, again over twice
 * as many rounds, at most three times in all (a load spike weighs less in more samples), and the best
 * one counts. A real difference shows in every measurement; noise of a loaded machine (a 10 ms request's
 * medians 13 % apart, the slower side changing from one run to the next) does not.
 */
export async function compareTimings(
  kinds: Record<string, () => Promise<void>>,
  o: { rounds?: number; tolerance?: number } = {},
): Promise<TimingComparison> {
  let rounds = o.rounds ?? 25;
  let best = await measure(kinds, rounds);
  for (let i = 1; i < 3 && best.ratio >= (o.tolerance ?? 1.1); i++) {
    rounds *= 2;
    const next = await measure(kinds, rounds);
    if (next.ratio < best.ratio) best = next;
  }
  return best;
}
