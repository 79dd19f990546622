/**
 * A dataset's dense distance (`DISTANCE_METRIC`): parsed once from the configuration into this
 * enum, which every layer (the HTTP validation, the core's recommendations, the shard's index)
 * switches on.
 */
import { badRequest } from './errors.js';

/** The dense distances a dataset can rank by. */
export const DISTANCE_METRICS = ['cosine', 'dot', 'euclidean', 'manhattan'] as const;

/** One of {@link DISTANCE_METRICS}. */
export type DistanceMetric = (typeof DISTANCE_METRICS)[number];

/** The metric of a configuration value (`euclid` is the reference's alias of `euclidean`); null when unknown. */
export function parseDistanceMetric(value: unknown): DistanceMetric | null {
  if (value === 'euclid') return 'euclidean';
  return (DISTANCE_METRICS as readonly unknown[]).includes(value) ? (value as DistanceMetric) : null;
}

/** The metric of a configuration value; a 400 naming the allowed values when unknown. */
export function distanceMetricOf(value: unknown): DistanceMetric {
  const metric = parseDistanceMetric(value);
  if (metric === null) throw badRequest(`DISTANCE_METRIC must be cosine, dot, euclidean or manhattan, got '${String(value)}'`);
  return metric;
}
