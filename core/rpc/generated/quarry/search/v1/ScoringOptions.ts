// Original file: proto/search/v1/core.proto

import type { BoostPhrase as _quarry_search_v1_BoostPhrase, BoostPhrase__Output as _quarry_search_v1_BoostPhrase__Output } from '../../../quarry/search/v1/BoostPhrase.js';

export interface ScoringOptions {
  /**
   * bm25 and fulltext: query words that also occur in the phrase weigh factor times more.
   */
  'fulltext_boost'?: (_quarry_search_v1_BoostPhrase | null);
  /**
   * semantic and hybrid: the query vector plus factor times the phrase's vector.
   */
  'semantic_boost'?: (_quarry_search_v1_BoostPhrase | null);
}

export interface ScoringOptions__Output {
  /**
   * bm25 and fulltext: query words that also occur in the phrase weigh factor times more.
   */
  'fulltext_boost': (_quarry_search_v1_BoostPhrase__Output | null);
  /**
   * semantic and hybrid: the query vector plus factor times the phrase's vector.
   */
  'semantic_boost': (_quarry_search_v1_BoostPhrase__Output | null);
}
