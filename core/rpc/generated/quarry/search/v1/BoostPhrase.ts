// Original file: proto/search/v1/core.proto


/**
 * A phrase whose words weigh more (fulltext_boost) or a phrase the query vector moves toward
 * (semantic_boost: query + factor x phrase embedding).
 */
export interface BoostPhrase {
  'phrase'?: (string);
  'factor'?: (number | string);
}

/**
 * A phrase whose words weigh more (fulltext_boost) or a phrase the query vector moves toward
 * (semantic_boost: query + factor x phrase embedding).
 */
export interface BoostPhrase__Output {
  'phrase': (string);
  'factor': (number);
}
