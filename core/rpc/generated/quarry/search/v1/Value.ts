// Original file: proto/search/v1/core.proto


/**
 * One value of a match list.
 */
export interface Value {
  'text'?: (string);
  'number'?: (number | string);
  'flag'?: (boolean);
  'kind'?: "text"|"number"|"flag";
}

/**
 * One value of a match list.
 */
export interface Value__Output {
  'text'?: (string);
  'number'?: (number);
  'flag'?: (boolean);
  'kind'?: "text"|"number"|"flag";
}
