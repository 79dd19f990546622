/** gRPC handlers of the core: convert proto messages to the engine's canonical queries and back. */
import type * as grpc from '@grpc/grpc-js';
import { boundValue, type Bound, type Filter } from '../domain/filter.js';
import { badRequest, QuarryError } from '../domain/errors.js';
import { deadlineSignal } from '../pool/task-stop.js';
import type { Engine } from '../router/engine.js';

/* Proto-loader objects (keepCase, defaults): absent messages are null, absent scalars defaults. */
interface SearchRequest {
  dataset_id: string;
  search_type: string;
  query: string;
  filter: Filter | null;
  offset: number;
  limit: number;
  score_threshold: Bound | null;
  count_total: boolean;
  queries: { query: string; weight: number }[];
  vector: number[];
  scoring: { fulltext_boost: { phrase: string; factor: number } | null; semantic_boost: { phrase: string; factor: number } | null } | null;
  prefix_last_word: boolean;
  typo: {
    one_typo_min: number;
    one_typo_max: Bound | null;
    two_typo_min: number;
    two_typo_max: Bound | null;
    disable_on_word: string[];
    prioritize_domain_specific_words: boolean;
  } | null;
}
interface CountRequest {
  dataset_id: string;
  search_type: string;
  query: string;
  filter: Filter | null;
  score_threshold: Bound | null;
  limit: number;
}
interface ScrollRequest {
  dataset_id: string;
  filter: Filter | null;
  offset_chunk_id: string;
  limit: number;
  sort_field: string;
  sort_direction: string;
}

/** Most results one search may page through (offset + limit). */
const MAX_WINDOW = 100_000;

function requireDataset(id: string): string {
  if (!id) throw badRequest('dataset_id is required');
  return id;
}

/**
 * An AbortSignal that fires at the call's deadline or when the caller cancels it (a client that
 * went away), so that the core stops the call's work: shard tasks at their next check, model
 * server requests at once.
 */
export function callSignal(call: grpc.ServerUnaryCall<unknown, unknown>): AbortSignal {
  const cancelled = new AbortController();
  call.once('cancelled', () => cancelled.abort(new QuarryError('cancelled', 'the caller cancelled the call')));
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  if (!Number.isFinite(at) || at <= 0) return cancelled.signal;
  return deadlineSignal(at, 'the core call', cancelled.signal);
}

/** Builds the handlers over an engine. */
export function coreHandlers(engine: Engine) {
  return {
    async Apply(req: { dataset_id: string; min_seq: number }) {
      return { applied_seq: await engine.apply(requireDataset(req.dataset_id), Number(req.min_seq) || 0) };
    },
    async Search(req: SearchRequest, signal?: AbortSignal) {
      if (req.offset + req.limit > MAX_WINDOW) throw badRequest(`page * page_size must not exceed ${MAX_WINDOW}`);
      const threshold = boundValue(req.score_threshold);
      const hits = await engine.search(
        {
          datasetId: requireDataset(req.dataset_id),
          searchType: req.search_type,
          query: req.query,
          filter: req.filter,
          offset: req.offset,
          limit: req.limit,
          scoreThreshold: threshold === undefined || threshold === 0 ? null : threshold,
          countTotal: req.count_total,
          queries: req.queries ?? [],
          vector: req.vector && req.vector.length > 0 ? Float32Array.from(req.vector) : null,
          fulltextBoost: req.scoring?.fulltext_boost ?? null,
          semanticBoost: req.scoring?.semantic_boost ?? null,
          prefixLastWord: req.prefix_last_word === true,
          typo: req.typo
            ? {
                oneTypoWordRange: { min: req.typo.one_typo_min, max: boundValue(req.typo.one_typo_max) ?? null },
                twoTypoWordRange: { min: req.typo.two_typo_min, max: boundValue(req.typo.two_typo_max) ?? null },
                disableOnWord: req.typo.disable_on_word ?? [],
                prioritizeDomainSpecificWords: req.typo.prioritize_domain_specific_words,
              }
            : null,
        },
        signal,
      );
      return {
        chunks: hits.chunkIds.map((id, i) => ({ chunk_id: id, score: hits.scores[i] })),
        total: hits.total,
        corrected_query: hits.correctedQuery ?? '',
      };
    },
    async Count(req: CountRequest, signal?: AbortSignal) {
      const threshold = boundValue(req.score_threshold);
      const hits = await engine.search(
        {
          datasetId: requireDataset(req.dataset_id),
          searchType: req.search_type,
          query: req.query,
          filter: req.filter,
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
    async Scroll(req: ScrollRequest, signal?: AbortSignal) {
      const ids = await engine.scroll({
        datasetId: requireDataset(req.dataset_id),
        filter: req.filter,
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
