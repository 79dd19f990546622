// Original file: proto/search/v1/core.proto

import type { Filter as _quarry_search_v1_Filter, Filter__Output as _quarry_search_v1_Filter__Output } from '../../../quarry/search/v1/Filter.js';
import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from '../../../quarry/search/v1/Bound.js';

export interface CountRequest {
  'dataset_id'?: (string);
  'search_type'?: (string);
  'query'?: (string);
  'filter'?: (_quarry_search_v1_Filter | null);
  'score_threshold'?: (_quarry_search_v1_Bound | null);
  /**
   * Stop counting at this number (0: no limit).
   */
  'limit'?: (number);
}

export interface CountRequest__Output {
  'dataset_id': (string);
  'search_type': (string);
  'query': (string);
  'filter': (_quarry_search_v1_Filter__Output | null);
  'score_threshold': (_quarry_search_v1_Bound__Output | null);
  /**
   * Stop counting at this number (0: no limit).
   */
  'limit': (number);
}
