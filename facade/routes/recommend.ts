/** Recommendations: chunks like the example chunks, and groups like the example groups. */
import { recommendationRecordFrom } from '../analytics/records.js';
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { badRequest, notFound } from '../../core/domain/errors.js';
import type { GroupRecord } from '../../core/domain/group.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { chunkWithScoreV1 } from '../present/chunk-with-score.js';
import { groupResultFor } from '../present/group-results.js';
import { parseChunkRecommend, parseGroupRecommend, type ExampleRefs } from '../schemas/recommend.js';
import { groupedPage, MAX_GROUPING_PREFIX } from '../search/group-hits.js';
import { presentResult, type ResultShape } from '../search/present-results.js';
import { recommendChunks } from '../search/recommend.js';
import { maxLimitOf } from '../search/search-plan.js';
import type { QuarryRouter } from './router.js';

/** Most chunks the example groups of one group recommendation may hold together. */
export const MAX_GROUP_EXAMPLE_CHUNKS = 10_000;

/** Page size used to read the members of an example group. */
const MEMBERS_PAGE = 1000;

/** `items` as a short list for an error message. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, 10).map((s) => JSON.stringify(s)).join(', ');
  return items.length > 10 ? `${shown} and ${items.length - 10} more` : shown;
}

/** Registers the recommendation routes. */
export function recommendRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  /** The chunks named by ids and tracking ids (each once); 404 naming those that do not exist. */
  const chunksOf = async (datasetId: string, refs: ExampleRefs, kind: 'positive' | 'negative'): Promise<ChunkRecord[]> => {
    const byId = await store.chunks.getMany(datasetId, refs.ids);
    const byTracking = await store.chunks.getManyByTrackingIds(datasetId, refs.trackingIds);
    const foundIds = new Set(byId.map((c) => c.id));
    const foundTracking = new Set(byTracking.map((c) => c.trackingId));
    const missingIds = refs.ids.filter((id) => !foundIds.has(id));
    const missingTracking = refs.trackingIds.filter((t) => !foundTracking.has(t));
    if (missingIds.length > 0) throw notFound(`${kind}_chunk_ids ${listed(missingIds)} do not exist in this dataset`);
    if (missingTracking.length > 0) throw notFound(`${kind}_tracking_ids ${listed(missingTracking)} do not exist in this dataset`);
    return [...new Map([...byId, ...byTracking].map((c) => [c.id, c])).values()];
  };

  /** The groups named by ids and tracking ids; 404 naming those that do not exist. */
  const groupsOf = async (datasetId: string, refs: ExampleRefs, kind: 'positive' | 'negative'): Promise<GroupRecord[]> => {
    const byId = await Promise.all(refs.ids.map(async (id) => [id, await store.groups.get(datasetId, id)] as const));
    const byTracking = await Promise.all(refs.trackingIds.map(async (t) => [t, await store.groups.getByTrackingId(datasetId, t)] as const));
    const missingIds = byId.filter(([, g]) => !g).map(([id]) => id);
    const missingTracking = byTracking.filter(([, g]) => !g).map(([t]) => t);
    if (missingIds.length > 0) throw notFound(`${kind}_group_ids ${listed(missingIds)} do not exist in this dataset`);
    if (missingTracking.length > 0) throw notFound(`${kind}_group_tracking_ids ${listed(missingTracking)} do not exist in this dataset`);
    return [...new Map([...byId, ...byTracking].map(([, g]) => [g!.id, g!])).values()];
  };

  /** Every chunk of the groups (each once); 400 when they and `already` other examples exceed MAX_GROUP_EXAMPLE_CHUNKS. */
  const membersOf = async (groups: readonly GroupRecord[], already = 0): Promise<ChunkRecord[]> => {
    const out = new Map<string, ChunkRecord>();
    for (const g of groups) {
      for (let page = 1; ; page++) {
        const { chunks, total } = await store.groups.chunks(g.id, page, MEMBERS_PAGE);
        for (const c of chunks) out.set(c.id, c);
        if (out.size + already > MAX_GROUP_EXAMPLE_CHUNKS) {
          throw badRequest(`the example groups hold more than ${MAX_GROUP_EXAMPLE_CHUNKS} chunks; recommend from smaller groups`);
        }
        if (chunks.length === 0 || page * MEMBERS_PAGE >= total) break;
      }
    }
    return [...out.values()];
  };

  router.post('/api/chunk/recommend', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const maxLimit = maxLimitOf(access.dataset.serverConfiguration);
    const req = parseChunkRecommend(ctx.state.body, maxLimit);
    const positives = await chunksOf(access.dataset.id, req.positive, 'positive');
    const negatives = await chunksOf(access.dataset.id, req.negative, 'negative');
    const results = await recommendChunks(services, access.dataset, { positives, negatives }, { ...req, maxLimit });
    const id = newId();
    services.analytics.recordRecommendation(
      recommendationRecordFrom({ id, datasetId: access.dataset.id, recommendationType: 'Chunk', body: ctx.state.body, results: results.map((r) => ({ id: r.c.id, score: r.score })) }),
    );
    if (access.apiVersion === 'V1') {
      ctx.body = results.map((r) => chunkWithScoreV1(r, req.slimChunks));
      return;
    }
    const shape: ResultShape = { version: 'V2', slimChunks: req.slimChunks, contentOnly: false, highlight: null, query: '' };
    ctx.body = { id, chunks: results.map((r) => presentResult(shape, r)) };
  });

  router.post('/api/chunk_group/recommend', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const maxLimit = maxLimitOf(access.dataset.serverConfiguration);
    const req = parseGroupRecommend(ctx.state.body, maxLimit);
    const positiveGroups = await groupsOf(access.dataset.id, req.positive, 'positive');
    const negativeGroups = await groupsOf(access.dataset.id, req.negative, 'negative');
    const positives = await membersOf(positiveGroups);
    const negatives = await membersOf(negativeGroups, positives.length);
    if (positives.length === 0) throw badRequest('the positive groups have no chunks to recommend from');
    const cap = Math.min(maxLimit, MAX_GROUPING_PREFIX);
    const { groups } = await groupedPage(
      services,
      access.dataset.id,
      (limit) => recommendChunks(services, access.dataset, { positives, negatives }, { ...req, limit, maxLimit }),
      { skip: 0, take: req.limit, groupSize: req.groupSize, countGroups: false, cap },
    );
    const shape: ResultShape = { version: access.apiVersion, slimChunks: req.slimChunks, contentOnly: false, highlight: null, query: '' };
    const results = groups.map((g) => groupResultFor(access.apiVersion, { group: g.group, chunks: g.hits.map((r) => presentResult(shape, r)) }));
    const id = newId();
    const recorded = groups.flatMap((g) => g.hits.map((r) => ({ id: r.c.id, score: r.score })));
    services.analytics.recordRecommendation(recommendationRecordFrom({ id, datasetId: access.dataset.id, recommendationType: 'Group', body: ctx.state.body, results: recorded }));
    ctx.body = access.apiVersion === 'V1' ? results : { id, results };
  });
}
