/**
 * The one search a topic message (or a query suggestion) runs for its documents: the body's
 * search members are parsed and planned exactly as POST /api/chunk/search does it (the same
 * parser, the same plan, the same single core call), with the query and page size the message
 * decides, and the search is recorded for analytics as a `rag` search.
 */
import { performance } from 'node:perf_hooks';
import { DATASET_CONFIG_DEFAULTS } from '../../core/domain/dataset-config.js';
import { newId } from '../../core/domain/ids.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import type { RequestState, Services } from '../context.js';
import { searchRecordFrom } from '../analytics/records.js';
import { parseSearch } from '../schemas/search.js';
import { rankedChunks, rankedGroups, searchArgs } from '../search/core-request.js';
import { maxLimitOf, planSearch, type SearchPlan } from '../search/search-plan.js';
import type { ScoredChunk } from './conversation.js';

/**
 * The search type when the body names none: hybrid, as the reference, unless the dataset turned
 * one of its legs off; then the lexical type it still serves, else semantic.
 */
export function defaultSearchType(config: Record<string, unknown>): string {
  const semantic = config.SEMANTIC_ENABLED !== false;
  const fulltext = config.FULLTEXT_ENABLED !== false;
  if (semantic && fulltext) return 'hybrid';
  if (fulltext) return 'fulltext';
  if (config.BM25_ENABLED !== false) return 'bm25';
  return 'semantic';
}

/** Results per message search when the body gives no page_size: the dataset's N_RETRIEVALS_TO_INCLUDE. */
export function retrievalsOf(config: Record<string, unknown>): number {
  const n = config.N_RETRIEVALS_TO_INCLUDE;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : DATASET_CONFIG_DEFAULTS.N_RETRIEVALS_TO_INCLUDE;
}

/** A planned retrieval: validated, not yet run. */
export interface PlannedRetrieval {
  readonly plan: SearchPlan;
  readonly request: ReturnType<typeof parseSearch>;
  /** The body as the search saw it (for the analytics record). */
  readonly body: Record<string, unknown>;
}

/**
 * Parses and plans the search members of `body` with `query` (every search option is checked
 * here, so a bad one is a 400 before anything runs or is stored).
 */
export function planRetrieval(dataset: DatasetRecord, body: Record<string, unknown>, query: string, pageSize: number | null = null): PlannedRetrieval {
  const config = dataset.serverConfiguration;
  const searchBody: Record<string, unknown> = {
    ...body,
    query,
    search_type: body.search_type ?? defaultSearchType(config),
    page_size: pageSize ?? body.page_size ?? retrievalsOf(config),
    // Members of a search body a message does not have: one first page, full chunks.
    page: 1,
    get_total_pages: false,
    slim_chunks: false,
    content_only: false,
    extend_results: false,
  };
  const request = parseSearch(searchBody);
  return { plan: planSearch(request, searchBody, maxLimitOf(config)), request, body: searchBody };
}

/** What a retrieval found. */
export interface Retrieved {
  /** The search record's id (the RAG record's `searchId`). */
  readonly searchId: string;
  readonly results: ScoredChunk[];
}

/** Options of {@link runRetrieval}. */
export interface RetrievalOptions {
  /** Search over groups (`use_group_search`): each group brings its best chunk, as the reference's group_size 1. */
  readonly overGroups?: boolean;
  /** Record the search for analytics (a message's search is; a suggestion's is not a user's search). @defaultValue true */
  readonly record?: boolean;
}

/** Runs a planned retrieval in one core call. */
export async function runRetrieval(
  ctx: { readonly state: RequestState },
  services: Services,
  datasetId: string,
  planned: PlannedRetrieval,
  { overGroups = false, record = true }: RetrievalOptions = {},
): Promise<Retrieved> {
  const started = performance.now();
  const searchId = newId();
  let results: ScoredChunk[] = [];
  if (planned.plan.search.limit > 0) {
    const reply = await ctx.state.core.search(searchArgs(datasetId, planned.plan.search, overGroups ? { groupBy: { groupSize: 1, countGroups: false } } : {}));
    results = overGroups
      ? (await rankedGroups(services.store, datasetId, reply)).flatMap((g) => g.hits)
      : await rankedChunks(services.store, datasetId, reply);
  }
  if (!record) return { searchId, results };
  services.analytics.recordSearch(
    searchRecordFrom({
      id: searchId,
      datasetId,
      kind: 'rag',
      body: planned.body,
      request: planned.request,
      results: results.map((r) => ({ id: r.c.id, score: r.score })),
      startedAt: started,
    }),
  );
  return { searchId, results };
}
