// Original file: proto/search/v1/core.proto

import type { Filter as _quarry_search_v1_Filter, Filter__Output as _quarry_search_v1_Filter__Output } from '../../../quarry/search/v1/Filter.js';
import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from '../../../quarry/search/v1/Bound.js';
import type { WeightedQuery as _quarry_search_v1_WeightedQuery, WeightedQuery__Output as _quarry_search_v1_WeightedQuery__Output } from '../../../quarry/search/v1/WeightedQuery.js';
import type { ScoringOptions as _quarry_search_v1_ScoringOptions, ScoringOptions__Output as _quarry_search_v1_ScoringOptions__Output } from '../../../quarry/search/v1/ScoringOptions.js';
import type { TypoOptions as _quarry_search_v1_TypoOptions, TypoOptions__Output as _quarry_search_v1_TypoOptions__Output } from '../../../quarry/search/v1/TypoOptions.js';
import type { SortOptions as _quarry_search_v1_SortOptions, SortOptions__Output as _quarry_search_v1_SortOptions__Output } from '../../../quarry/search/v1/SortOptions.js';
import type { Autocomplete as _quarry_search_v1_Autocomplete, Autocomplete__Output as _quarry_search_v1_Autocomplete__Output } from '../../../quarry/search/v1/Autocomplete.js';
import type { GroupBy as _quarry_search_v1_GroupBy, GroupBy__Output as _quarry_search_v1_GroupBy__Output } from '../../../quarry/search/v1/GroupBy.js';
import type { Recommend as _quarry_search_v1_Recommend, Recommend__Output as _quarry_search_v1_Recommend__Output } from '../../../quarry/search/v1/Recommend.js';
import type { GroupRef as _quarry_search_v1_GroupRef, GroupRef__Output as _quarry_search_v1_GroupRef__Output } from '../../../quarry/search/v1/GroupRef.js';
import type { CountOnly as _quarry_search_v1_CountOnly, CountOnly__Output as _quarry_search_v1_CountOnly__Output } from '../../../quarry/search/v1/CountOnly.js';
import type { ScrollOptions as _quarry_search_v1_ScrollOptions, ScrollOptions__Output as _quarry_search_v1_ScrollOptions__Output } from '../../../quarry/search/v1/ScrollOptions.js';

export interface SearchRequest {
  'dataset_id'?: (string);
  /**
   * "bm25", "fulltext", "semantic" or "hybrid".
   */
  'search_type'?: (string);
  'query'?: (string);
  'filter'?: (_quarry_search_v1_Filter | null);
  /**
   * Results to skip, then to return (page_size * (page - 1) and page_size).
   */
  'offset'?: (number);
  'limit'?: (number);
  /**
   * Drop results scoring below this (absent: no threshold).
   */
  'score_threshold'?: (_quarry_search_v1_Bound | null);
  /**
   * Also count every match (for total pages); costs a full evaluation.
   */
  'count_total'?: (boolean);
  /**
   * Semantic only: several weighted queries whose embeddings are summed (query is then ignored).
   */
  'queries'?: (_quarry_search_v1_WeightedQuery)[];
  /**
   * Semantic only: search with this vector as it is (recommendations); query and queries are
   * then not embedded. Its length must be the dataset model's dimension.
   */
  'vector'?: (number | string)[];
  /**
   * Query-time boosts (the REST scoring_options).
   */
  'scoring'?: (_quarry_search_v1_ScoringOptions | null);
  /**
   * Autocomplete: the last word of the query also matches every indexed word it begins
   * (bm25 and fulltext; the facade adds a content filter for the other types).
   */
  'prefix_last_word'?: (boolean);
  /**
   * Typo correction of the query against the dataset's words (absent: none).
   */
  'typo'?: (_quarry_search_v1_TypoOptions | null);
  /**
   * Re-ordering and post-ranking of the results (the REST sort_options); absent: none.
   */
  'sort'?: (_quarry_search_v1_SortOptions | null);
  /**
   * Autocomplete: every query word is required and the last one (unless the query ends in a
   * space) matches as a prefix; prefix_last_word is then implied.
   */
  'autocomplete'?: (_quarry_search_v1_Autocomplete | null);
  /**
   * Group-oriented search: the reply's groups, ranked by their best chunk; offset and limit
   * then count groups. Works with plain searches, autocomplete and recommendations.
   */
  'group_by'?: (_quarry_search_v1_GroupBy | null);
  /**
   * Recommendations: chunks like the positive examples and unlike the negative ones (never the
   * examples themselves). query is ignored; search_type is the recommend type ("semantic",
   * "bm25" or "fulltext"); offset must be 0.
   */
  'recommend'?: (_quarry_search_v1_Recommend | null);
  /**
   * Search within one group: only its members match (NOT_FOUND when it does not exist).
   */
  'within_group'?: (_quarry_search_v1_GroupRef | null);
  /**
   * Count the chunks that match the query, filter and score_threshold (reply: total);
   * offset, limit, count_total and the ranking options are ignored.
   */
  'count_only'?: (_quarry_search_v1_CountOnly | null);
  /**
   * List the ids of the chunks that match the filter (reply: chunks, score 0), by id ascending
   * or by a field, limit of them; query must be empty, search_type and offset are ignored.
   */
  'scroll'?: (_quarry_search_v1_ScrollOptions | null);
  /**
   * What the call does instead of ranking (absent: it ranks).
   */
  'instead'?: "count_only"|"scroll";
}

