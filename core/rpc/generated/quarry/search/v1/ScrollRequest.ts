// Original file: proto/search/v1/core.proto

import type { Filter as _quarry_search_v1_Filter, Filter__Output as _quarry_search_v1_Filter__Output } from '../../../quarry/search/v1/Filter.js';

export interface ScrollRequest {
  'dataset_id'?: (string);
  'filter'?: (_quarry_search_v1_Filter | null);
  /**
   * Start at this chunk id, inclusive (id-ascending order only).
   */
  'offset_chunk_id'?: (string);
  'limit'?: (number);
  /**
   * Order by this field (num_value, time_stamp, or metadata.<key>) instead of by id.
   */
  'sort_field'?: (string);
  /**
   * "asc" or "desc" (default desc).
   */
  'sort_direction'?: (string);
}

export interface ScrollRequest__Output {
  'dataset_id': (string);
  'filter': (_quarry_search_v1_Filter__Output | null);
  /**
   * Start at this chunk id, inclusive (id-ascending order only).
   */
  'offset_chunk_id': (string);
  'limit': (number);
  /**
   * Order by this field (num_value, time_stamp, or metadata.<key>) instead of by id.
   */
  'sort_field': (string);
  /**
   * "asc" or "desc" (default desc).
   */
  'sort_direction': (string);
}
