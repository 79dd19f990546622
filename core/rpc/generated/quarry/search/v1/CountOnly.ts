// Original file: proto/search/v1/core.proto


/**
 * A count of the matches instead of a ranking.
 */
export interface CountOnly {
  /**
   * Stop counting at this number (0: no limit).
   */
  'limit'?: (number);
}

/**
 * A count of the matches instead of a ranking.
 */
export interface CountOnly__Output {
  /**
   * Stop counting at this number (0: no limit).
   */
  'limit': (number);
}
