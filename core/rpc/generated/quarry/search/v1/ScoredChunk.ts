// Original file: proto/search/v1/core.proto


export interface ScoredChunk {
  'chunk_id'?: (string);
  'score'?: (number | string);
}

export interface ScoredChunk__Output {
  'chunk_id': (string);
  'score': (number);
}