export interface SearchRequest__Output {
  'dataset_id': (string);
  /**
   * "bm25", "fulltext", "semantic" or "hybrid".
   */
  'search_type': (string);
  'query': (string);
  'filter': (_quarry_search_v1_Filter__Output | null);
  /**
   * Results to skip, then to return (page_size * (page - 1) and page_size).
   */
  'offset': (number);
  'limit': (number);
  /**
   * Drop results scoring below this (absent: no threshold).
   */
  'score_threshold': (_quarry_search_v1_Bound__Output | null);
  /**
   * Also count every match (for total pages); costs a full evaluation.
   */
  'count_total': (boolean);
  /**
   * Semantic only: several weighted queries whose embeddings are summed (query is then ignored).
   */
  'queries': (_quarry_search_v1_WeightedQuery__Output)[];
  /**
   * Semantic only: search with this vector as it is (recommendations); query and queries are
   * then not embedded. Its length must be the dataset model's dimension.
   */
  'vector': (number)[];
  /**
   * Query-time boosts (the REST scoring_options).
   */
  'scoring': (_quarry_search_v1_ScoringOptions__Output | null);
  /**
   * Autocomplete: the last word of the query also matches every indexed word it begins
   * (bm25 and fulltext; the facade adds a content filter for the other types).
   */
  'prefix_last_word': (boolean);
  /**
   * Typo correction of the query against the dataset's words (absent: none).
   */
  'typo': (_quarry_search_v1_TypoOptions__Output | null);
  /**
   * Re-ordering and post-ranking of the results (the REST sort_options); absent: none.
   */
  'sort': (_quarry_search_v1_SortOptions__Output | null);
  /**
   * Autocomplete: every query word is required and the last one (unless the query ends in a
   * space) matches as a prefix; prefix_last_word is then implied.
   */
  'autocomplete': (_quarry_search_v1_Autocomplete__Output | null);
  /**
   * Group-oriented search: the reply's groups, ranked by their best chunk; offset and limit
   * then count groups. Works with plain searches, autocomplete and recommendations.
   */
  'group_by': (_quarry_search_v1_GroupBy__Output | null);
  /**
   * Recommendations: chunks like the positive examples and unlike the negative ones (never the
   * examples themselves). query is ignored; search_type is the recommend type ("semantic",
   * "bm25" or "fulltext"); offset must be 0.
   */
  'recommend': (_quarry_search_v1_Recommend__Output | null);
  /**
   * Search within one group: only its members match (NOT_FOUND when it does not exist).
   */
  'within_group': (_quarry_search_v1_GroupRef__Output | null);
  /**
   * Count the chunks that match the query, filter and score_threshold (reply: total);
   * offset, limit, count_total and the ranking options are ignored.
   */
  'count_only'?: (_quarry_search_v1_CountOnly__Output | null);
  /**
   * List the ids of the chunks that match the filter (reply: chunks, score 0), by id ascending
   * or by a field, limit of them; query must be empty, search_type and offset are ignored.
   */
  'scroll'?: (_quarry_search_v1_ScrollOptions__Output | null);
  /**
   * What the call does instead of ranking (absent: it ranks).
   */
  'instead'?: "count_only"|"scroll";
}
