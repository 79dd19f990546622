/**
 * The fixed log-scale latency histogram of the search rollups (./search-rollup-batch.ts): the
 * bucket of a latency, the value a bucket stands for, the histogram's stored form, and the
 * approximate nearest-rank percentile read from it.
 *
 * Buckets are geometric with ratio {@link LATENCY_RATIO} from 0.01 ms to 10 minutes, so a latency
 * read back as its bucket's value is off by at most {@link LATENCY_RELATIVE_ERROR} (1.05%);
 * below 0.01 ms the error is at most 0.005 ms, and a latency of 10 minutes or more reads back as
 * 10 minutes. The bounds are whole multiples of 2^-16 ms and a latency is compared as
 * `latency * 65536` (a power-of-two scaling, exact in floating point) with those integers, so JS
 * and both SQL engines put every latency in the same bucket, with no decimal literal to parse.
 * The bounds are part of the stored rollups (and of the migration that filled them): changing
 * them needs a new migration that rebuilds the rollups.
 */

/** Latencies are compared in units of 2^-16 ms. */
const SCALE = 65_536;
/** Ratio of a bucket's upper bound to its lower bound. */
export const LATENCY_RATIO = 1.02;
const LOWEST_MS = 0.01;
const HIGHEST_MS = 600_000;

/**
 * Lower bounds of buckets 1.. in units of 2^-16 ms (bucket 0 is everything below 2^-16 ms,
 * zero and negative latencies included; bucket i ≥ 1 is [BOUNDS[i-1], BOUNDS[i])).
 */
const BOUNDS: readonly number[] = (() => {
  const out = [1];
  for (let ms = LOWEST_MS; ms < HIGHEST_MS * LATENCY_RATIO; ms *= LATENCY_RATIO) out.push(Math.round(ms * SCALE));
  return out;
})();

/**
 * Worst relative error of a latency from 0.01 ms to 10 minutes read back as its bucket's value:
 * (b-a)/(b+a) of the widest bucket [a, b), about (r-1)/(r+1) = 0.99%, at most 1.05% where the
 * rounding of the lowest bounds to 2^-16 ms widens a bucket.
 */
export const LATENCY_RELATIVE_ERROR = BOUNDS.slice(2).reduce((worst, b, i) => Math.max(worst, (b - BOUNDS[i + 1]!) / (b + BOUNDS[i + 1]!)), 0);

/** The bucket of a latency in ms (0..{@link BOUNDS}.length). */
export function latencyBucket(ms: number): number {
  const x = ms * SCALE;
  if (!(x >= BOUNDS[0]!)) return 0;
  let lo = 0;
  let hi = BOUNDS.length - 1;
  // The last bound ≤ x: bucket lo + 1.
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (x >= BOUNDS[mid]!) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * The latency (ms) bucket `i` stands for: 0 for bucket 0, 0.005 for bucket 1; for a bounded bucket [a, b) the value
 * 2ab/(a+b), whose relative error is at most (b-a)/(b+a) on either side; the last bucket's lower
 * bound.
 */
export function bucketLatency(i: number): number {
  if (i <= 0) return 0;
  // Below 0.01 ms: the middle, within 0.005 ms of any latency there.
  if (i === 1) return BOUNDS[1]! / SCALE / 2;
  const a = BOUNDS[i - 1]! / SCALE;
  if (i >= BOUNDS.length) return a;
  const b = BOUNDS[i]! / SCALE;
  return (2 * a * b) / (a + b);
}

/**
 * An SQL expression (both engines) of the bucket of the latency `column`, the same as
 * {@link latencyBucket}: a binary search of nested CASEs on integer bounds.
 */
export function latencyBucketSql(column: string): string {
  const x = `(${column} * ${SCALE})`;
  // Bucket of x given that x ≥ BOUNDS[lo] and x < BOUNDS[hi + 1] (hi + 1 past the end: unbounded).
  const search = (lo: number, hi: number): string => {
    if (lo === hi) return String(lo + 1);
    const mid = (lo + hi + 1) >> 1;
    return `CASE WHEN ${x} >= ${BOUNDS[mid]} THEN ${search(mid, hi)} ELSE ${search(lo, mid - 1)} END`;
  };
  return `CASE WHEN ${x} >= ${BOUNDS[0]} THEN ${search(0, BOUNDS.length - 1)} ELSE 0 END`;
}

/** A histogram: count per bucket (only non-zero buckets present). */
export type LatencyHistogram = Map<number, number>;

/** The stored text of a histogram: a flat JSON array `[bucket, count, bucket, count, ...]`, buckets ascending. */
export function encodeHistogram(h: LatencyHistogram): string {
  const buckets = [...h.keys()].filter((b) => h.get(b) !== 0).sort((a, b) => a - b);
  return JSON.stringify(buckets.flatMap((b) => [b, h.get(b)!]));
}

/** Adds the stored histogram `text` (see {@link encodeHistogram}) times `sign` into `into`. */
export function addHistogram(into: LatencyHistogram, text: string, sign = 1): LatencyHistogram {
  const flat = JSON.parse(text) as number[];
  for (let i = 0; i < flat.length; i += 2) {
    const b = flat[i]!;
    into.set(b, (into.get(b) ?? 0) + sign * flat[i + 1]!);
  }
  return into;
}

/**
 * The latency at the nearest rank `rank` (1-based, ascending) of the histogram's latencies, as
 * its bucket's value (0 for an empty histogram).
 */
export function histogramRank(h: LatencyHistogram, rank: number): number {
  let seen = 0;
  for (const b of [...h.keys()].sort((x, y) => x - y)) {
    seen += h.get(b)!;
    if (seen >= rank) return bucketLatency(b);
  }
  return 0;
}
