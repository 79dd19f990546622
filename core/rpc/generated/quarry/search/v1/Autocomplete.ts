// Original file: proto/search/v1/core.proto


export interface Autocomplete {
  /**
   * After the completions, the plain search's other results, up to limit.
   */
  'extend_results'?: (boolean);
}

export interface Autocomplete__Output {
  /**
   * After the completions, the plain search's other results, up to limit.
   */
  'extend_results': (boolean);
}
