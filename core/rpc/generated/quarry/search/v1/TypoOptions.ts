// Original file: proto/search/v1/core.proto

import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from '../../../quarry/search/v1/Bound.js';

/**
 * typo_options: which query words may be corrected and how.
 */
export interface TypoOptions {
  /**
   * Word lengths corrected by 1 edit: min, and max (absent: no upper bound).
   */
  'one_typo_min'?: (number);
  'one_typo_max'?: (_quarry_search_v1_Bound | null);
  /**
   * Word lengths corrected by up to 2 edits (wins where the ranges overlap).
   */
  'two_typo_min'?: (number);
  'two_typo_max'?: (_quarry_search_v1_Bound | null);
  /**
   * Words never corrected (lowercase).
   */
  'disable_on_word'?: (string)[];
  /**
   * A query word found verbatim in the dataset is quoted and required in results.
   */
  'prioritize_domain_specific_words'?: (boolean);
}

/**
 * typo_options: which query words may be corrected and how.
 */
export interface TypoOptions__Output {
  /**
   * Word lengths corrected by 1 edit: min, and max (absent: no upper bound).
   */
  'one_typo_min': (number);
  'one_typo_max': (_quarry_search_v1_Bound__Output | null);
  /**
   * Word lengths corrected by up to 2 edits (wins where the ranges overlap).
   */
  'two_typo_min': (number);
  'two_typo_max': (_quarry_search_v1_Bound__Output | null);
  /**
   * Words never corrected (lowercase).
   */
  'disable_on_word': (string)[];
  /**
   * A query word found verbatim in the dataset is quoted and required in results.
   */
  'prioritize_domain_specific_words': (boolean);
}
