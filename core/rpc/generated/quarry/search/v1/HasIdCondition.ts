// Original file: proto/search/v1/core.proto


/**
 * Chunks with one of these ids or tracking ids.
 */
export interface HasIdCondition {
  'ids'?: (string)[];
  'tracking_ids'?: (string)[];
}

/**
 * Chunks with one of these ids or tracking ids.
 */
export interface HasIdCondition__Output {
  'ids': (string)[];
  'tracking_ids': (string)[];
}
