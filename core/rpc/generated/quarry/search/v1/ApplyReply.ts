// Original file: proto/search/v1/core.proto

import type { Long } from '@grpc/proto-loader';

export interface ApplyReply {
  /**
   * Sequence applied through.
   */
  'applied_seq'?: (number | string | Long);
}

export interface ApplyReply__Output {
  /**
   * Sequence applied through.
   */
  'applied_seq': (number);
}
