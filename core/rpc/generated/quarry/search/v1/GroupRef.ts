// Original file: proto/search/v1/core.proto


/**
 * A group by id or by tracking id (exactly one).
 */
export interface GroupRef {
  'id'?: (string);
  'tracking_id'?: (string);
}

/**
 * A group by id or by tracking id (exactly one).
 */
export interface GroupRef__Output {
  'id': (string);
  'tracking_id': (string);
}
