// Original file: proto/search/v1/core.proto


/**
 * Prefetch by relevance, then order by a field.
 */
export interface FieldSort {
  /**
   * num_value, time_stamp, weight, created_at, updated_at, link, tracking_id or metadata.<key>.
   */
  'field'?: (string);
  /**
   * "asc" or "desc" (empty: "desc").
   */
  'direction'?: (string);
  /**
   * Candidates fetched (0: 1,000), capped by the dataset's MAX_LIMIT.
   */
  'prefetch'?: (number);
}

/**
 * Prefetch by relevance, then order by a field.
 */
export interface FieldSort__Output {
  /**
   * num_value, time_stamp, weight, created_at, updated_at, link, tracking_id or metadata.<key>.
   */
  'field': (string);
  /**
   * "asc" or "desc" (empty: "desc").
   */
  'direction': (string);
  /**
   * Candidates fetched (0: 1,000), capped by the dataset's MAX_LIMIT.
   */
  'prefetch': (number);
}
