/** Datasets: create, update, read, list, usage, tags, clear and delete. */
import type { Logger } from 'pino';
import { badRequest } from '../../core/domain/errors.js';
import { embeddingSpec, embedsDense, spladeSpec } from '../../core/domain/dataset-config.js';
import { Role } from '../../core/domain/tenancy.js';
import { DATASET_EVENT_TYPES, storedEventTypes } from '../../core/domain/dataset-events.js';
import { formatTimestamp } from '../../core/domain/time.js';
import { datasetAccess, findDataset, organizationAccess, organizationHeader } from '../access.js';
import type { Services } from '../context.js';
import { dropIndex, embedSoon, indexNow } from '../indexing.js';
import { groupWithFile } from '../present/group.js';
import * as present from '../present/tenancy.js';
import { pathPage, pathUuid, queryInt } from '../schemas/common.js';
import { checkMergedConfiguration, parseCreateDataset, parseDatasetEvents, parseGetAllTags, parseUpdateDataset } from '../schemas/tenancy.js';
import type { QuarryRouter } from './router.js';

const GROUPS_PAGE_SIZE = 10;

/** Registers dataset routes. */
export function datasetRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  const deleteDataset = async (id: string, log: Logger) => {
    await store.datasets.markDeleted(id);
    await dropIndex(services, id, log);
    await services.jobs.purgeDataset(id).catch((err: unknown) => log.warn({ err }, 'purge enqueue failed'));
  };

  router.post('/api/dataset', async (ctx) => {
    const body = parseCreateDataset(ctx.state.body);
    const { organization } = await organizationAccess(ctx, services, Role.Owner);
    const dataset = await store.datasets.create({
      organizationId: organization.id,
      name: body.dataset_name,
      trackingId: body.tracking_id ?? null,
      serverConfiguration: body.server_configuration ?? {},
    });
    ctx.body = present.dataset(dataset);
  });

  router.put('/api/dataset', async (ctx) => {
    const body = parseUpdateDataset(ctx.state.body);
    const ref = body.dataset_id ?? body.tracking_id;
    if (!ref) throw badRequest('Either dataset_id or tracking_id must be provided to identify the dataset to update');
    const orgId = organizationHeader(ctx);
    const target = await findDataset(services, ref, orgId);
    await datasetAccess(ctx, services, Role.Owner, target.id);
    const serverConfiguration = body.server_configuration == null ? undefined : { ...target.serverConfiguration, ...body.server_configuration };
    if (serverConfiguration) checkMergedConfiguration(serverConfiguration);
    const updated = await store.datasets.update(target.id, {
      name: body.dataset_name ?? undefined,
      trackingId: body.new_tracking_id === undefined ? undefined : body.new_tracking_id,
      serverConfiguration,
    });
    const denseKey = (cfg: Record<string, unknown>) => (embedsDense(cfg) ? embeddingSpec(cfg).modelKey : null);
    const denseChanged = denseKey(updated.serverConfiguration) !== denseKey(target.serverConfiguration);
    const spladeChanged = spladeSpec(updated.serverConfiguration)?.modelKey !== spladeSpec(target.serverConfiguration)?.modelKey;
    if (denseChanged || spladeChanged) {
      // A new embedding model or sparse encoder makes every vector outdated, and SEMANTIC_ENABLED
      // turned on makes the chunks need vectors they were never given: (re-)encode the dataset now
      // rather than at the workers' next sweep.
      await embedSoon(services, updated, ctx.state.log);
    }
    ctx.body = present.dataset(updated);
  });

  router.post('/api/dataset/events', async (ctx) => {
    const body = parseDatasetEvents(ctx.state.body);
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const pageSize = body.page_size ?? 10;
    const asked = body.event_types ?? [];
    const { types, unknown } = storedEventTypes(asked);
    if (unknown.length > 0) {
      throw badRequest(`event_types: unknown event type "${unknown[0]}"; quarry records ${DATASET_EVENT_TYPES.join(', ')} (the reference's names are accepted too)`);
    }
    // Only reference types quarry never records: nothing to list (an empty filter would list all).
    const none = asked.length > 0 && types.length === 0;
    const { events, total } = none ? { events: [], total: 0 } : await store.events.list(dataset.id, types.length > 0 ? types : null, Math.max(1, body.page ?? 1), pageSize);
    ctx.body = {
      events: events.map((e) => ({
        id: e.id,
        dataset_id: e.datasetId,
        event_type: e.eventType,
        event_data: JSON.stringify(e.eventData),
        created_at: formatTimestamp(e.createdAt),
      })),
      // As the reference: every type the dataset has events of, whatever the filter (a client's filter list).
      event_types: await store.events.types(dataset.id),
      page_count: Math.ceil(total / pageSize),
    };
  });

  router.get('/api/dataset/organization/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    const access = await organizationAccess(ctx, services, Role.Read, id, { allowDatasetRestricted: true });
    const limit = queryInt(ctx.query.limit, 'limit', 1000, 10_000);
    const offset = queryInt(ctx.query.offset, 'offset', 0, 1_000_000_000);
    let rows = await store.datasets.listByOrganization(id, limit, offset);
    if (access.caller.kind === 'key' && access.caller.key.datasetIds.length > 0) {
      const allowed = new Set(access.caller.key.datasetIds);
      rows = rows.filter((r) => allowed.has(r.dataset.id));
    }
    ctx.body = rows.map((r) => ({
      dataset: present.dataset(r.dataset),
      dataset_usage: { id: r.dataset.id, dataset_id: r.dataset.id, chunk_count: r.chunkCount },
    }));
  });

  router.get('/api/dataset/tracking_id/:tracking_id', async (ctx) => {
    const orgId = organizationHeader(ctx);
    if (!orgId) throw badRequest('the TR-Organization header is required to find a dataset by tracking id');
    const dataset = await findDataset(services, ctx.params.tracking_id!, orgId);
    await datasetAccess(ctx, services, Role.Read, dataset.id);
    ctx.body = present.dataset(dataset);
  });

  router.delete('/api/dataset/tracking_id/:tracking_id', async (ctx) => {
    const orgId = organizationHeader(ctx);
    if (!orgId) throw badRequest('the TR-Organization header is required to find a dataset by tracking id');
    const dataset = await findDataset(services, ctx.params.tracking_id!, orgId);
    await datasetAccess(ctx, services, Role.Owner, dataset.id);
    await deleteDataset(dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.get('/api/dataset/usage/:dataset_id', async (ctx) => {
    const id = pathUuid(ctx.params.dataset_id, 'dataset_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Read, id);
    const chunkCount = await store.datasets.chunkCount(dataset.id);
    // Chunks whose dense vector is missing or outdated: searchable by bm25 now, by semantic once embedded.
    const withoutVector = await store.vectors.pendingCount(dataset.id, embeddingSpec(dataset.serverConfiguration).modelKey);
    ctx.body = {
      id: dataset.id,
      dataset_id: dataset.id,
      chunk_count: chunkCount,
      // With SEMANTIC_ENABLED false nothing is ever embedded, so nothing is waiting for it.
      chunks_pending_embedding: embedsDense(dataset.serverConfiguration) ? withoutVector : 0,
      // Chunks that have their current vector (with SEMANTIC_ENABLED false, only those embedded
      // before it was turned off); while embedding runs, its progress is chunks_embedded of chunk_count.
      chunks_embedded: Math.max(0, chunkCount - withoutVector),
      // With a SPLADE encoder (SPLADE_BASE_URL): chunks not yet searchable by fulltext.
      chunks_pending_sparse_encoding: await (async () => {
        const splade = spladeSpec(dataset.serverConfiguration);
        return splade ? store.sparseVectors.pendingCount(dataset.id, splade.modelKey) : 0;
      })(),
    };
  });

  router.put('/api/dataset/clear/:dataset_id', async (ctx) => {
    const id = pathUuid(ctx.params.dataset_id, 'dataset_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Owner, id);
    await store.datasets.clear(dataset.id);
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.post('/api/dataset/get_all_tags', async (ctx) => {
    const body = parseGetAllTags(ctx.state.body);
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const { tags, total } = await store.datasets.tags(dataset.id, Math.max(1, body.page ?? 1), body.page_size ?? 20);
    ctx.body = { tags: tags.map((t) => ({ tag: t.tag, count: t.count })), total };
  });

  router.get('/api/dataset/groups/:dataset_id/:page', async (ctx) => {
    const id = pathUuid(ctx.params.dataset_id, 'dataset_id');
    const page = pathPage(ctx.params.page);
    const { dataset } = await datasetAccess(ctx, services, Role.Read, id);
    const { groups, total } = await store.groups.list(dataset.id, page, GROUPS_PAGE_SIZE);
    ctx.body = { groups: groups.map(groupWithFile), total_pages: Math.ceil(total / GROUPS_PAGE_SIZE) };
  });

  router.get('/api/dataset/:dataset_id', async (ctx) => {
    const id = pathUuid(ctx.params.dataset_id, 'dataset_id');
    // Admin, as in the reference implementation: the configuration is operator detail.
    const { dataset } = await datasetAccess(ctx, services, Role.Admin, id);
    ctx.body = present.dataset(dataset);
  });

  router.delete('/api/dataset/:dataset_id', async (ctx) => {
    const id = pathUuid(ctx.params.dataset_id, 'dataset_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Owner, id);
    await deleteDataset(dataset.id, ctx.state.log);
    ctx.status = 204;
  });

}
