// Original file: proto/search/v1/core.proto


/**
 * One query of a multi-query semantic search.
 */
export interface WeightedQuery {
  'query'?: (string);
  'weight'?: (number | string);
}

/**
 * One query of a multi-query semantic search.
 */
export interface WeightedQuery__Output {
  'query': (string);
  'weight': (number);
}
