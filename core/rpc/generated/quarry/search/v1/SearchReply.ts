// Original file: proto/search/v1/core.proto

import type { ScoredChunk as _quarry_search_v1_ScoredChunk, ScoredChunk__Output as _quarry_search_v1_ScoredChunk__Output } from '../../../quarry/search/v1/ScoredChunk.js';
import type { GroupHits as _quarry_search_v1_GroupHits, GroupHits__Output as _quarry_search_v1_GroupHits__Output } from '../../../quarry/search/v1/GroupHits.js';
import type { Long } from '@grpc/proto-loader';

export interface SearchReply {
  /**
   * The results, best first (empty with group_by: see groups); with scroll, the listed ids in
   * order, score 0.
   */
  'chunks'?: (_quarry_search_v1_ScoredChunk)[];
  /**
   * Number of matches when count_total or count_only was asked, else 0.
   */
  'total'?: (number | string | Long);
  /**
   * The query after typo correction, when it changed (else empty).
   */
  'corrected_query'?: (string);
  /**
   * With group_by: the page of groups, best first.
   */
  'groups'?: (_quarry_search_v1_GroupHits)[];
  /**
   * With group_by and count_groups: the number of groups the ranking reaches.
   */
  'total_groups'?: (number | string | Long);
}

export interface SearchReply__Output {
  /**
   * The results, best first (empty with group_by: see groups); with scroll, the listed ids in
   * order, score 0.
   */
  'chunks': (_quarry_search_v1_ScoredChunk__Output)[];
  /**
   * Number of matches when count_total or count_only was asked, else 0.
   */
  'total': (number);
  /**
   * The query after typo correction, when it changed (else empty).
   */
  'corrected_query': (string);
  /**
   * With group_by: the page of groups, best first.
   */
  'groups': (_quarry_search_v1_GroupHits__Output)[];
  /**
   * With group_by and count_groups: the number of groups the ranking reaches.
   */
  'total_groups': (number);
}
