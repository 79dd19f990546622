/** gRPC handlers of the core: convert proto messages to the engine's canonical queries and back. */
import type * as grpc from '@grpc/grpc-js';
import { boundValue, type Filter } from '../domain/filter.js';
import { badRequest, QuarryError } from '../domain/errors.js';
import { runPipeline } from '../pipeline/search-pipeline.js';
import { callDeadline, type CallDeadline } from '../pool/task-stop.js';
import type { Engine } from '../router/engine.js';
import type { ApplyRequest__Output } from './generated/quarry/search/v1/ApplyRequest.js';
import type { CountRequest__Output } from './generated/quarry/search/v1/CountRequest.js';
import type { ScrollRequest__Output } from './generated/quarry/search/v1/ScrollRequest.js';
import type { SearchRequest__Output } from './generated/quarry/search/v1/SearchRequest.js';
import { pipelineRequestOf, searchReplyOf } from './search-request.js';

function requireDataset(id: string): string {
  if (!id) throw badRequest('dataset_id is required');
  return id;
}

/**
 * An AbortSignal that fires at the call's deadline or when the caller cancels it (a client that
 * went away), so that the core stops the call's work: shard tasks at their next check, model
 * server requests at once. Dispose of it when the call is answered.
 */
export function callSignal(call: grpc.ServerUnaryCall<unknown, unknown>): CallDeadline {
  const cancelled = new AbortController();
  const onCancel = (): void => cancelled.abort(new QuarryError('cancelled', 'the caller cancelled the call'));
  call.once('cancelled', onCancel);
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  const inner = Number.isFinite(at) && at > 0 ? callDeadline(at, 'the core call', cancelled.signal) : null;
  return {
    signal: inner ? inner.signal : cancelled.signal,
    dispose: () => {
      inner?.dispose();
      call.off('cancelled', onCancel);
    },
  };
}

/** Builds the handlers over an engine. */
export function coreHandlers(engine: Engine) {
  return {
    async Apply(req: ApplyRequest__Output) {
      return { applied_seq: await engine.apply(requireDataset(req.dataset_id), Number(req.min_seq) || 0) };
    },
    async Search(req: SearchRequest__Output, signal?: AbortSignal) {
      const pipeline = { retrieve: engine.search.bind(engine), store: engine.store };
      return searchReplyOf(await runPipeline(pipeline, pipelineRequestOf(req), signal));
    },
    async Count(req: CountRequest__Output, signal?: AbortSignal) {
      const threshold = boundValue(req.score_threshold);
      const hits = await engine.search(
        {
          datasetId: requireDataset(req.dataset_id),
          searchType: req.search_type,
          query: req.query,
          filter: req.filter as Filter | null,
          offset: 0,
          limit: 0,
          scoreThreshold: threshold === undefined || threshold === 0 ? null : threshold,
          countTotal: true,
          queries: [],
        },
        signal,
      );
      return { count: req.limit > 0 ? Math.min(req.limit, hits.total) : hits.total };
    },
    async Scroll(req: ScrollRequest__Output, signal?: AbortSignal) {
      const ids = await engine.scroll({
        datasetId: requireDataset(req.dataset_id),
        filter: req.filter as Filter | null,
        offsetChunkId: req.offset_chunk_id || null,
        limit: req.limit,
        sortField: req.sort_field || null,
        descending: req.sort_direction !== 'asc',
      }, signal);
      return { chunk_ids: ids };
    },
    async Stats(req: { dataset_id: string }) {
      const s = await engine.stats(requireDataset(req.dataset_id));
      return { chunk_count: s.chunkCount, shards: s.shards, applied_seq: s.appliedSeq };
    },
    async Drop(req: { dataset_id: string }) {
      await engine.drop(requireDataset(req.dataset_id));
      return {};
    },
  };
}
