// Original file: proto/search/v1/core.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ApplyReply as _quarry_search_v1_ApplyReply, ApplyReply__Output as _quarry_search_v1_ApplyReply__Output } from '../../../quarry/search/v1/ApplyReply.js';
import type { ApplyRequest as _quarry_search_v1_ApplyRequest, ApplyRequest__Output as _quarry_search_v1_ApplyRequest__Output } from '../../../quarry/search/v1/ApplyRequest.js';
import type { DropReply as _quarry_search_v1_DropReply, DropReply__Output as _quarry_search_v1_DropReply__Output } from '../../../quarry/search/v1/DropReply.js';
import type { DropRequest as _quarry_search_v1_DropRequest, DropRequest__Output as _quarry_search_v1_DropRequest__Output } from '../../../quarry/search/v1/DropRequest.js';
import type { HealthReply as _quarry_search_v1_HealthReply, HealthReply__Output as _quarry_search_v1_HealthReply__Output } from '../../../quarry/search/v1/HealthReply.js';
import type { HealthRequest as _quarry_search_v1_HealthRequest, HealthRequest__Output as _quarry_search_v1_HealthRequest__Output } from '../../../quarry/search/v1/HealthRequest.js';
import type { SearchReply as _quarry_search_v1_SearchReply, SearchReply__Output as _quarry_search_v1_SearchReply__Output } from '../../../quarry/search/v1/SearchReply.js';
import type { SearchRequest as _quarry_search_v1_SearchRequest, SearchRequest__Output as _quarry_search_v1_SearchRequest__Output } from '../../../quarry/search/v1/SearchRequest.js';
import type { StatsReply as _quarry_search_v1_StatsReply, StatsReply__Output as _quarry_search_v1_StatsReply__Output } from '../../../quarry/search/v1/StatsReply.js';
import type { StatsRequest as _quarry_search_v1_StatsRequest, StatsRequest__Output as _quarry_search_v1_StatsRequest__Output } from '../../../quarry/search/v1/StatsRequest.js';

/**
 * The search core: shard placement, scatter/gather, indexing and search.
 */
