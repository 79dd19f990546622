/**
 * The ranked-chunk pipeline behind search, autocomplete and group search: retrieval by the
 * engine (plain, or a prefetch re-ordered by a field or re-scored by another search type or a
 * cross-encoder), chunk records from the store, then `sort_options` post-ranking of the page.
 */
import type { ChunkRecord } from '../domain/chunk.js';
import { embeddingSpec, rerankerSpec } from '../domain/dataset-config.js';
import { badRequest } from '../domain/errors.js';
import { rerankText } from '../domain/lexical-text.js';
import type { SortByField, SortByRerank, SortOptions } from '../domain/search-options.js';
import type { DatasetRecord } from '../domain/tenancy.js';
import { Reranker } from '../embed/reranker.js';
import type { SearchHits, SearchQuery } from '../router/engine.js';
import type { Store } from '../../store/repository.js';
import { chunksInHitOrder, hitsOf, scoredIds, type Hit } from './hit-chunks.js';
import { byScore, postRank, type Ranked } from './post-rank.js';
import { withFields } from '../domain/with-fields.js';

/** Candidates fetched before a field sort or a re-scoring when the request names no amount. */
const DEFAULT_PREFETCH = 1000;
/** Below this page size MMR picks from twice the page, as the reference does. */
const MMR_DOUBLE_BELOW = 20;

/** What a pipeline step may use: retrieval, the store, the dataset and the call's signal. */
export interface PipelineContext {
  /** One retrieval by the engine (admitted and deadline-checked there). */
  readonly retrieve: (q: SearchQuery, signal?: AbortSignal) => Promise<SearchHits>;
  readonly store: Store;
  readonly dataset: DatasetRecord;
  /** The dataset's MAX_LIMIT: caps prefetches and groupings. */
  readonly maxLimit: number;
  readonly signal?: AbortSignal;
}

/** A ranked search of chunks: a retrieval plus what happens to its ranking. */
export interface RankedSearch extends SearchQuery {
  readonly sort: SortOptions | null;
}

/** Results of a search: the page, best first, and the number of matches when counted. */
export interface RankedResult {
  readonly results: Hit[];
  readonly total: number;
  /** The query after typo correction, when it changed. */
  readonly correctedQuery: string | null;
}

/** A sortable value of a chunk's field; undefined when it has none (see SORTABLE_FIELDS). */
function fieldValue(c: ChunkRecord, field: string): number | string | undefined {
  if (field === 'num_value') return c.numValue ?? undefined;
  if (field === 'time_stamp') return c.timeStamp ?? undefined;
  if (field === 'weight') return c.weight;
  if (field === 'created_at') return c.createdAt;
  if (field === 'updated_at') return c.updatedAt;
  if (field === 'link' || field === 'tracking_id') return (field === 'link' ? c.link : c.trackingId) ?? undefined;
  if (field.startsWith('metadata.')) {
    let v: unknown = c.metadata;
    for (const k of field.slice(9).split('.')) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
    return typeof v === 'number' || typeof v === 'string' ? v : undefined;
  }
  return undefined;
}

/** One retrieval of `s` with this window, and its hits' chunk records in hit order. */
async function retrieveChunks(ctx: PipelineContext, q: SearchQuery): Promise<{ hits: SearchHits; chunks: Ranked[] }> {
  const hits = await ctx.retrieve(q, ctx.signal);
  return { hits, chunks: await chunksInHitOrder(ctx.store, ctx.dataset.id, scoredIds(hits)) };
}

/** Prefetch by relevance, then order by a field (score_threshold does not apply, as in the reference). */
async function sortedByField(ctx: PipelineContext, s: RankedSearch, by: SortByField, limit: number): Promise<RecordsResult> {
  const prefetch = Math.min(by.prefetch ?? DEFAULT_PREFETCH, ctx.maxLimit);
  const { hits, chunks } = await retrieveChunks(ctx, withFields(s, { offset: 0, limit: prefetch, scoreThreshold: null }));
  const dir = by.descending ? -1 : 1;
  const keyed = chunks.map((r) => ({ r, v: fieldValue(r.c, by.field) }));
  keyed.sort((a, b) => {
    if (a.v === undefined || b.v === undefined) return a.v === b.v ? 0 : a.v === undefined ? 1 : -1;
    return (a.v < b.v ? -1 : a.v > b.v ? 1 : 0) * dir;
  });
  return {
    results: keyed.slice(s.offset, s.offset + limit).map((k) => k.r),
    total: s.countTotal ? Math.min(hits.total, prefetch) : 0,
    correctedQuery: hits.correctedQuery ?? null,
  };
}

