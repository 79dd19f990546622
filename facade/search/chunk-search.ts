/**
 * The ranked-chunk pipeline behind search, autocomplete and group search: retrieval through the
 * core (plain, or a prefetch re-ordered by a field or re-scored by another search type or a
 * cross-encoder), chunk records from the store, then `sort_options` post-ranking of the page.
 */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { embeddingSpec, rerankerSpec } from '../../core/domain/dataset-config.js';
import { badRequest } from '../../core/domain/errors.js';
import type { Filter } from '../../core/domain/filter.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import { Reranker } from '../../core/embed/reranker.js';
import { rerankText } from '../../core/domain/lexical-text.js';
import type { Services } from '../context.js';
import type { ScoringOptions, SortByField, SortByRerank, SortOptions } from '../schemas/search-options.js';
import type { TypoOptions } from '../../core/typo/options.js';
import { chunksInHitOrder } from './hit-chunks.js';
import { byScore, postRank, type Ranked } from './post-rank.js';

/** Candidates fetched before a field sort or a re-scoring when the request names no amount. */
const DEFAULT_PREFETCH = 1000;
/** Below this page size MMR picks from twice the page, as the reference does. */
const MMR_DOUBLE_BELOW = 20;

/** A ranked search of chunks, already validated and pre-processed. */
export interface ChunkSearch {
  readonly searchType: string;
  /** The processed query text. */
  readonly text: string;
  /** Semantic multi-query (empty otherwise). */
  readonly queries: readonly { query: string; weight: number }[];
  readonly filter: Filter | null;
  /** Results to skip and to return. */
  readonly offset: number;
  readonly limit: number;
  readonly countTotal: boolean;
  readonly scoreThreshold: number | null;
  readonly sort: SortOptions | null;
  readonly scoring: ScoringOptions | null;
  /** Autocomplete: complete the last word. */
  readonly prefixLastWord?: boolean;
  /** Typo correction (null: none). */
  readonly typo?: TypoOptions | null;
  /** The dataset's MAX_LIMIT (caps prefetches). */
  readonly maxLimit: number;
}

