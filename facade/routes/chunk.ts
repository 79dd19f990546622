/** Chunks: create (one or a batch), update, get by id / tracking id / many, delete (one, or by filter), split HTML. */
import { notFound } from '../../core/domain/errors.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess, requireCaller } from '../access.js';
import { embedSoon, indexNow } from '../indexing.js';
import type { Services } from '../context.js';
import { chunkFor, chunkV2 } from '../present/chunk.js';
import { htmlToText } from '../../core/domain/html-text.js';
import { pathUuid } from '../schemas/common.js';
import {
  parseCreateChunks,
  parseGetChunks,
  parseGetChunksByTracking,
  parseUpdateChunk,
  parseUpdateChunkByTrackingId,
} from '../schemas/chunk.js';
import { parseBulkDelete } from '../schemas/bulk-delete.js';
import { parseChunkSplit } from '../schemas/chunk-split.js';
import { splitHtml } from '../../core/domain/split-html.js';
import type { QuarryRouter } from './router.js';

/** Registers chunk routes. */
export function chunkRoutes(router: QuarryRouter, services: Services): void {
  const { store, config } = services;

  router.post('/api/chunk', async (ctx) => {
    // Stages in Server-Timing (QUARRY_SERVER_TIMING): where a write's time goes on each store.
    const timing = ctx.state.timing;
    timing?.mark('middleware');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    timing?.mark('access');
    const request = parseCreateChunks(ctx.state.body, config.batchChunkLimit, config.maxChunkTextBytes);
    timing?.mark('parse');
    const created = await store.chunks.createMany(dataset.id, request.inputs, request.upsert);
    timing?.mark('store');
    await indexNow(services, dataset.id, ctx.state.log);
    timing?.mark('index');
    await embedSoon(services, dataset, ctx.state.log);
    timing?.mark('embed');
    // Stored synchronously (not queued), so the metadata returned is the record as stored.
    const shaped = created.map((c) => ({ ...chunkV2(c), content: htmlToText(c.chunkHtml ?? '') }));
    ctx.body = { chunk_metadata: request.isBatch ? shaped : shaped[0], pos_in_queue: 0 };
  });

  router.put('/api/chunk', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const { selector, patch } = parseUpdateChunk(ctx.state.body, config.maxChunkTextBytes);
    await store.chunks.update(dataset.id, selector, patch);
    await indexNow(services, dataset.id, ctx.state.log);
    await embedSoon(services, dataset, ctx.state.log);
    ctx.status = 204;
  });

  router.delete('/api/chunk', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const filter = parseBulkDelete(ctx.state.body);
    const requestedAt = Date.now();
    // The core checks the filter's meaning now (known fields, predicates that fit them), so a bad
    // filter is this request's 400 and not a job that fails later.
    await ctx.state.core.scroll({ dataset_id: dataset.id, filter, limit: 1 });
    await services.jobs.bulkDeleteChunks({ datasetId: dataset.id, filter, requestedAt });
    // Answered at once, as the reference: the job deletes the matching chunks created until now.
    ctx.status = 204;
  });

  router.post('/api/chunk/split', async (ctx) => {
    requireCaller(ctx);
    const req = parseChunkSplit(ctx.state.body);
    ctx.body = { chunks: splitHtml(req.chunkHtml, req.headingRemoveStrings, req.bodyRemoveStrings).map((c) => ({ headings: [c.headings], body: c.body })) };
  });

  router.put('/api/chunk/tracking_id/update', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const { selector, patch } = parseUpdateChunkByTrackingId(ctx.state.body, config.maxChunkTextBytes);
    await store.chunks.update(dataset.id, selector, patch);
    await indexNow(services, dataset.id, ctx.state.log);
    await embedSoon(services, dataset, ctx.state.log);
    ctx.status = 204;
  });

  router.post('/api/chunks', async (ctx) => {
    ctx.state.timing?.mark('middleware');
    const { dataset, apiVersion } = await datasetAccess(ctx, services, Role.Read);
    ctx.state.timing?.mark('access');
    const ids = parseGetChunks(ctx.state.body);
    const found = await store.chunks.getMany(dataset.id, ids);
    ctx.state.timing?.mark('store');
    if (ids.length > 0 && found.length === 0) throw notFound('none of the requested chunks exist in this dataset');
    ctx.body = found.map((c) => chunkFor(apiVersion, c));
  });

  router.post('/api/chunks/tracking', async (ctx) => {
    ctx.state.timing?.mark('middleware');
    const { dataset, apiVersion } = await datasetAccess(ctx, services, Role.Read);
    ctx.state.timing?.mark('access');
    const ids = parseGetChunksByTracking(ctx.state.body);
    const found = await store.chunks.getManyByTrackingIds(dataset.id, ids);
    ctx.state.timing?.mark('store');
    if (ids.length > 0 && found.length === 0) throw notFound('none of the requested chunks exist in this dataset');
    ctx.body = found.map((c) => chunkFor(apiVersion, c));
  });

  router.get('/api/chunk/tracking_id/:tracking_id', async (ctx) => {
    const { dataset, apiVersion } = await datasetAccess(ctx, services, Role.Read);
    const trackingId = ctx.params.tracking_id!;
    const chunk = await store.chunks.get(dataset.id, { trackingId });
    if (!chunk) throw notFound(`chunk with tracking_id "${trackingId}" does not exist in this dataset`);
    ctx.body = chunkFor(apiVersion, chunk);
  });

  router.delete('/api/chunk/tracking_id/:tracking_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const trackingId = ctx.params.tracking_id!;
    if (!(await store.chunks.delete(dataset.id, { trackingId }))) {
      throw notFound(`chunk with tracking_id "${trackingId}" does not exist in this dataset`);
    }
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.get('/api/chunk/:chunk_id', async (ctx) => {
    const id = pathUuid(ctx.params.chunk_id, 'chunk_id');
    const { dataset, apiVersion } = await datasetAccess(ctx, services, Role.Read);
    const chunk = await store.chunks.get(dataset.id, { id });
    if (!chunk) throw notFound(`chunk with id ${id} does not exist in this dataset`);
    ctx.body = chunkFor(apiVersion, chunk);
  });

  router.delete('/api/chunk/:chunk_id', async (ctx) => {
    const id = pathUuid(ctx.params.chunk_id, 'chunk_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    if (!(await store.chunks.delete(dataset.id, { id }))) throw notFound(`chunk with id ${id} does not exist in this dataset`);
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });
}
