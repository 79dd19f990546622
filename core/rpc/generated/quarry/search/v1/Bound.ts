// Original file: proto/search/v1/core.proto


/**
 * An optional number.
 */
export interface Bound {
  'value'?: (number | string);
}

/**
 * An optional number.
 */
export interface Bound__Output {
  'value': (number);
}
