/**
 * Group searches: a chunk search restricted to one group's members, and a search (or an
 * autocomplete) whose results are groups ranked by their best chunk. All run the chunk search's
 * pipeline (query syntax, sort, scoring and highlight options) and take the chunk search's body
 * plus their own members.
 */
import { performance } from 'node:perf_hooks';
import { searchRecordFrom } from '../analytics/records.js';
import { badRequest, notFound } from '../../core/domain/errors.js';
import type { GroupRecord } from '../../core/domain/group.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { withDefaultParams } from '../default-params.js';
import { groupWithFile } from '../present/group.js';
import { groupResultFor } from '../present/group-results.js';
import { parseGroupRef, parseGroupSize } from '../schemas/group-search.js';
import { parseSearch, type SearchRequest } from '../schemas/search.js';
import { runAutocomplete } from '../search/autocomplete.js';
import { runChunkSearch } from '../search/chunk-search.js';
import { requireSearchTypes } from '../search/enabled-search-types.js';
import { groupedPage, MAX_GROUPING_PREFIX } from '../search/group-hits.js';
import { presentResult, type ResultShape } from '../search/present-results.js';
import { highlightText, inGroup, maxLimitOf, planSearch } from '../search/search-plan.js';
import type { QuarryContext, QuarryRouter } from './router.js';

/** 400 when a page is larger than the dataset's MAX_LIMIT allows. */
function checkPageSize(req: SearchRequest, maxLimit: number): void {
  if (req.pageSize > maxLimit) throw badRequest(`page_size ${req.pageSize} is above the dataset's MAX_LIMIT of ${maxLimit}`);
}

/** Registers the group search routes. */
export function groupSearchRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  const findGroup = async (datasetId: string, ref: { id: string } | { trackingId: string }): Promise<GroupRecord> => {
    const g = 'id' in ref ? await store.groups.get(datasetId, ref.id) : await store.groups.getByTrackingId(datasetId, ref.trackingId);
    if (!g) throw notFound('id' in ref ? `group with id ${ref.id} does not exist in this dataset` : `group with tracking_id "${ref.trackingId}" does not exist in this dataset`);
    return g;
  };

  router.post('/api/chunk_group/search', async (ctx) => {
    const started = performance.now();
    const access = await datasetAccess(ctx, services, Role.Read);
    const body = withDefaultParams(ctx.state.body, access.caller, 'search');
    const ref = parseGroupRef(body);
    const req = parseSearch(body);
    const maxLimit = maxLimitOf(access.dataset.serverConfiguration);
    checkPageSize(req, maxLimit);
    const g = await findGroup(access.dataset.id, ref);
    const plan = planSearch(req, body as Record<string, unknown>, maxLimit, [inGroup(g.id)]);
    requireSearchTypes(access.dataset.serverConfiguration, plan.search);
    const found = await runChunkSearch(services, access.dataset, plan.search);
    const correctedQuery = found.correctedQuery ?? null;
    const totalPages = req.getTotalPages && req.pageSize > 0 ? Math.ceil(Math.min(found.total, maxLimit) / req.pageSize) : 0;
    const shape: ResultShape = {
      version: access.apiVersion,
      slimChunks: req.slimChunks,
      contentOnly: req.contentOnly,
      highlight: plan.highlight,
      query: highlightText(plan, correctedQuery),
    };
    const chunks = found.results.map((r) => presentResult(shape, r));
    const id = newId();
    services.analytics.recordSearch(
      searchRecordFrom({ id, datasetId: access.dataset.id, kind: 'search_within_groups', body, request: req, results: found.results.map((r) => ({ id: r.c.id, score: r.score })), startedAt: started }),
    );
    ctx.body =
      access.apiVersion === 'V1'
        ? { bookmarks: chunks, group: groupWithFile(g), corrected_query: correctedQuery, total_pages: totalPages }
        : { id, chunks, corrected_query: correctedQuery, total_pages: totalPages };
  });

  /**
   * Search over groups and its autocomplete: the chunk ranking (plain, or autocomplete's) grouped
   * by group. Autocomplete always answers the first page and never counts pages, as the reference.
   */
  const groupOriented = (kind: 'search' | 'autocomplete') => async (ctx: QuarryContext) => {
    const started = performance.now();
    const access = await datasetAccess(ctx, services, Role.Read);
    const body = withDefaultParams(ctx.state.body, access.caller, 'search');
    const parsed = parseSearch(body);
    const req = kind === 'autocomplete' ? { ...parsed, page: 1, getTotalPages: false } : parsed;
    const maxLimit = maxLimitOf(access.dataset.serverConfiguration);
    const groupSize = parseGroupSize(body, maxLimit);
    checkPageSize(req, maxLimit);
    const plan = planSearch(req, body as Record<string, unknown>, maxLimit);
    requireSearchTypes(access.dataset.serverConfiguration, plan.search);
    let correctedQuery: string | null = null;
    const { groups, totalGroups } = await groupedPage(
      services,
      access.dataset.id,
      async (limit) => {
        const search = { ...plan.search, offset: 0, limit, countTotal: false };
        const found =
          kind === 'autocomplete' ? await runAutocomplete(services, access.dataset, search, req.extendResults) : await runChunkSearch(services, access.dataset, search);
        correctedQuery = found.correctedQuery ?? null;
        return found.results;
      },
      {
        skip: (req.page - 1) * req.pageSize,
        take: req.pageSize,
        groupSize,
        countGroups: req.getTotalPages,
        cap: Math.min(maxLimit, MAX_GROUPING_PREFIX),
      },
    );
    const totalPages = req.getTotalPages && req.pageSize > 0 ? Math.ceil(totalGroups / req.pageSize) : 0;
    const shape: ResultShape = {
      version: access.apiVersion,
      slimChunks: req.slimChunks,
      contentOnly: req.contentOnly,
      highlight: plan.highlight,
      query: highlightText(plan, correctedQuery),
    };
    const results = groups.map((g) => groupResultFor(access.apiVersion, { group: g.group, chunks: g.hits.map((r) => presentResult(shape, r)) }));
    const id = newId();
    const recorded = groups.flatMap((g) => g.hits.map((r) => ({ id: r.c.id, score: r.score })));
    // The reference records a group autocomplete as an autocomplete.
    const recordedKind = kind === 'autocomplete' ? 'autocomplete' : 'search_over_groups';
    services.analytics.recordSearch(searchRecordFrom({ id, datasetId: access.dataset.id, kind: recordedKind, body, request: req, results: recorded, startedAt: started }));
    ctx.body =
      access.apiVersion === 'V1'
        ? { group_chunks: results, corrected_query: correctedQuery, total_chunk_pages: totalPages }
        : { id, results, corrected_query: correctedQuery, total_pages: totalPages };
  };

  router.post('/api/chunk_group/group_oriented_search', groupOriented('search'));
  router.post('/api/chunk_group/group_oriented_autocomplete', groupOriented('autocomplete'));
}
