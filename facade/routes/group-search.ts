/**
 * Group searches: a chunk search restricted to one group's members, and a search (or an
 * autocomplete) whose results are groups ranked by their best chunk. Each is one call of the
 * core's search pipeline (query syntax, sort, scoring and highlight options as the chunk search)
 * and takes the chunk search's body plus its own members.
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
import { rankedChunks, rankedGroups, searchArgs } from '../search/core-request.js';
import { presentResult, type ResultShape } from '../search/present-results.js';
import { highlightText, maxLimitOf, planSearch } from '../search/search-plan.js';
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
    const plan = planSearch(req, body as Record<string, unknown>, maxLimit);
    const reply = await ctx.state.core.search(searchArgs(access.dataset.id, plan.search, { withinGroupId: g.id }));
    const results = await rankedChunks(store, access.dataset.id, reply);
    const correctedQuery = reply.corrected_query || null;
    const totalPages = req.getTotalPages && req.pageSize > 0 ? Math.ceil(Math.min(reply.total, maxLimit) / req.pageSize) : 0;
    const shape: ResultShape = {
      version: access.apiVersion,
      slimChunks: req.slimChunks,
      contentOnly: req.contentOnly,
      highlight: plan.highlight,
      query: highlightText(plan, correctedQuery),
    };
    const chunks = results.map((r) => presentResult(shape, r));
    const id = newId();
    services.analytics.recordSearch(
      searchRecordFrom({ id, datasetId: access.dataset.id, kind: 'search_within_groups', body, request: req, results: results.map((r) => ({ id: r.c.id, score: r.score })), startedAt: started }),
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
    const reply = await ctx.state.core.search(
      searchArgs(access.dataset.id, { ...plan.search, offset: (req.page - 1) * req.pageSize, limit: req.pageSize, countTotal: false }, {
        groupBy: { groupSize, countGroups: req.getTotalPages },
        ...(kind === 'autocomplete' ? { autocomplete: { extendResults: req.extendResults } } : {}),
      }),
    );
    const groups = await rankedGroups(store, access.dataset.id, reply);
    const totalGroups = reply.total_groups;
    const correctedQuery = reply.corrected_query || null;
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