/** Prefetch by the search type, re-score the candidates by another type or a cross-encoder, then threshold and page. */
async function reScored(ctx: PipelineContext, s: RankedSearch, by: SortByRerank, limit: number): Promise<RecordsResult> {
  const spec = by.rerankType === 'cross_encoder' ? rerankerSpec(ctx.dataset.serverConfiguration) : null;
  if (by.rerankType === 'cross_encoder' && !spec) {
    throw badRequest('sort_by.rerank_type "cross_encoder" needs a reranker: set RERANKER_BASE_URL in the dataset server_configuration');
  }
  const prefetch = Math.min(by.prefetch ?? DEFAULT_PREFETCH, ctx.maxLimit);
  const { hits, chunks: candidates } = await retrieveChunks(ctx, withFields(s, { offset: 0, limit: prefetch, scoreThreshold: null, countTotal: false }));
  const correctedQuery = hits.correctedQuery ?? null;
  if (candidates.length === 0) return { results: [], total: 0, correctedQuery };
  const query = by.query ?? correctedQuery?.replace(/"/g, ' ') ?? s.query;
  let scores: Map<string, number>;
  if (spec) {
    const texts = candidates.map((r) => rerankText(r.c));
    const out = await new Reranker(spec).score(query, texts, ctx.signal);
    scores = new Map(candidates.map((r, i) => [r.c.id, out[i]!]));
  } else {
    const again = await ctx.retrieve(
      withFields(s, {
        searchType: by.rerankType,
        query,
        queries: [],
        vector: null,
        typo: null,
        filter: { must: [{ has_id: { ids: candidates.map((r) => r.c.id) } }] },
        offset: 0,
        limit: candidates.length,
        scoreThreshold: null,
        countTotal: false,
      }),
      ctx.signal,
    );
    scores = new Map(again.chunkIds.map((id, i) => [id, again.scores[i]!]));
  }
  // Candidates the second scorer does not match at all (no shared word) rank after those it does.
  const floor = Math.min(0, ...scores.values()) - 1;
  let ranked = candidates.map((r) => ({ c: r.c, score: scores.get(r.c.id) ?? floor })).sort(byScore);
  if (s.scoreThreshold !== null) ranked = ranked.filter((r) => r.score >= s.scoreThreshold!);
  return { results: ranked.slice(s.offset, s.offset + limit), total: s.countTotal ? ranked.length : 0, correctedQuery };
}

/** A step's results with their chunk records (what sorting and post-ranking read). */
interface RecordsResult extends Omit<RankedResult, 'results'> {
  readonly results: Ranked[];
}

/**
 * Runs a ranked search: retrieval (re-ordered or re-scored by sort_by), then post-ranking.
 * Without sort options the hits are the engine's as they are, and no chunk record is read.
 */
export async function runRankedSearch(ctx: PipelineContext, s: RankedSearch): Promise<RankedResult> {
  if (!s.sort) {
    const hits = await ctx.retrieve(s, ctx.signal);
    return { results: hitsOf(hits), total: hits.total, correctedQuery: hits.correctedQuery ?? null };
  }
  const sort = s.sort;
  const mmr = sort.mmrLambda !== null;
  const limit = mmr && s.limit < MMR_DOUBLE_BELOW ? s.limit * 2 : s.limit;
  let out: RecordsResult;
  const sortBy = sort.sortBy;
  if (limit === 0) {
    const hits = await ctx.retrieve(withFields(s, { limit: 0 }), ctx.signal);
    out = { results: [], total: hits.total, correctedQuery: hits.correctedQuery ?? null };
  } else if (sortBy?.kind === 'field') {
    out = await sortedByField(ctx, s, sortBy, limit);
  } else if (sortBy?.kind === 'rerank') {
    out = await reScored(ctx, s, sortBy, limit);
  } else {
    const { hits, chunks } = await retrieveChunks(ctx, withFields(s, { limit }));
    out = { results: chunks, total: hits.total, correctedQuery: hits.correctedQuery ?? null };
  }
  const vectors = mmr
    ? await ctx.store.vectors.getMany(out.results.map((r) => r.c.id), embeddingSpec(ctx.dataset.serverConfiguration).modelKey)
    : new Map<string, Float32Array>();
  // A field sort is the order the caller asked for: post-ranking would undo it.
  const ranked = sortBy?.kind === 'field' ? out.results : postRank(out.results, sort, vectors);
  return { results: ranked.slice(0, s.limit).map((r) => ({ id: r.c.id, score: r.score })), total: out.total, correctedQuery: out.correctedQuery };
}
