/**
 * Search analytics: the reports of `POST /api/analytics/search` (SQL in store/reports/search-*.ts)
 * and the ratings of searches and RAG answers (`PUT /api/analytics/search`, `PUT /api/analytics/rag`).
 * Admin or owner of the dataset's organization, as in the reference.
 */
import { notFound } from '../../core/domain/errors.js';
import { Role } from '../../core/domain/tenancy.js';
import type { QueryRating } from '../../core/domain/user-events.js';
import type { ReportSql } from '../../store/reports/report-sql.js';
import { lowConfidenceQueries, noResultQueries, searchDetails, searchQueries, type RatedSearch } from '../../store/reports/search-events.js';
import { averageRating, conversionRate, ctrOverTime, latencyGraph, searchesPerUser, searchRevenue, searchUsageGraph } from '../../store/reports/search-graphs.js';
import { popularFilters } from '../../store/reports/search-popular-filters.js';
import { countQueries, eventFunnel, headQueries, searchMetrics, type SearchReportRequest } from '../../store/reports/search-reports.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { searchQueryEvent } from '../present/search-query-event.js';
import { parseRating, parseSearchReport } from '../schemas/search-analytics.js';
import type { QuarryContext, QuarryRouter } from './router.js';

const listed = (searches: readonly RatedSearch[]) => ({ queries: searches.map(searchQueryEvent) });

/** The wire answer of one report. */
async function answer(sql: ReportSql, datasetId: string, req: SearchReportRequest): Promise<unknown> {
  switch (req.type) {
    case 'latency_graph':
      return latencyGraph(sql, datasetId, req);
    case 'search_usage_graph':
      return searchUsageGraph(sql, datasetId, req);
    case 'ctr_metrics_over_time':
      return ctrOverTime(sql, datasetId, req);
    case 'search_conversion_rate':
      return conversionRate(sql, datasetId, req);
    case 'searches_per_user':
      return searchesPerUser(sql, datasetId, req);
    case 'search_average_rating':
      return averageRating(sql, datasetId, req);
    case 'search_revenue':
      return searchRevenue(sql, datasetId, req);
    case 'search_metrics':
      return searchMetrics(sql, datasetId, req.filter);
    case 'popular_filters':
      return popularFilters(sql, datasetId, req.filter);
    case 'event_funnel':
      return eventFunnel(sql, datasetId, req.filter.dateRange);
    case 'head_queries':
      return headQueries(sql, datasetId, req);
    case 'count_queries':
      return countQueries(sql, datasetId, req);
    case 'no_result_queries':
      return listed(await noResultQueries(sql, datasetId, req));
    case 'low_confidence_queries':
      return listed(await lowConfidenceQueries(sql, datasetId, req));
    case 'search_queries':
      return listed(await searchQueries(sql, datasetId, req));
    case 'query_details': {
      const found = await searchDetails(sql, datasetId, req.requestId);
      if (!found) throw notFound(`search query ${req.requestId} does not exist in this dataset`);
      return searchQueryEvent(found);
    }
  }
}

/** Registers the search analytics reports and the rating routes. */
export function searchAnalyticsRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  router.post('/api/analytics/search', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseSearchReport(ctx.state.body);
    ctx.body = await answer(store.reports, dataset.id, req);
  });

  /** Stores a rating; answers once it has committed (fire-and-forget for the caller: no existence check). */
  const rate = (kind: QueryRating['kind']) => async (ctx: QuarryContext) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const rating = parseRating(ctx.state.body, kind, dataset.id, Date.now());
    await store.analytics.rate([rating]);
    ctx.status = 204;
  };

  router.put('/api/analytics/search', rate('search'));
  router.put('/api/analytics/rag', rate('rag'));
}
