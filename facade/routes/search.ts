/** Search, count and scroll: validated here, answered by the core in one call, chunks read from the store. */
import { performance } from 'node:perf_hooks';
import { notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { withShardWork } from '../../core/domain/shard-work.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { withDefaultParams } from '../default-params.js';
import { searchRecordFrom } from '../analytics/records.js';
import { chunkV2 } from '../present/chunk.js';
import { parseCount, parseScroll, parseSearch } from '../schemas/search.js';
import { requireSearchType } from '../../core/pipeline/enabled-search-types.js';
import { rankedChunks, searchArgs } from '../search/core-request.js';
import { highlightText, maxLimitOf, planSearch } from '../search/search-plan.js';
import { presentResult } from '../search/present-results.js';
import { processQuery, withTermConditions } from '../search/query-syntax.js';
import type { QuarryContext, QuarryRouter } from './router.js';

/** Registers search routes. */
export function searchRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  /** Search and autocomplete: one pipeline, autocomplete completes the last word and may extend. */
  const rankedSearch = (kind: 'search' | 'autocomplete') => async (ctx: QuarryContext) => {
    const started = performance.now();
    const timing = ctx.state.timing;
    timing?.mark('middleware');
    const access = await datasetAccess(ctx, services, Role.Read);
    timing?.mark('access');
    const body = withDefaultParams(ctx.state.body, access.caller, 'search');
    const req = parseSearch(body);
    const limit = maxLimitOf(access.dataset.serverConfiguration);
    const plan = planSearch(req, body as Record<string, unknown>, limit);
    timing?.mark('parse');
    const args = searchArgs(access.dataset.id, plan.search, kind === 'autocomplete' ? { autocomplete: { extendResults: req.extendResults } } : {});
    const reply = await (timing ? withShardWork(timing.shardWork, () => ctx.state.core.search(args)) : ctx.state.core.search(args));
    timing?.mark('core');
    const results = await rankedChunks(store, access.dataset.id, reply);
    timing?.mark('store');
    const total = reply.total;
    const correctedQuery = reply.corrected_query || null;
    const totalPages = req.getTotalPages && req.pageSize > 0 ? Math.ceil(Math.min(total, limit) / req.pageSize) : 0;
    const id = newId();
    services.analytics.recordSearch(
      searchRecordFrom({ id, datasetId: access.dataset.id, kind, body, request: req, results: results.map((r) => ({ id: r.c.id, score: r.score })), startedAt: started }),
    );
    timing?.mark('analytics');
    const shape = { version: access.apiVersion, slimChunks: req.slimChunks, contentOnly: req.contentOnly, highlight: plan.highlight, query: highlightText(plan, correctedQuery) };
    const chunks = results.map((r) => presentResult(shape, r));
    timing?.mark('present');
    ctx.body =
      access.apiVersion === 'V1'
        ? { score_chunks: chunks, corrected_query: correctedQuery, total_chunk_pages: totalPages }
        : { id, chunks, corrected_query: correctedQuery, total_pages: totalPages };
  };

  router.post('/api/chunk/search', rankedSearch('search'));
  router.post('/api/chunk/autocomplete', rankedSearch('autocomplete'));

  router.post('/api/chunk/count', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const req = parseCount(ctx.state.body, maxLimitOf(access.dataset.serverConfiguration));
    requireSearchType(access.dataset.serverConfiguration, req.searchType);
    const processed = processQuery(req.query, { removeStopWords: false, quoteNegatedTerms: req.quoteNegatedTerms });
    const count = await ctx.state.core.count({
      dataset_id: access.dataset.id,
      search_type: req.searchType,
      query: processed.text,
      filter: withTermConditions(req.filter, processed.required, processed.excluded),
      score_threshold: req.scoreThreshold === null ? null : { value: req.scoreThreshold },
      limit: req.limit,
    });
    ctx.body = { count };
  });

  router.post('/api/chunks/scroll', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const req = parseScroll(withDefaultParams(ctx.state.body, access.caller, 'scroll'));
    if (req.offsetChunkId && !(await store.chunks.get(access.dataset.id, { id: req.offsetChunkId }))) {
      throw notFound(`offset_chunk_id ${req.offsetChunkId} does not exist in this dataset`);
    }
    // In id order one more id is read: it is where the next page starts (the page starts at
    // offset_chunk_id, inclusive, as the spec says, so the last id of a page is not the next offset).
    const byId = req.sortField === null;
    const ids =
      req.pageSize === 0
        ? []
        : await ctx.state.core.scroll({
            dataset_id: access.dataset.id,
            filter: req.filter,
            offset_chunk_id: req.offsetChunkId ?? '',
            limit: byId ? req.pageSize + 1 : req.pageSize,
            sort_field: req.sortField ?? '',
            sort_direction: req.descending ? 'desc' : 'asc',
          });
    const next = byId && ids.length > req.pageSize ? ids[req.pageSize]! : null;
    const chunks = await store.chunks.getMany(access.dataset.id, ids.slice(0, req.pageSize));
    ctx.body = { chunks: chunks.map(chunkV2), next_offset_chunk_id: next };
  });
}
