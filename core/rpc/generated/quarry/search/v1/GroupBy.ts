// Original file: proto/search/v1/core.proto


export interface GroupBy {
  /**
   * Chunks shown per group (0: groups without their chunks).
   */
  'group_size'?: (number);
  /**
   * Count every group the ranking reaches (total_groups), up to the dataset's MAX_LIMIT chunks.
   */
  'count_groups'?: (boolean);
}

export interface GroupBy__Output {
  /**
   * Chunks shown per group (0: groups without their chunks).
   */
  'group_size': (number);
  /**
   * Count every group the ranking reaches (total_groups), up to the dataset's MAX_LIMIT chunks.
   */
  'count_groups': (boolean);
}
