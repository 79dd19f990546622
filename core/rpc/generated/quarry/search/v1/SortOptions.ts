// Original file: proto/search/v1/core.proto

import type { FieldSort as _quarry_search_v1_FieldSort, FieldSort__Output as _quarry_search_v1_FieldSort__Output } from '../../../quarry/search/v1/FieldSort.js';
import type { Rerank as _quarry_search_v1_Rerank, Rerank__Output as _quarry_search_v1_Rerank__Output } from '../../../quarry/search/v1/Rerank.js';
import type { LocationBias as _quarry_search_v1_LocationBias, LocationBias__Output as _quarry_search_v1_LocationBias__Output } from '../../../quarry/search/v1/LocationBias.js';
import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from '../../../quarry/search/v1/Bound.js';

/**
 * sort_options: what happens to the ranking after retrieval, in this order: a field sort or a
 * re-scoring of a prefetch (sort_by), then chunk weights, recency, location and tag weights,
 * then maximal marginal relevance. A field sort is final (no post-ranking undoes it).
 */
export interface SortOptions {
  'field_sort'?: (_quarry_search_v1_FieldSort | null);
  'rerank'?: (_quarry_search_v1_Rerank | null);
  /**
   * Leave chunk weights out (the REST use_weights: false); by default score x weight.
   */
  'ignore_weights'?: (boolean);
  /**
   * Recency bias r > 0: normalised score / r + r x normalised recency (0: none).
   */
  'recency_bias'?: (number | string);
  /**
   * Location bias (absent: none).
   */
  'location_bias'?: (_quarry_search_v1_LocationBias | null);
  /**
   * Score times the weight of each of the chunk's tags listed here.
   */
  'tag_weights'?: ({[key: string]: number | string});
  /**
   * Maximal marginal relevance with this lambda in 0..1 (absent: none).
   */
  'mmr_lambda'?: (_quarry_search_v1_Bound | null);
  'sort_by'?: "field_sort"|"rerank";
}

/**
 * sort_options: what happens to the ranking after retrieval, in this order: a field sort or a
 * re-scoring of a prefetch (sort_by), then chunk weights, recency, location and tag weights,
 * then maximal marginal relevance. A field sort is final (no post-ranking undoes it).
 */
export interface SortOptions__Output {
  'field_sort'?: (_quarry_search_v1_FieldSort__Output | null);
  'rerank'?: (_quarry_search_v1_Rerank__Output | null);
  /**
   * Leave chunk weights out (the REST use_weights: false); by default score x weight.
   */
  'ignore_weights': (boolean);
  /**
   * Recency bias r > 0: normalised score / r + r x normalised recency (0: none).
   */
  'recency_bias': (number);
  /**
   * Location bias (absent: none).
   */
  'location_bias': (_quarry_search_v1_LocationBias__Output | null);
  /**
   * Score times the weight of each of the chunk's tags listed here.
   */
  'tag_weights': ({[key: string]: number});
  /**
   * Maximal marginal relevance with this lambda in 0..1 (absent: none).
   */
  'mmr_lambda': (_quarry_search_v1_Bound__Output | null);
  'sort_by'?: "field_sort"|"rerank";
}
