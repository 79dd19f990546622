/**
 * Dense distance metrics: the mapping from a dataset's `DISTANCE_METRIC` to what the index runs,
 * the meaning and direction of the score each one returns, and the spec's `score_threshold` rule.
 */
import type { DistanceMetric } from '../../../core/domain/distance-metric.js';

/**
 * What the dense index computes. `cos`, `ip` and `l2sq` run on the usearch HNSW graph; `l1`
 * (Manhattan) has no usearch HNSW metric, so an `l1` index keeps no graph and answers every query
 * by an exact scan: correct results at O(live vectors x dimension) per query.
 */
export type DenseMetric = 'cos' | 'ip' | 'l2sq' | 'l1';

/** The index metric of a dataset's distance. */
export function denseMetricFor(distance: DistanceMetric): DenseMetric {
  switch (distance) {
    case 'cosine':
      return 'cos';
    case 'dot':
      return 'ip';
    case 'euclidean':
      return 'l2sq';
    case 'manhattan':
      return 'l1';
  }
}

/**
 * Whether a larger score is a better match. Scores are what the product returns:
 * `cos` cosine similarity in [-1, 1] and `ip` the dot product (higher is better); `l2sq` the
 * Euclidean distance (not squared, as Qdrant and Trieve report it) and `l1` the Manhattan
 * distance (lower is better).
 */
export function higherIsBetter(metric: DenseMetric): boolean {
  return metric === 'cos' || metric === 'ip';
}

/**
 * The spec's `score_threshold` rule (service-spec, search request): for cosine, scores below the
 * threshold are dropped; for Manhattan, Euclidean and dot product, scores above it. Absent or 0
 * means no threshold. The dot-product case follows the spec literally even though it keeps the
 * worse matches, because where the spec and the reference implementation disagree the spec wins.
 */
export function passesScoreThreshold(metric: DenseMetric, score: number, threshold: number | undefined): boolean {
  if (threshold === undefined || threshold === 0) return true;
  return metric === 'cos' ? score >= threshold : score <= threshold;
}
