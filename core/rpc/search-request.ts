/**
 * The edge between the wire and the pipeline: a proto SearchRequest (as proto-loader decodes
 * it, see core/rpc/generated) checked and mapped to a {@link PipelineRequest}, and the pipeline's
 * answer mapped to a SearchReply. The HTTP layer checks REST bodies more strictly; these checks
 * are for every other caller of the core.
 */
import { boundValue, type Filter } from '../domain/filter.js';
import { badRequest } from '../domain/errors.js';
import { isSortableField, RECOMMEND_STRATEGIES, RERANK_TYPES, type RecommendStrategy, type SortOptions } from '../domain/search-options.js';
import type { TypoOptions } from '../typo/options.js';
import type { ExampleNames } from '../pipeline/examples.js';
import type { Hit } from '../pipeline/hit-chunks.js';
import type { PipelineReply, PipelineRequest } from '../pipeline/search-pipeline.js';
import type { Recommend__Output } from './generated/quarry/search/v1/Recommend.js';
import type { ScoredChunk } from './generated/quarry/search/v1/ScoredChunk.js';
import type { SearchReply } from './generated/quarry/search/v1/SearchReply.js';
import type { SearchRequest__Output } from './generated/quarry/search/v1/SearchRequest.js';
import type { SortOptions__Output } from './generated/quarry/search/v1/SortOptions.js';
import type { TypoOptions__Output } from './generated/quarry/search/v1/TypoOptions.js';

/** Most results one search may page through (offset + limit). */
export const MAX_WINDOW = 100_000;

const within01 = (v: number, name: string): number => {
  if (!(v >= 0 && v <= 1)) throw badRequest(`${name} must be within 0..1, got ${v}`);
  return v;
};

/** The sort options of the wire, checked. */
function sortOf(s: SortOptions__Output): SortOptions {
  let sortBy: SortOptions['sortBy'] = null;
  if (s.field_sort) {
    const f = s.field_sort;
    if (!isSortableField(f.field)) throw badRequest(`sort.field_sort.field "${f.field}" is not sortable: use num_value, time_stamp, weight, created_at, updated_at, link, tracking_id or metadata.<key>`);
    if (f.direction !== '' && f.direction !== 'asc' && f.direction !== 'desc') throw badRequest(`sort.field_sort.direction must be "asc" or "desc", got "${f.direction}"`);
    sortBy = { kind: 'field', field: f.field, descending: f.direction !== 'asc', prefetch: f.prefetch > 0 ? f.prefetch : null };
  } else if (s.rerank) {
    const r = s.rerank;
    const type = RERANK_TYPES.find((t) => t === r.rerank_type);
    if (!type) throw badRequest(`sort.rerank.rerank_type must be one of ${RERANK_TYPES.join(', ')}, got "${r.rerank_type}"`);
    sortBy = { kind: 'rerank', rerankType: type, prefetch: r.prefetch > 0 ? r.prefetch : null, query: r.query === '' ? null : r.query };
  }
  if (!(s.recency_bias >= 0)) throw badRequest(`sort.recency_bias must be at least 0, got ${s.recency_bias}`);
  const lb = s.location_bias;
  const weights = Object.entries(s.tag_weights ?? {});
  if (weights.some(([, w]) => !Number.isFinite(w))) throw badRequest('sort.tag_weights must be finite numbers');
  const lambda = boundValue(s.mmr_lambda);
  return {
    sortBy,
    useWeights: !s.ignore_weights,
    recencyBias: s.recency_bias,
    locationBias: lb ? { lat: lb.location?.lat ?? 0, lon: lb.location?.lon ?? 0, bias: within01(lb.bias, 'sort.location_bias.bias') } : null,
    tagWeights: weights.length > 0 ? Object.fromEntries(weights) : null,
    mmrLambda: lambda === undefined ? null : within01(lambda, 'sort.mmr_lambda'),
  };
}

