// Original file: proto/search/v1/core.proto

import type { Long } from '@grpc/proto-loader';

export interface CountReply {
  'count'?: (number | string | Long);
}

export interface CountReply__Output {
  'count': (number);
}
