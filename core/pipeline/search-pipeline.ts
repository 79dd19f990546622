/**
 * The one entry of every search feature: a {@link PipelineRequest} (what the gRPC Search call
 * carries, in the engine's terms) becomes ranked chunks, or ranked groups of chunks. The steps:
 * the dataset's switches and limits, within-group restriction, recommendation examples, then the
 * ranking (plain with sort options, autocomplete, or recommendation), grouped when asked.
 */
import { maxLimitOf } from '../domain/dataset-config.js';
import { badRequest, notFound } from '../domain/errors.js';
import { inGroup, withConditions } from '../domain/filter.js';
import type { RecommendStrategy } from '../domain/search-options.js';
import type { DatasetRecord } from '../domain/tenancy.js';
import type { SearchHits, SearchQuery } from '../router/engine.js';
import type { Store } from '../../store/repository.js';
import { runAutocomplete } from './autocomplete.js';
import { requireSearchType, requireSearchTypes } from './enabled-search-types.js';
import { resolveExamples, type ExampleNames } from './examples.js';
import { groupedPage, MAX_GROUPING_PREFIX } from './group-hits.js';
import type { Hit } from './hit-chunks.js';
import { runRankedSearch, type PipelineContext, type RankedResult, type RankedSearch } from './ranked-search.js';
import { recommendChunks, type Examples } from './recommend.js';
import { withFields } from '../domain/with-fields.js';

/** Types a recommendation can rank by. */
const RECOMMEND_TYPES = new Set(['semantic', 'bm25', 'fulltext']);

/** A search with every feature the pipeline serves (null members are off). */
export interface PipelineRequest extends RankedSearch {
  /** Autocomplete ranking; `extendResults` appends plain results after the completions. */
  readonly autocomplete: { readonly extendResults: boolean } | null;
  /** Results are groups (offset and limit count groups), each with its best `groupSize` chunks. */
  readonly groupBy: { readonly groupSize: number; readonly countGroups: boolean } | null;
  /** A recommendation from examples (searchType is the recommend type; query is not used). */
  readonly recommend: { readonly positive: ExampleNames; readonly negative: ExampleNames; readonly strategy: RecommendStrategy } | null;
  /** Only members of this group match. */
  readonly withinGroup: { readonly id: string } | { readonly trackingId: string } | null;
}

/** A group of the answer, its chunks best first. */
export interface PipelineGroup {
  readonly groupId: string;
  readonly hits: Hit[];
}

/** The answer: ranked chunks, or (with groupBy) ranked groups. */
export interface PipelineReply extends RankedResult {
  readonly groups: PipelineGroup[];
  readonly totalGroups: number;
}

/** What the pipeline runs on: one retrieval by the engine, and the store. */
export interface PipelineDeps {
  readonly retrieve: (q: SearchQuery, signal?: AbortSignal, record?: DatasetRecord) => Promise<SearchHits>;
  readonly store: Store;
}

/** The id of the group a within-group search names; 404 when it does not exist. */
async function groupIdOf(store: Store, datasetId: string, ref: NonNullable<PipelineRequest['withinGroup']>): Promise<string> {
  const g = 'id' in ref ? await store.groups.get(datasetId, ref.id) : await store.groups.getByTrackingId(datasetId, ref.trackingId);
  if (!g) throw notFound('id' in ref ? `group with id ${ref.id} does not exist in this dataset` : `group with tracking_id "${ref.trackingId}" does not exist in this dataset`);
  return g.id;
}

/** Runs a search request through every step it asks for. */
export async function runPipeline(deps: PipelineDeps, req: PipelineRequest, signal?: AbortSignal): Promise<PipelineReply> {
  const dataset = await deps.store.datasets.get(req.datasetId);
  if (!dataset) throw notFound(`dataset ${req.datasetId} does not exist`);
  const config = dataset.serverConfiguration;
  // Every retrieval of this request uses the record read here (one store read, one view of it).
  const ctx: PipelineContext = { retrieve: (q, sig) => deps.retrieve(q, sig, dataset), store: deps.store, dataset, maxLimit: maxLimitOf(config), signal };
  let examples: Examples | null = null;
  if (req.recommend) {
    if (!RECOMMEND_TYPES.has(req.searchType)) throw badRequest(`recommend_type must be one of semantic, fulltext, bm25, got "${req.searchType}"`);
    if (req.offset !== 0) throw badRequest('a recommendation has no offset: ask for more results with limit');
    requireSearchType(config, req.searchType, 'recommend_type');
    examples = await resolveExamples(deps.store, dataset.id, req.recommend.positive, req.recommend.negative);
  } else {
    requireSearchTypes(config, req);
  }
  const search: RankedSearch = req.withinGroup ? withFields(req, { filter: withConditions(req.filter, [inGroup(await groupIdOf(deps.store, dataset.id, req.withinGroup))]) }) : req;

  const rank = async (s: RankedSearch): Promise<RankedResult> => {
    if (examples && req.recommend) {
      const results = await recommendChunks(ctx, examples, { strategy: req.recommend.strategy, recommendType: s.searchType, filter: s.filter, limit: s.limit });
      return { results, total: 0, correctedQuery: null };
    }
    return req.autocomplete ? runAutocomplete(ctx, s, req.autocomplete.extendResults) : runRankedSearch(ctx, s);
  };

  // A ranked result has no groups: the spread goes last (see domain/with-fields.ts).
  if (!req.groupBy) return { groups: [], totalGroups: 0, ...(await rank(search)) };
  let correctedQuery: string | null = null;
  const { groups, totalGroups } = await groupedPage(
    deps.store,
    dataset.id,
    async (limit) => {
      const found = await rank(withFields(search, { offset: 0, limit, countTotal: false }));
      correctedQuery = found.correctedQuery;
      return found.results;
    },
    { skip: req.offset, take: req.limit, groupSize: req.groupBy.groupSize, countGroups: req.groupBy.countGroups, cap: Math.min(ctx.maxLimit, MAX_GROUPING_PREFIX) },
  );
  return { results: [], total: 0, correctedQuery, groups: groups.map((g) => ({ groupId: g.group.id, hits: g.hits })), totalGroups };
}