/** Results of a search: the page, best first, and the number of matches when counted. */
export interface ChunkSearchResult {
  readonly results: Ranked[];
  readonly total: number;
  /** The query after typo correction, when it changed. */
  readonly correctedQuery?: string | null;
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

/** The core's search arguments for one retrieval. */
function coreArgs(dataset: DatasetRecord, s: ChunkSearch, searchType: string, offset: number, limit: number, threshold: number | null, countTotal: boolean) {
  return {
    dataset_id: dataset.id,
    search_type: searchType,
    query: s.text,
    filter: s.filter,
    offset,
    limit,
    score_threshold: threshold === null ? null : { value: threshold },
    count_total: countTotal,
    queries: [...s.queries],
    scoring: s.scoring ? { fulltext_boost: s.scoring.fulltextBoost, semantic_boost: s.scoring.semanticBoost } : null,
    prefix_last_word: s.prefixLastWord === true,
    typo: s.typo
      ? {
          one_typo_min: s.typo.oneTypoWordRange.min,
          one_typo_max: s.typo.oneTypoWordRange.max === null ? null : { value: s.typo.oneTypoWordRange.max },
          two_typo_min: s.typo.twoTypoWordRange.min,
          two_typo_max: s.typo.twoTypoWordRange.max === null ? null : { value: s.typo.twoTypoWordRange.max },
          disable_on_word: [...s.typo.disableOnWord],
          prioritize_domain_specific_words: s.typo.prioritizeDomainSpecificWords,
        }
      : null,
  };
}

/** Prefetch by relevance, then order by a field (score_threshold does not apply, as in the reference). */
async function sortedByField(services: Services, dataset: DatasetRecord, s: ChunkSearch, by: SortByField, limit: number): Promise<ChunkSearchResult> {
  const prefetch = Math.min(by.prefetch ?? DEFAULT_PREFETCH, s.maxLimit);
  const { chunks, total, corrected_query } = await services.core.search(coreArgs(dataset, s, s.searchType, 0, prefetch, null, s.countTotal));
  const all = await chunksInHitOrder(services, dataset.id, chunks);
  const dir = by.descending ? -1 : 1;
  const keyed = all.map((r) => ({ r, v: fieldValue(r.c, by.field) }));
  keyed.sort((a, b) => {
    if (a.v === undefined || b.v === undefined) return a.v === b.v ? 0 : a.v === undefined ? 1 : -1;
    return (a.v < b.v ? -1 : a.v > b.v ? 1 : 0) * dir;
  });
  return { results: keyed.slice(s.offset, s.offset + limit).map((k) => k.r), total: s.countTotal ? Math.min(total, prefetch) : 0, correctedQuery: corrected_query || null };
}

/** Prefetch by the search type, re-score the candidates by another type or a cross-encoder, then threshold and page. */
async function reScored(services: Services, dataset: DatasetRecord, s: ChunkSearch, by: SortByRerank, limit: number, signal?: AbortSignal): Promise<ChunkSearchResult> {
  const spec = by.rerankType === 'cross_encoder' ? rerankerSpec(dataset.serverConfiguration) : null;
  if (by.rerankType === 'cross_encoder' && !spec) {
    throw badRequest('sort_by.rerank_type "cross_encoder" needs a reranker: set RERANKER_BASE_URL in the dataset server_configuration');
  }
  const prefetch = Math.min(by.prefetch ?? DEFAULT_PREFETCH, s.maxLimit);
  const { chunks, corrected_query } = await services.core.search(coreArgs(dataset, s, s.searchType, 0, prefetch, null, false));
  const candidates = await chunksInHitOrder(services, dataset.id, chunks);
  const correctedQuery = corrected_query || null;
  if (candidates.length === 0) return { results: [], total: 0, correctedQuery };
  const query = by.query ?? correctedQuery?.replace(/"/g, ' ') ?? s.text;
  let scores: Map<string, number>;
  if (spec) {
    const texts = candidates.map((r) => rerankText(r.c));
    const out = await new Reranker(spec).score(query, texts, signal);
    scores = new Map(candidates.map((r, i) => [r.c.id, out[i]!]));
  } else {
    const again = await services.core.search({
      ...coreArgs(dataset, s, by.rerankType, 0, candidates.length, null, false),
      query,
      queries: [],
      typo: null,
      filter: { must: [{ has_id: { ids: candidates.map((r) => r.c.id) } }] },
    });
    scores = new Map(again.chunks.map((h) => [h.chunk_id, h.score]));
  }
  // Candidates the second scorer does not match at all (no shared word) rank after those it does.
  const floor = Math.min(0, ...scores.values()) - 1;
  let ranked = candidates.map((r) => ({ c: r.c, score: scores.get(r.c.id) ?? floor })).sort(byScore);
  if (s.scoreThreshold !== null) ranked = ranked.filter((r) => r.score >= s.scoreThreshold!);
  return { results: ranked.slice(s.offset, s.offset + limit), total: s.countTotal ? ranked.length : 0, correctedQuery };
}

/** Runs a chunk search. */
export async function runChunkSearch(services: Services, dataset: DatasetRecord, s: ChunkSearch, signal?: AbortSignal): Promise<ChunkSearchResult> {
  const mmr = s.sort?.mmrLambda !== null && s.sort?.mmrLambda !== undefined;
  const limit = mmr && s.limit < MMR_DOUBLE_BELOW ? s.limit * 2 : s.limit;
  let out: ChunkSearchResult;
  const sortBy = s.sort?.sortBy ?? null;
  if (limit === 0) {
    const { total, corrected_query } = await services.core.search(coreArgs(dataset, s, s.searchType, s.offset, 0, s.scoreThreshold, s.countTotal));
    out = { results: [], total, correctedQuery: corrected_query || null };
  } else if (sortBy?.kind === 'field') {
    out = await sortedByField(services, dataset, s, sortBy, limit);
  } else if (sortBy?.kind === 'rerank') {
    out = await reScored(services, dataset, s, sortBy, limit, signal);
  } else {
    const { chunks, total, corrected_query } = await services.core.search(coreArgs(dataset, s, s.searchType, s.offset, limit, s.scoreThreshold, s.countTotal));
    out = { results: await chunksInHitOrder(services, dataset.id, chunks), total, correctedQuery: corrected_query || null };
  }
  if (!s.sort) return out;
  const vectors = mmr
    ? await services.store.vectors.getMany(out.results.map((r) => r.c.id), embeddingSpec(dataset.serverConfiguration).modelKey)
    : new Map<string, Float32Array>();
  // A field sort is the order the caller asked for: post-ranking would undo it.
  const ranked = sortBy?.kind === 'field' ? out.results : postRank(out.results, s.sort, vectors);
  return { results: ranked.slice(0, s.limit), total: out.total, correctedQuery: out.correctedQuery ?? null };
}