export interface CoreClient extends grpc.Client {
  /**
   * Applies a dataset's change log (upserts and deletes recorded by the store) at least through
   * `min_seq`. Writers call it after their commit so that a write is searchable when they answer.
   */
  Apply(argument: _quarry_search_v1_ApplyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  Apply(argument: _quarry_search_v1_ApplyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  Apply(argument: _quarry_search_v1_ApplyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  Apply(argument: _quarry_search_v1_ApplyRequest, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  /**
   * Applies a dataset's change log (upserts and deletes recorded by the store) at least through
   * `min_seq`. Writers call it after their commit so that a write is searchable when they answer.
   */
  apply(argument: _quarry_search_v1_ApplyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  apply(argument: _quarry_search_v1_ApplyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  apply(argument: _quarry_search_v1_ApplyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  apply(argument: _quarry_search_v1_ApplyRequest, callback: grpc.requestCallback<_quarry_search_v1_ApplyReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Drops every shard of a dataset (after the dataset was deleted or cleared).
   */
  Drop(argument: _quarry_search_v1_DropRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  Drop(argument: _quarry_search_v1_DropRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  Drop(argument: _quarry_search_v1_DropRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  Drop(argument: _quarry_search_v1_DropRequest, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  /**
   * Drops every shard of a dataset (after the dataset was deleted or cleared).
   */
  drop(argument: _quarry_search_v1_DropRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  drop(argument: _quarry_search_v1_DropRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  drop(argument: _quarry_search_v1_DropRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  drop(argument: _quarry_search_v1_DropRequest, callback: grpc.requestCallback<_quarry_search_v1_DropReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Liveness and readiness: answers when the core can serve. Cheap; used by /api/health.
   */
  Health(argument: _quarry_search_v1_HealthRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  Health(argument: _quarry_search_v1_HealthRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  Health(argument: _quarry_search_v1_HealthRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  Health(argument: _quarry_search_v1_HealthRequest, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  /**
   * Liveness and readiness: answers when the core can serve. Cheap; used by /api/health.
   */
  health(argument: _quarry_search_v1_HealthRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  health(argument: _quarry_search_v1_HealthRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  health(argument: _quarry_search_v1_HealthRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  health(argument: _quarry_search_v1_HealthRequest, callback: grpc.requestCallback<_quarry_search_v1_HealthReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every search feature over one dataset: ranked search, autocomplete, sort and post-ranking,
   * re-scoring, MMR, recommendations, group-oriented and within-group search; and, instead of
   * ranking, a count of the matches (count_only) or a filtered listing of chunk ids (scroll).
   */
  Search(argument: _quarry_search_v1_SearchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  Search(argument: _quarry_search_v1_SearchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  Search(argument: _quarry_search_v1_SearchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  Search(argument: _quarry_search_v1_SearchRequest, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  /**
   * Every search feature over one dataset: ranked search, autocomplete, sort and post-ranking,
   * re-scoring, MMR, recommendations, group-oriented and within-group search; and, instead of
   * ranking, a count of the matches (count_only) or a filtered listing of chunk ids (scroll).
   */
  search(argument: _quarry_search_v1_SearchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  search(argument: _quarry_search_v1_SearchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  search(argument: _quarry_search_v1_SearchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  search(argument: _quarry_search_v1_SearchRequest, callback: grpc.requestCallback<_quarry_search_v1_SearchReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Index statistics of one dataset.
   */
  Stats(argument: _quarry_search_v1_StatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  Stats(argument: _quarry_search_v1_StatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  Stats(argument: _quarry_search_v1_StatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  Stats(argument: _quarry_search_v1_StatsRequest, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  /**
   * Index statistics of one dataset.
   */
  stats(argument: _quarry_search_v1_StatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  stats(argument: _quarry_search_v1_StatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  stats(argument: _quarry_search_v1_StatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  stats(argument: _quarry_search_v1_StatsRequest, callback: grpc.requestCallback<_quarry_search_v1_StatsReply__Output>): grpc.ClientUnaryCall;
  
}

/**
 * The search core: shard placement, scatter/gather, indexing and search.
 */
export interface CoreHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Applies a dataset's change log (upserts and deletes recorded by the store) at least through
   * `min_seq`. Writers call it after their commit so that a write is searchable when they answer.
   */
  Apply: grpc.handleUnaryCall<_quarry_search_v1_ApplyRequest__Output, _quarry_search_v1_ApplyReply>;
  
  /**
   * Drops every shard of a dataset (after the dataset was deleted or cleared).
   */
  Drop: grpc.handleUnaryCall<_quarry_search_v1_DropRequest__Output, _quarry_search_v1_DropReply>;
  
  /**
   * Liveness and readiness: answers when the core can serve. Cheap; used by /api/health.
   */
  Health: grpc.handleUnaryCall<_quarry_search_v1_HealthRequest__Output, _quarry_search_v1_HealthReply>;
  
  /**
   * Every search feature over one dataset: ranked search, autocomplete, sort and post-ranking,
   * re-scoring, MMR, recommendations, group-oriented and within-group search; and, instead of
   * ranking, a count of the matches (count_only) or a filtered listing of chunk ids (scroll).
   */
  Search: grpc.handleUnaryCall<_quarry_search_v1_SearchRequest__Output, _quarry_search_v1_SearchReply>;
  
  /**
   * Index statistics of one dataset.
   */
  Stats: grpc.handleUnaryCall<_quarry_search_v1_StatsRequest__Output, _quarry_search_v1_StatsReply>;
  
}

export interface CoreDefinition extends grpc.ServiceDefinition {
  Apply: MethodDefinition<_quarry_search_v1_ApplyRequest, _quarry_search_v1_ApplyReply, _quarry_search_v1_ApplyRequest__Output, _quarry_search_v1_ApplyReply__Output>
  Drop: MethodDefinition<_quarry_search_v1_DropRequest, _quarry_search_v1_DropReply, _quarry_search_v1_DropRequest__Output, _quarry_search_v1_DropReply__Output>
  Health: MethodDefinition<_quarry_search_v1_HealthRequest, _quarry_search_v1_HealthReply, _quarry_search_v1_HealthRequest__Output, _quarry_search_v1_HealthReply__Output>
  Search: MethodDefinition<_quarry_search_v1_SearchRequest, _quarry_search_v1_SearchReply, _quarry_search_v1_SearchRequest__Output, _quarry_search_v1_SearchReply__Output>
  Stats: MethodDefinition<_quarry_search_v1_StatsRequest, _quarry_search_v1_StatsReply, _quarry_search_v1_StatsRequest__Output, _quarry_search_v1_StatsReply__Output>
}
