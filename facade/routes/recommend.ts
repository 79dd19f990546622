/** Recommendations: chunks like the example chunks, and groups like the example groups (one core call each). */
import { recommendationRecordFrom } from '../analytics/records.js';
import type { SearchArgs } from '../../core/client/core-client.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { chunkWithScoreV1 } from '../present/chunk-with-score.js';
import { groupResultFor } from '../present/group-results.js';
import { parseChunkRecommend, parseGroupRecommend, type RecommendOptions } from '../schemas/recommend.js';
import { rankedChunks, rankedGroups } from '../search/core-request.js';
import { presentResult, type ResultShape } from '../search/present-results.js';
import { maxLimitOf } from '../search/search-plan.js';
import type { QuarryRouter } from './router.js';

/** Registers the recommendation routes. */
export function recommendRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  /** The core's SearchRequest of a recommendation. */
  const recommendArgs = (datasetId: string, req: RecommendOptions, examples: NonNullable<SearchArgs['recommend']>, groupBy?: { groupSize: number }): SearchArgs => ({
    dataset_id: datasetId,
    search_type: req.recommendType,
    query: '',
    filter: req.filter,
    offset: 0,
    limit: req.limit,
    recommend: { ...examples, strategy: req.strategy },
    group_by: groupBy ? { group_size: groupBy.groupSize, count_groups: false } : null,
  });

  router.post('/api/chunk/recommend', async (ctx) => {
    const access = await datasetAccess(ctx, services, Role.Read);
    const maxLimit = maxLimitOf(access.dataset.serverConfiguration);
    const req = parseChunkRecommend(ctx.state.body, maxLimit);
    const reply = await ctx.state.core.search(
      recommendArgs(access.dataset.id, req, {
        positive_chunk_ids: [...req.positive.ids],
        positive_tracking_ids: [...req.positive.trackingIds],
        negative_chunk_ids: [...req.negative.ids],
        negative_tracking_ids: [...req.negative.trackingIds],
      }),
    );
    const results = await rankedChunks(store, access.dataset.id, reply);
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
    const reply = await ctx.state.core.search(
      recommendArgs(
        access.dataset.id,
        req,
        {
          positive_group_ids: [...req.positive.ids],
          positive_group_tracking_ids: [...req.positive.trackingIds],
          negative_group_ids: [...req.negative.ids],
          negative_group_tracking_ids: [...req.negative.trackingIds],
        },
        { groupSize: req.groupSize },
      ),
    );
    const groups = await rankedGroups(store, access.dataset.id, reply);
    const shape: ResultShape = { version: access.apiVersion, slimChunks: req.slimChunks, contentOnly: false, highlight: null, query: '' };
    const results = groups.map((g) => groupResultFor(access.apiVersion, { group: g.group, chunks: g.hits.map((r) => presentResult(shape, r)) }));
    const id = newId();
    const recorded = groups.flatMap((g) => g.hits.map((r) => ({ id: r.c.id, score: r.score })));
    services.analytics.recordRecommendation(recommendationRecordFrom({ id, datasetId: access.dataset.id, recommendationType: 'Group', body: ctx.state.body, results: recorded }));
    ctx.body = access.apiVersion === 'V1' ? results : { id, results };
  });
}
