/**
 * The one converter from the HTTP layer's parsed search to the core's SearchRequest (the proto
 * of proto/search/v1/core.proto), and from its reply back to chunk records in rank order.
 */
import type { SearchArgs, SearchResult } from '../../core/client/core-client.js';
import type { SortOptions } from '../../core/domain/search-options.js';
import type { TypoOptions } from '../../core/typo/options.js';
import type { GroupRecord } from '../../core/domain/group.js';
import { chunksInHitOrder } from '../../core/pipeline/hit-chunks.js';
import type { Ranked } from '../../core/pipeline/post-rank.js';
import type { Store } from '../../store/repository.js';
import type { PlannedSearch } from './search-plan.js';

/** What a search asks of the core beyond the parsed body. */
export interface SearchExtras {
  readonly autocomplete?: { readonly extendResults: boolean };
  readonly groupBy?: { readonly groupSize: number; readonly countGroups: boolean };
  readonly withinGroupId?: string;
}

const bound = (v: number | null): { value: number } | null => (v === null ? null : { value: v });

function typoArgs(t: TypoOptions): NonNullable<SearchArgs['typo']> {
  return {
    one_typo_min: t.oneTypoWordRange.min,
    one_typo_max: bound(t.oneTypoWordRange.max),
    two_typo_min: t.twoTypoWordRange.min,
    two_typo_max: bound(t.twoTypoWordRange.max),
    disable_on_word: [...t.disableOnWord],
    prioritize_domain_specific_words: t.prioritizeDomainSpecificWords,
  };
}

/** sort_options on the wire. */
export function sortArgs(s: SortOptions): NonNullable<SearchArgs['sort']> {
  const by = s.sortBy;
  return {
    ignore_weights: !s.useWeights,
    recency_bias: s.recencyBias,
    location_bias: s.locationBias ? { location: { lat: s.locationBias.lat, lon: s.locationBias.lon }, bias: s.locationBias.bias } : null,
    tag_weights: s.tagWeights ? { ...s.tagWeights } : {},
    mmr_lambda: bound(s.mmrLambda),
    ...(by?.kind === 'field' ? { field_sort: { field: by.field, direction: by.descending ? 'desc' : 'asc', prefetch: by.prefetch ?? 0 } } : {}),
    ...(by?.kind === 'rerank' ? { rerank: { rerank_type: by.rerankType, prefetch: by.prefetch ?? 0, query: by.query ?? '' } } : {}),
  };
}

/** The core's SearchRequest of a planned search. */
export function searchArgs(datasetId: string, s: PlannedSearch, extras: SearchExtras = {}): SearchArgs {
  return {
    dataset_id: datasetId,
    search_type: s.searchType,
    query: s.text,
    filter: s.filter,
    offset: s.offset,
    limit: s.limit,
    score_threshold: bound(s.scoreThreshold),
    count_total: s.countTotal,
    queries: [...s.queries],
    scoring: s.scoring ? { fulltext_boost: s.scoring.fulltextBoost, semantic_boost: s.scoring.semanticBoost } : null,
    typo: s.typo ? typoArgs(s.typo) : null,
    sort: s.sort ? sortArgs(s.sort) : null,
    autocomplete: extras.autocomplete ? { extend_results: extras.autocomplete.extendResults } : null,
    group_by: extras.groupBy ? { group_size: extras.groupBy.groupSize, count_groups: extras.groupBy.countGroups } : null,
    within_group: extras.withinGroupId ? { id: extras.withinGroupId } : null,
  };
}

/** A group of the reply with its record and chunk records. */
export interface RankedGroup {
  readonly group: GroupRecord;
  readonly hits: Ranked[];
}

/** The reply's chunks as chunk records in rank order (chunks deleted since are dropped). */
export function rankedChunks(store: Store, datasetId: string, reply: SearchResult): Promise<Ranked[]> {
  return chunksInHitOrder(store, datasetId, reply.chunks);
}

/** The reply's groups with their records and chunk records, in rank order (groups deleted since are dropped). */
export async function rankedGroups(store: Store, datasetId: string, reply: SearchResult): Promise<RankedGroup[]> {
  const chunks = new Map((await chunksInHitOrder(store, datasetId, reply.groups.flatMap((g) => g.chunks))).map((r) => [r.c.id, r.c]));
  const out: RankedGroup[] = [];
  for (const g of reply.groups) {
    const group = await store.groups.get(datasetId, g.group_id);
    if (!group) continue;
    out.push({ group, hits: g.chunks.flatMap((h) => (chunks.has(h.chunk_id) ? [{ c: chunks.get(h.chunk_id)!, score: h.score }] : [])) });
  }
  return out;
}
