// Original file: proto/search/v1/core.proto


/**
 * Examples of a recommendation, by chunk and by group (a group stands for its members). Every
 * example must exist (NOT_FOUND names those that do not).
 */
export interface Recommend {
  'positive_chunk_ids'?: (string)[];
  'negative_chunk_ids'?: (string)[];
  'positive_tracking_ids'?: (string)[];
  'negative_tracking_ids'?: (string)[];
  'positive_group_ids'?: (string)[];
  'negative_group_ids'?: (string)[];
  'positive_group_tracking_ids'?: (string)[];
  'negative_group_tracking_ids'?: (string)[];
  /**
   * "average_vector" (empty: this) or "best_score"; semantic only.
   */
  'strategy'?: (string);
}

/**
 * Examples of a recommendation, by chunk and by group (a group stands for its members). Every
 * example must exist (NOT_FOUND names those that do not).
 */
export interface Recommend__Output {
  'positive_chunk_ids': (string)[];
  'negative_chunk_ids': (string)[];
  'positive_tracking_ids': (string)[];
  'negative_tracking_ids': (string)[];
  'positive_group_ids': (string)[];
  'negative_group_ids': (string)[];
  'positive_group_tracking_ids': (string)[];
  'negative_group_tracking_ids': (string)[];
  /**
   * "average_vector" (empty: this) or "best_score"; semantic only.
   */
  'strategy': (string);
}
