/**
 * Click-through reports of a dataset (`POST /api/analytics/events/ctr`, TR-Dataset) and the
 * organization's busiest datasets (`POST /api/analytics/top`, TR-Organization, no dataset); both
 * admin only, as in the reference. The SQL is in store/reports/.
 */
import { Role } from '../../core/domain/tenancy.js';
import { ctrReport } from '../../store/reports/ctr-reports.js';
import { topDatasets } from '../../store/reports/top-datasets.js';
import { datasetAccess, organizationAccess } from '../access.js';
import type { Services } from '../context.js';
import { parseCtrReport, parseTopDatasets } from '../schemas/ctr-analytics.js';
import type { QuarryRouter } from './router.js';

/** Registers the click-through reports and the organization's top datasets. */
export function ctrAnalyticsRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  router.post('/api/analytics/events/ctr', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const request = parseCtrReport(ctx.state.body);
    ctx.body = await ctrReport(store.reports, dataset.id, request);
  });

  router.post('/api/analytics/top', async (ctx) => {
    const { organization } = await organizationAccess(ctx, services, Role.Admin);
    const request = parseTopDatasets(ctx.state.body);
    ctx.body = await topDatasets(store.reports, organization.id, request);
  });
}
