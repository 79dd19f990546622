/** Search, count and scroll: validated here, answered by the core, chunks read from the store. */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { DATASET_CONFIG_DEFAULTS } from '../../core/domain/dataset-config.js';
import { notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess, type ApiVersion } from '../access.js';
import type { Services } from '../context.js';
import { withDefaultParams } from '../default-params.js';
import { chunkV2, chunkFor, contentOnlyChunk, slimChunkFor } from '../present/chunk.js';
import { parseCount, parseScroll, parseSearch, type SearchRequest } from '../schemas/search.js';
import type { QuarryRouter } from './router.js';

/** A dataset's MAX_LIMIT: the most results any search may page through. */
function maxLimit(config: Record<string, unknown>): number {
  const v = config.MAX_LIMIT;
  return typeof v === 'number' && v > 0 ? v : DATASET_CONFIG_DEFAULTS.MAX_LIMIT;
}

function shapeChunk(req: SearchRequest, version: ApiVersion, c: ChunkRecord): Record<string, unknown> {
  if (req.contentOnly) return contentOnlyChunk(c);
  return req.slimChunks ? slimChunkFor(version, c) : chunkFor(version, c);
}

/** Registers search routes. */
export function searchRoutes(router: QuarryRouter, services: Services): void {
  const { store, core } = services;

  router.post('/api/chunk/search', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const req = parseSearch(withDefaultParams(ctx.state.body, access.caller, 'search'));
    const limit = maxLimit(access.dataset.serverConfiguration);
    const offset = (req.page - 1) * req.pageSize;
    const window = Math.max(0, Math.min(req.pageSize, limit - offset));
    const { chunks: hits, total } = await core.search({
      dataset_id: access.dataset.id,
      search_type: req.searchType,
      query: req.query,
      filter: req.filter,
      offset,
      limit: window,
      score_threshold: req.scoreThreshold === null ? null : { value: req.scoreThreshold },
      count_total: req.getTotalPages,
      queries: req.queries,
    });
    const records = new Map((await store.chunks.getMany(access.dataset.id, hits.map((h) => h.chunk_id))).map((c) => [c.id, c]));
    let results = hits.flatMap((h) => {
      const c = records.get(h.chunk_id);
      return c ? [{ c, score: h.score }] : [];
    });
    if (req.useWeights) {
      // Weights apply after the threshold, as the spec says; a weight of 0 (the default) leaves the score alone.
      results = results.map((r) => ({ c: r.c, score: r.c.weight !== 0 ? r.score * r.c.weight : r.score })).sort((a, b) => b.score - a.score);
    }
    const totalPages = req.getTotalPages && req.pageSize > 0 ? Math.ceil(Math.min(total, limit) / req.pageSize) : 0;
    const id = newId();
    if (access.apiVersion === 'V1') {
      ctx.body = {
        score_chunks: results.map((r) => ({ metadata: [shapeChunk(req, 'V1', r.c)], highlights: null, score: r.score })),
        corrected_query: null,
        total_chunk_pages: totalPages,
      };
    } else {
      ctx.body = {
        id,
        chunks: results.map((r) => ({ chunk: shapeChunk(req, 'V2', r.c), highlights: null, score: r.score })),
        corrected_query: null,
        total_pages: totalPages,
      };
    }
  });

  router.post('/api/chunk/count', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const req = parseCount(ctx.state.body, maxLimit(access.dataset.serverConfiguration));
    const count = await core.count({
      dataset_id: access.dataset.id,
      search_type: req.searchType,
      query: req.query,
      filter: req.filter,
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
    const ids =
      req.pageSize === 0
        ? []
        : await core.scroll({
            dataset_id: access.dataset.id,
            filter: req.filter,
            offset_chunk_id: req.offsetChunkId ?? '',
            limit: req.pageSize,
            sort_field: req.sortField ?? '',
            sort_direction: req.descending ? 'desc' : 'asc',
          });
    const chunks = await store.chunks.getMany(access.dataset.id, ids);
    ctx.body = { chunks: chunks.map(chunkV2) };
  });
}
