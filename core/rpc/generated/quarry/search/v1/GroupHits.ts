// Original file: proto/search/v1/core.proto

import type { ScoredChunk as _quarry_search_v1_ScoredChunk, ScoredChunk__Output as _quarry_search_v1_ScoredChunk__Output } from '../../../quarry/search/v1/ScoredChunk.js';

/**
 * One group of a group-oriented answer, its chunks best first.
 */
export interface GroupHits {
  'group_id'?: (string);
  'chunks'?: (_quarry_search_v1_ScoredChunk)[];
}

/**
 * One group of a group-oriented answer, its chunks best first.
 */
export interface GroupHits__Output {
  'group_id': (string);
  'chunks': (_quarry_search_v1_ScoredChunk__Output)[];
}
