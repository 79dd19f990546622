// Original file: proto/search/v1/core.proto


/**
 * A filtered listing of chunk ids instead of a ranking.
 */
export interface ScrollOptions {
  /**
   * Start at this chunk id, inclusive (id order only; empty: the first).
   */
  'offset_chunk_id'?: (string);
  /**
   * Order by this field (num_value, time_stamp, or metadata.<key>) instead of by id.
   */
  'sort_field'?: (string);
  /**
   * "asc" or "desc" (default desc) with sort_field.
   */
  'sort_direction'?: (string);
}

/**
 * A filtered listing of chunk ids instead of a ranking.
 */
export interface ScrollOptions__Output {
  /**
   * Start at this chunk id, inclusive (id order only; empty: the first).
   */
  'offset_chunk_id': (string);
  /**
   * Order by this field (num_value, time_stamp, or metadata.<key>) instead of by id.
   */
  'sort_field': (string);
  /**
   * "asc" or "desc" (default desc) with sort_field.
   */
  'sort_direction': (string);
}
