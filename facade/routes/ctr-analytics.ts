/**
 * Click-through reports of a dataset (`POST /api/analytics/events/ctr`, TR-Dataset) and the
 * organization's busiest datasets (`POST /api/analytics/top`, TR-Organization, no dataset); both
 * admin only, as in the reference. The SQL is in store/reports/.
 */
import { Role } from '../../core/domain/tenancy.js';
import { ctrReport, type ClickedChunkRef } from '../../store/reports/ctr-reports.js';
import type { Store } from '../../store/repository.js';
import { chunkV2 } from '../present/chunk.js';
import { topDatasets } from '../../store/reports/top-datasets.js';
import { datasetAccess, organizationAccess } from '../access.js';
import type { Services } from '../context.js';
import { parseCtrReport, parseTopDatasets } from '../schemas/ctr-analytics.js';
import type { QuarryRouter } from './router.js';

/** A `*_with_clicks` row as the report gives it. */
type ClickRow = { clicked_chunk: ClickedChunkRef } & Record<string, unknown>;

/**
 * The rows with each clicked chunk in place of its id, as the reference answers
 * (`clicked_chunk: {chunk, position}`); a chunk deleted since the click shows as null.
 */
async function withClickedChunks(store: Store, datasetId: string, rows: readonly ClickRow[]): Promise<Record<string, unknown>[]> {
  const ids = [...new Set(rows.map((r) => r.clicked_chunk.chunk_id).filter((id): id is string => id !== null))];
  const chunks = new Map((await store.chunks.getMany(datasetId, ids)).map((c) => [c.id, c]));
  return rows.map((r) => {
    const chunk = r.clicked_chunk.chunk_id === null ? undefined : chunks.get(r.clicked_chunk.chunk_id);
    return { ...r, clicked_chunk: { chunk: chunk === undefined ? null : chunkV2(chunk), position: r.clicked_chunk.position } };
  });
}

/** Registers the click-through reports and the organization's top datasets. */
export function ctrAnalyticsRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  router.post('/api/analytics/events/ctr', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const request = parseCtrReport(ctx.state.body);
    const report = await ctrReport(store.reports, dataset.id, request);
    const key = request.type === 'searches_with_clicks' ? 'queries' : request.type === 'recommendations_with_clicks' ? 'recommendations' : null;
    ctx.body = key === null ? report : { [key]: await withClickedChunks(store, dataset.id, report[key] as ClickRow[]) };
  });

  router.post('/api/analytics/top', async (ctx) => {
    const { organization } = await organizationAccess(ctx, services, Role.Admin);
    const request = parseTopDatasets(ctx.state.body);
    ctx.body = await topDatasets(store.reports, organization.id, request);
  });
}
