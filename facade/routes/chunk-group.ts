/** Chunk groups: create, read, update, delete, membership, and pages of a group's chunks. */
import type { Context } from 'koa';
import { notFound } from '../../core/domain/errors.js';
import type { GroupRecord } from '../../core/domain/group.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess, type DatasetAccess } from '../access.js';
import { indexNow } from '../indexing.js';
import type { RequestState, Services } from '../context.js';
import { chunkFor } from '../present/chunk.js';
import { group as presentGroup, groupWithFile } from '../present/group.js';
import { pathPage, pathUuid } from '../schemas/common.js';
import {
  deleteChunksFlag,
  parseChunkRef,
  parseCreateGroups,
  parseGroupsForChunks,
  parseUpdateGroup,
} from '../schemas/chunk-group.js';
import type { QuarryRouter } from './router.js';

const CHUNKS_PAGE_SIZE = 10;

/** Registers chunk-group routes. Literal segments (tracking_id, chunk, chunks) come before parameters. */
export function chunkGroupRoutes(router: QuarryRouter, services: Services): void {
  const { store, config } = services;

  const byId = async (datasetId: string, id: string): Promise<GroupRecord> => {
    const g = await store.groups.get(datasetId, id);
    if (!g) throw notFound(`group with id ${id} does not exist in this dataset`);
    return g;
  };
  const byTracking = async (datasetId: string, tid: string): Promise<GroupRecord> => {
    const g = await store.groups.getByTrackingId(datasetId, tid);
    if (!g) throw notFound(`group with tracking_id "${tid}" does not exist in this dataset`);
    return g;
  };
  const chunkId = async (datasetId: string, ref: { id: string } | { trackingId: string }): Promise<string> => {
    const chunk = await store.chunks.get(datasetId, ref);
    if (!chunk) {
      throw notFound('id' in ref ? `chunk with id ${ref.id} does not exist in this dataset` : `chunk with tracking_id "${ref.trackingId}" does not exist in this dataset`);
    }
    return chunk.id;
  };
  const chunksPage = async (ctx: Context & { state: RequestState }, access: DatasetAccess, g: GroupRecord, page: number) => {
    const { chunks, total } = await store.groups.chunks(g.id, page, CHUNKS_PAGE_SIZE);
    ctx.body = {
      chunks: chunks.map((c) => chunkFor(access.apiVersion, c)),
      group: groupWithFile(g),
      total_pages: Math.ceil(total / CHUNKS_PAGE_SIZE),
    };
  };

  router.post('/api/chunk_group', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const request = parseCreateGroups(ctx.state.body, config.batchGroupLimit);
    const groups = await store.groups.createMany(dataset.id, request.inputs, request.upsert);
    ctx.body = request.isBatch ? groups.map(presentGroup) : presentGroup(groups[0]!);
  });

  router.put('/api/chunk_group', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const { selector, patch } = parseUpdateGroup(ctx.state.body);
    const g = 'id' in selector ? await byId(dataset.id, selector.id) : await byTracking(dataset.id, selector.trackingId);
    await store.groups.update(dataset.id, g.id, patch);
    ctx.status = 204;
  });

  router.post('/api/chunk_group/chunks', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const body = parseGroupsForChunks(ctx.state.body);
    const chunks = [
      ...(await store.chunks.getMany(dataset.id, body.chunk_ids ?? [])),
      ...(await store.chunks.getManyByTrackingIds(dataset.id, body.chunk_tracking_ids ?? [])),
    ];
    if (chunks.length === 0) throw notFound('No valid chunks found for the given chunk_ids or chunk_tracking_ids');
    const ids = [...new Set(chunks.map((c) => c.id))];
    const groups = await store.groups.groupsOfChunks(dataset.id, ids);
    ctx.body = ids.map((id) => ({ chunk_uuid: id, slim_groups: (groups.get(id) ?? []).map(groupWithFile) }));
  });

  router.post('/api/chunk_group/chunk/:group_id', async (ctx) => {
    const groupId = pathUuid(ctx.params.group_id, 'group_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const ref = parseChunkRef(ctx.state.body);
    await byId(dataset.id, groupId);
    await store.groups.addChunk(dataset.id, groupId, await chunkId(dataset.id, ref));
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.delete('/api/chunk_group/chunk/:group_id', async (ctx) => {
    const groupId = pathUuid(ctx.params.group_id, 'group_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const body = ctx.state.body ?? (ctx.query.chunk_id ? { chunk_id: ctx.query.chunk_id } : undefined);
    const ref = parseChunkRef(body);
    await byId(dataset.id, groupId);
    await store.groups.removeChunk(dataset.id, groupId, await chunkId(dataset.id, ref));
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.get('/api/chunk_group/tracking_id/:tracking_id/:page', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const g = await byTracking(access.dataset.id, ctx.params.tracking_id!);
    await chunksPage(ctx, access, g, pathPage(ctx.params.page));
  });

  router.get('/api/chunk_group/tracking_id/:tracking_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    ctx.body = groupWithFile(await byTracking(dataset.id, ctx.params.tracking_id!));
  });

  router.post('/api/chunk_group/tracking_id/:tracking_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const ref = parseChunkRef(ctx.state.body);
    const g = await byTracking(dataset.id, ctx.params.tracking_id!);
    await store.groups.addChunk(dataset.id, g.id, await chunkId(dataset.id, ref));
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.put('/api/chunk_group/tracking_id/:tracking_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const { patch } = parseUpdateGroup(ctx.state.body, ctx.params.tracking_id);
    const g = await byTracking(dataset.id, ctx.params.tracking_id!);
    await store.groups.update(dataset.id, g.id, patch);
    ctx.status = 204;
  });

  router.delete('/api/chunk_group/tracking_id/:tracking_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const deleteChunks = deleteChunksFlag(ctx.query.delete_chunks);
    const g = await byTracking(dataset.id, ctx.params.tracking_id!);
    await store.groups.delete(dataset.id, g.id, deleteChunks);
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });

  router.get('/api/chunk_group/:group_id/:page', async (ctx) => {
    const groupId = pathUuid(ctx.params.group_id, 'group_id');
    const access = await datasetAccess(ctx, services, Role.Read);
    await chunksPage(ctx, access, await byId(access.dataset.id, groupId), pathPage(ctx.params.page));
  });

  router.get('/api/chunk_group/:group_id', async (ctx) => {
    const groupId = pathUuid(ctx.params.group_id, 'group_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    ctx.body = groupWithFile(await byId(dataset.id, groupId));
  });

  router.delete('/api/chunk_group/:group_id', async (ctx) => {
    const groupId = pathUuid(ctx.params.group_id, 'group_id');
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const deleteChunks = deleteChunksFlag(ctx.query.delete_chunks);
    if (!(await store.groups.delete(dataset.id, groupId, deleteChunks))) {
      throw notFound(`group with id ${groupId} does not exist in this dataset`);
    }
    await indexNow(services, dataset.id, ctx.state.log);
    ctx.status = 204;
  });
}
