/** gRPC handlers of the core: convert proto messages to the engine's canonical queries and back. */
import type * as grpc from '@grpc/grpc-js';
import { boundValue, type Filter } from '../domain/filter.js';
import { badRequest, QuarryError } from '../domain/errors.js';
import { runPipeline } from '../pipeline/search-pipeline.js';
import { callDeadline, type CallDeadline } from '../pool/task-stop.js';
import type { Engine } from '../router/engine.js';
import type { ApplyRequest__Output } from './generated/quarry/search/v1/ApplyRequest.js';
import type { ScrollOptions__Output } from './generated/quarry/search/v1/ScrollOptions.js';
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
  /** The matches of a search's query, filter and threshold, counted up to `limit` (0: all). */
  const count = async (req: SearchRequest__Output, limit: number, signal?: AbortSignal): Promise<number> => {
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
    return limit > 0 ? Math.min(limit, hits.total) : hits.total;
  };

  /** The ids of chunks matching a search's filter, in id order from an id or by a field. */
  const scroll = (req: SearchRequest__Output, options: ScrollOptions__Output, signal?: AbortSignal): Promise<string[]> => {
    if (req.query) throw badRequest('scroll lists chunks by filter: query must be empty');
    return engine.scroll(
      {
        datasetId: requireDataset(req.dataset_id),
        filter: req.filter as Filter | null,
        offsetChunkId: options.offset_chunk_id || null,
        limit: req.limit,
        sortField: options.sort_field || null,
        descending: options.sort_direction !== 'asc',
      },
      signal,
    );
  };

  return {
    async Apply(req: ApplyRequest__Output) {
      return { applied_seq: await engine.apply(requireDataset(req.dataset_id), Number(req.min_seq) || 0) };
    },
    async Search(req: SearchRequest__Output, signal?: AbortSignal) {
      if (req.instead === 'count_only') return { total: await count(req, req.count_only?.limit ?? 0, signal) };
      if (req.instead === 'scroll') return { chunks: (await scroll(req, req.scroll!, signal)).map((id) => ({ chunk_id: id, score: 0 })) };
      const pipeline = { retrieve: engine.search.bind(engine), store: engine.store };
      return searchReplyOf(await runPipeline(pipeline, pipelineRequestOf(req), signal));
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
