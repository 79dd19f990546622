/**
 * Post-ranking of a page of results by `sort_options` (the reference's `rerank_chunks`): chunk
 * weights, recency bias, location bias, tag weights, then MMR diversification. Runs only when the
 * request carries sort options, on the results already retrieved, in that order.
 *
 * Where the reference has a quirk we fix it and say so: chunks without a time stamp or a location
 * count as the oldest / farthest (the reference leaves their raw score, or treats a missing
 * location as distance 0), and equal time stamps do not produce NaN.
 */
import type { ChunkRecord } from '../domain/chunk.js';
import type { SortOptions } from '../domain/search-options.js';

/** A result being ranked. */
export interface Ranked {
  readonly c: ChunkRecord;
  score: number;
}

/** Min-max normalisation of `values` (all equal: every value maps to 1). */
function normaliser(values: readonly number[]): (v: number) => number {
  const min = Math.min(...values);
  const max = Math.max(...values);
  return (v) => (max > min ? (v - min) / (max - min) : 1);
}

/** Great-circle distance in kilometres. */
export function haversineKm(aLat: number, aLon: number, bLat: number, bLon: number): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((bLat - aLat) * rad) / 2) ** 2 + Math.cos(aLat * rad) * Math.cos(bLat * rad) * Math.sin(((bLon - aLon) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** score × weight (a weight of 0, the default, leaves the score alone). */
export function applyWeights(results: Ranked[]): void {
  for (const r of results) if (r.c.weight !== 0) r.score *= r.c.weight;
}

/**
 * Recency bias r: normalised score / r + r × normalised recency (newest 1, oldest 0), the
 * reference's formula; a chunk without a time stamp has recency 0.
 */
export function applyRecencyBias(results: Ranked[], r: number): void {
  if (!(r > 0) || results.length === 0) return;
  const ns = normaliser(results.map((x) => x.score));
  const stamps = results.map((x) => x.c.timeStamp).filter((t): t is number => t !== null);
  const nt = stamps.length > 0 ? normaliser(stamps) : () => 0;
  for (const x of results) x.score = ns(x.score) / r + r * (x.c.timeStamp === null ? 0 : nt(x.c.timeStamp));
}

/** Location bias b: (1 − b) × normalised score + b × (1 − normalised distance); no location = farthest. */
export function applyLocationBias(results: Ranked[], bias: { lat: number; lon: number; bias: number }): void {
  if (!(bias.bias > 0) || results.length === 0) return;
  const ns = normaliser(results.map((x) => x.score));
  const dist = results.map((x) => (x.c.location ? haversineKm(bias.lat, bias.lon, x.c.location.lat, x.c.location.lon) : Number.NaN));
  const known = dist.filter((d) => !Number.isNaN(d));
  const nd = known.length > 0 ? normaliser(known) : () => 1;
  results.forEach((x, i) => {
    const d = dist[i]!;
    x.score = (1 - bias.bias) * ns(x.score) + bias.bias * (1 - (Number.isNaN(d) ? 1 : nd(d)));
  });
}

/** score × the product of the weights of the chunk's tags that have one. */
export function applyTagWeights(results: Ranked[], weights: Readonly<Record<string, number>>): void {
  for (const x of results) {
    for (const tag of x.c.tagSet) {
      const w = weights[tag];
      if (w !== undefined) x.score *= w;
    }
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Greedy maximal marginal relevance: each pick maximises λ × normalised score − (1 − λ) × its
 * highest cosine similarity to the picks so far (chunks without a vector are similar to nothing);
 * the returned score is that MMR value. Returns a new order.
 */
export function mmr(results: Ranked[], lambda: number, vectors: ReadonlyMap<string, Float32Array>): Ranked[] {
  if (results.length <= 1) return results;
  const ns = normaliser(results.map((x) => x.score));
  const rest = results.map((x) => ({ x, rel: ns(x.score), v: vectors.get(x.c.id) ?? null, maxSim: 0 }));
  const out: Ranked[] = [];
  while (rest.length > 0) {
    let best = 0;
    let bestValue = -Infinity;
    rest.forEach((r, i) => {
      const value = lambda * r.rel - (1 - lambda) * r.maxSim;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    });
    const [pick] = rest.splice(best, 1);
    pick!.x.score = bestValue;
    out.push(pick!.x);
    if (pick!.v) for (const r of rest) if (r.v) r.maxSim = Math.max(r.maxSim, cosine(pick!.v, r.v));
  }
  return out;
}

/** Sorts by score descending, then chunk id (stable across calls). */
export function byScore(a: Ranked, b: Ranked): number {
  return b.score - a.score || (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0);
}

/** Applies every post-ranking step the options ask for; `vectors` serve MMR. Returns the new order. */
export function postRank(results: Ranked[], opts: SortOptions, vectors: ReadonlyMap<string, Float32Array>): Ranked[] {
  if (opts.useWeights) applyWeights(results);
  if (opts.recencyBias > 0) applyRecencyBias(results, opts.recencyBias);
  if (opts.locationBias) applyLocationBias(results, opts.locationBias);
  if (opts.tagWeights) applyTagWeights(results, opts.tagWeights);
  results.sort(byScore);
  return opts.mmrLambda !== null ? mmr(results, opts.mmrLambda, vectors) : results;
}
