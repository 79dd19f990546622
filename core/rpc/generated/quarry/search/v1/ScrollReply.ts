// Original file: proto/search/v1/core.proto


export interface ScrollReply {
  'chunk_ids'?: (string)[];
}

export interface ScrollReply__Output {
  'chunk_ids': (string)[];
}
