/**
 * Vector arithmetic of semantic recommendations, as Qdrant defines its two strategies (the
 * reference hands recommendations to Qdrant):
 * - `average_vector`: one query vector, `avg_pos + (avg_pos - avg_neg)`, or `avg_pos` without
 *   negatives, then a plain search.
 * - `best_score`: each candidate is compared with every example; its score is the best
 *   similarity to a positive when that beats the best similarity to a negative, otherwise the
 *   negated square of the best negative similarity (Qdrant's documented rule before 1.9 wrapped
 *   both in a sigmoid; the order is the same, the scores stay comparable to a plain search's).
 *
 * Similarities are "higher is better" for every metric: cosine and dot as they are, Euclidean and
 * Manhattan as negated distances. Under cosine, vectors are unit-normalised first, as Qdrant
 * stores them, so an average weighs every example alike.
 */
import type { DistanceMetric } from '../domain/distance-metric.js';

/** A stored vector in f64, unit-normalised under cosine (a zero vector stays zero). */
export function prepare(s: DistanceMetric, v: Float32Array): Float64Array {
  const out = Float64Array.from(v);
  if (s !== 'cosine') return out;
  let n = 0;
  for (const x of out) n += x * x;
  if (n === 0) return out;
  const inv = 1 / Math.sqrt(n);
  for (let i = 0; i < out.length; i++) out[i]! *= inv;
  return out;
}

/** Similarity of two prepared vectors (higher is better). */
export function similarity(s: DistanceMetric, a: Float64Array, b: Float64Array): number {
  let acc = 0;
  if (s === 'cosine' || s === 'dot') {
    for (let i = 0; i < a.length; i++) acc += a[i]! * b[i]!;
    return acc;
  }
  if (s === 'euclidean') {
    for (let i = 0; i < a.length; i++) acc += (a[i]! - b[i]!) ** 2;
    return -Math.sqrt(acc);
  }
  for (let i = 0; i < a.length; i++) acc += Math.abs(a[i]! - b[i]!);
  return -acc;
}

/** The similarity a search score stands for (searches report Euclidean and Manhattan as distances). */
export function similarityOfScore(s: DistanceMetric, score: number): number {
  return s === 'euclidean' || s === 'manhattan' ? -score : score;
}

/** Component-wise mean. */
function mean(vectors: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(vectors[0]!.length);
  for (const v of vectors) for (let i = 0; i < out.length; i++) out[i]! += v[i]!;
  for (let i = 0; i < out.length; i++) out[i]! /= vectors.length;
  return out;
}

/** The `average_vector` query: `avg_pos + (avg_pos - avg_neg)`, or `avg_pos` without negatives. */
export function averageVector(positives: readonly Float64Array[], negatives: readonly Float64Array[]): Float64Array {
  const pos = mean(positives);
  if (negatives.length === 0) return pos;
  const neg = mean(negatives);
  for (let i = 0; i < pos.length; i++) pos[i] = 2 * pos[i]! - neg[i]!;
  return pos;
}

/** The `best_score` of a prepared candidate against prepared examples. */
export function bestScore(s: DistanceMetric, x: Float64Array, positives: readonly Float64Array[], negatives: readonly Float64Array[]): number {
  let pos = -Infinity;
  for (const p of positives) pos = Math.max(pos, similarity(s, x, p));
  let neg = -Infinity;
  for (const n of negatives) neg = Math.max(neg, similarity(s, x, n));
  return pos > neg ? pos : -(neg * neg);
}