/** Typo options of the wire. */
function typoOf(t: TypoOptions__Output): TypoOptions {
  return {
    oneTypoWordRange: { min: t.one_typo_min, max: boundValue(t.one_typo_max) ?? null },
    twoTypoWordRange: { min: t.two_typo_min, max: boundValue(t.two_typo_max) ?? null },
    disableOnWord: t.disable_on_word ?? [],
    prioritizeDomainSpecificWords: t.prioritize_domain_specific_words,
  };
}

/** A recommendation's examples and strategy. */
function recommendOf(r: Recommend__Output): NonNullable<PipelineRequest['recommend']> {
  const side = (chunkIds: string[], trackingIds: string[], groupIds: string[], groupTrackingIds: string[]): ExampleNames => ({
    chunkIds: [...new Set(chunkIds)],
    trackingIds: [...new Set(trackingIds)],
    groupIds: [...new Set(groupIds)],
    groupTrackingIds: [...new Set(groupTrackingIds)],
  });
  const strategy = r.strategy === '' ? 'average_vector' : RECOMMEND_STRATEGIES.find((s): s is RecommendStrategy => s === r.strategy);
  if (!strategy) throw badRequest(`recommend.strategy must be average_vector or best_score, got "${r.strategy}"`);
  return {
    positive: side(r.positive_chunk_ids, r.positive_tracking_ids, r.positive_group_ids, r.positive_group_tracking_ids),
    negative: side(r.negative_chunk_ids, r.negative_tracking_ids, r.negative_group_ids, r.negative_group_tracking_ids),
    strategy,
  };
}

/** A SearchRequest as the pipeline runs it; 400 for what no search can mean. */
export function pipelineRequestOf(req: SearchRequest__Output): PipelineRequest {
  if (!req.dataset_id) throw badRequest('dataset_id is required');
  if (req.offset + req.limit > MAX_WINDOW) throw badRequest(`page * page_size must not exceed ${MAX_WINDOW}`);
  const threshold = boundValue(req.score_threshold);
  const ref = req.within_group;
  if (ref && (ref.id === '') === (ref.tracking_id === '')) throw badRequest('within_group names a group by id or by tracking_id, exactly one');
  return {
    datasetId: req.dataset_id,
    searchType: req.search_type,
    query: req.query,
    // The wire's filter is the domain's (core/domain/filter.ts mirrors the proto messages).
    filter: req.filter as Filter | null,
    offset: req.offset,
    limit: req.limit,
    scoreThreshold: threshold === undefined || threshold === 0 ? null : threshold,
    countTotal: req.count_total,
    queries: req.queries ?? [],
    vector: req.vector && req.vector.length > 0 ? Float32Array.from(req.vector) : null,
    fulltextBoost: req.scoring?.fulltext_boost ?? null,
    semanticBoost: req.scoring?.semantic_boost ?? null,
    prefixLastWord: req.prefix_last_word === true,
    typo: req.typo ? typoOf(req.typo) : null,
    sort: req.sort ? sortOf(req.sort) : null,
    autocomplete: req.autocomplete ? { extendResults: req.autocomplete.extend_results } : null,
    groupBy: req.group_by ? { groupSize: req.group_by.group_size, countGroups: req.group_by.count_groups } : null,
    recommend: req.recommend ? recommendOf(req.recommend) : null,
    withinGroup: ref ? (ref.id !== '' ? { id: ref.id } : { trackingId: ref.tracking_id }) : null,
  };
}

const scored = (hits: readonly Hit[]): ScoredChunk[] => hits.map((r) => ({ chunk_id: r.id, score: r.score }));

/** The pipeline's answer on the wire. */
export function searchReplyOf(reply: PipelineReply): SearchReply {
  return {
    chunks: scored(reply.results),
    total: reply.total,
    corrected_query: reply.correctedQuery ?? '',
    groups: reply.groups.map((g) => ({ group_id: g.groupId, chunks: scored(g.hits) })),
    total_groups: reply.totalGroups,
  };
}
