/** Small statistics helpers of the benchmark (no dependencies, so the load process stays light). */

/** The p-th percentile (0-100) of an ascending array, interpolating linearly; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((x, y) => x - y),
    50,
  );
}

/** How much larger `x` is than `reference`, in percent. */
export function percentDiff(x: number, reference: number): number {
  return ((x - reference) / reference) * 100;
}

/** Rounds for display and JSON: 2 decimals below 100, 1 decimal above. */
export function round(n: number): number {
  return Math.abs(n) < 100 ? Math.round(n * 100) / 100 : Math.round(n * 10) / 10;
}
