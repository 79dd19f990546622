// Original file: proto/search/v1/core.proto

import type { Condition as _quarry_search_v1_Condition, Condition__Output as _quarry_search_v1_Condition__Output } from '../../../quarry/search/v1/Condition.js';

/**
 * must: all hold; must_not: none holds; should: at least one holds (when any is given).
 */
export interface Filter {
  'must'?: (_quarry_search_v1_Condition)[];
  'must_not'?: (_quarry_search_v1_Condition)[];
  'should'?: (_quarry_search_v1_Condition)[];
}

/**
 * must: all hold; must_not: none holds; should: at least one holds (when any is given).
 */
export interface Filter__Output {
  'must': (_quarry_search_v1_Condition__Output)[];
  'must_not': (_quarry_search_v1_Condition__Output)[];
  'should': (_quarry_search_v1_Condition__Output)[];
}
