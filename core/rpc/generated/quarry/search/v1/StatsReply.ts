// Original file: proto/search/v1/core.proto

import type { Long } from '@grpc/proto-loader';

export interface StatsReply {
  /**
   * Chunks indexed over all shards.
   */
  'chunk_count'?: (number | string | Long);
  /**
   * Shards of the dataset.
   */
  'shards'?: (number);
  /**
   * Lowest change-log sequence applied by every shard.
   */
  'applied_seq'?: (number | string | Long);
}

export interface StatsReply__Output {
  /**
   * Chunks indexed over all shards.
   */
  'chunk_count': (number);
  /**
   * Shards of the dataset.
   */
  'shards': (number);
  /**
   * Lowest change-log sequence applied by every shard.
   */
  'applied_seq': (number);
}
