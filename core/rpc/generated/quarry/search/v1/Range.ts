// Original file: proto/search/v1/core.proto

import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from '../../../quarry/search/v1/Bound.js';

/**
 * gt/gte/lt/lte bounds; absent bounds do not constrain.
 */
export interface Range {
  'gt'?: (_quarry_search_v1_Bound | null);
  'gte'?: (_quarry_search_v1_Bound | null);
  'lt'?: (_quarry_search_v1_Bound | null);
  'lte'?: (_quarry_search_v1_Bound | null);
}

/**
 * gt/gte/lt/lte bounds; absent bounds do not constrain.
 */
export interface Range__Output {
  'gt': (_quarry_search_v1_Bound__Output | null);
  'gte': (_quarry_search_v1_Bound__Output | null);
  'lt': (_quarry_search_v1_Bound__Output | null);
  'lte': (_quarry_search_v1_Bound__Output | null);
}
