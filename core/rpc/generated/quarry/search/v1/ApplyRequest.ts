// Original file: proto/search/v1/core.proto

import type { Long } from '@grpc/proto-loader';

export interface ApplyRequest {
  /**
   * Dataset whose change log to apply.
   */
  'dataset_id'?: (string);
  /**
   * Apply at least through this change-log sequence (0: everything recorded so far).
   */
  'min_seq'?: (number | string | Long);
}

export interface ApplyRequest__Output {
  /**
   * Dataset whose change log to apply.
   */
  'dataset_id': (string);
  /**
   * Apply at least through this change-log sequence (0: everything recorded so far).
   */
  'min_seq': (number);
}
