/**
 * `POST /api/analytics/recommendations` bodies: a report chosen by `type`, each validated into its
 * canonical request. Absent and null members are the same; pages are 1-based (0 read as 1);
 * ranges with a lower bound above the upper one are refused.
 */
import { z } from 'zod';
import { LIMITS } from '../../core/domain/limits.js';
import { RECOMMENDATION_TYPES, type RecommendationAnalyticsFilter } from '../../store/reports/recommendation-filter.js';
import type { ReportWindow } from '../../store/reports/report-rows.js';
import { RECOMMENDATION_SORT_COLUMNS, type RecommendationGraphRequest, type RecommendationSortColumn } from '../../store/reports/recommendation-reports.js';
import { dateRange, floatRange, granularity, pageWindow, reportPage, sortOrder } from './analytics-common.js';
import { boundedString, finite, parse, uuid } from './common.js';
import { listingOf, reportType } from './rag-analytics.js';

/** A member that may be absent or null (both mean "not given"). */
const opt = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const filter = z.object({
  date_range: opt(dateRange),
  recommendation_type: opt(z.enum(RECOMMENDATION_TYPES, { message: `recommendation_type must be one of ${RECOMMENDATION_TYPES.join(', ')}` })),
  top_score: opt(floatRange),
  component_name: opt(boundedString(LIMITS.queryLength)),
});

/** The canonical filter of a parsed `RecommendationAnalyticsFilter` (null members dropped). */
function toFilter(f: z.output<typeof filter> | null | undefined): RecommendationAnalyticsFilter {
  return {
    ...(f?.date_range ? { dateRange: f.date_range } : {}),
    ...(f?.recommendation_type ? { recommendationType: f.recommendation_type } : {}),
    ...(f?.top_score ? { topScore: f.top_score } : {}),
    ...(f?.component_name != null ? { componentName: f.component_name } : {}),
  };
}

const graph = z.object({ filter: opt(filter), granularity: opt(granularity) });

/** The body schema of each report type. */
const SCHEMAS = {
  low_confidence_recommendations: z.object({ filter: opt(filter), page: opt(reportPage), threshold: opt(finite) }),
  recommendation_queries: z.object({
    filter: opt(filter),
    page: opt(reportPage),
    has_clicks: opt(z.boolean()),
    sort_by: opt(z.enum(RECOMMENDATION_SORT_COLUMNS, { message: `sort_by must be one of ${RECOMMENDATION_SORT_COLUMNS.join(', ')}` })),
    sort_order: opt(sortOrder),
  }),
  query_details: z.object({ request_id: uuid }),
  recommendation_usage_graph: graph,
  recommendations_per_user: graph,
  recommendations_ctr_rate: graph,
  recommendation_conversion_rate: graph,
  event_funnel: z.object({ filter: opt(filter) }),
} as const;

/** The report types of `POST /api/analytics/recommendations`. */
export const RECOMMENDATION_REPORT_TYPES = Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[];

/** One validated recommendation report request. */
export type RecommendationReportRequest =
  | { readonly type: 'low_confidence_recommendations'; readonly filter: RecommendationAnalyticsFilter; readonly page: ReportWindow; readonly threshold?: number }
  | {
      readonly type: 'recommendation_queries';
      readonly filter: RecommendationAnalyticsFilter;
      readonly page: ReportWindow;
      readonly hasClicks?: boolean;
      readonly sortBy: RecommendationSortColumn;
      readonly sortOrder: 'asc' | 'desc';
    }
  | { readonly type: 'query_details'; readonly requestId: string }
  | ({
      readonly type: 'recommendation_usage_graph' | 'recommendations_per_user' | 'recommendations_ctr_rate' | 'recommendation_conversion_rate';
    } & RecommendationGraphRequest)
  | { readonly type: 'event_funnel'; readonly filter: RecommendationAnalyticsFilter };

/** Validates a `POST /api/analytics/recommendations` body. */
export function parseRecommendationReport(body: unknown): RecommendationReportRequest {
  const type = reportType(body, RECOMMENDATION_REPORT_TYPES);
  switch (type) {
    case 'low_confidence_recommendations': {
      const b = parse(SCHEMAS[type], body);
      return { type, filter: toFilter(b.filter), page: pageWindow(b.page ?? 1), ...(b.threshold != null ? { threshold: b.threshold } : {}) };
    }
    case 'recommendation_queries': {
      const b = parse(SCHEMAS[type], body);
      return { type, filter: toFilter(b.filter), ...listingOf(b) };
    }
    case 'query_details':
      return { type, requestId: parse(SCHEMAS[type], body).request_id };
    case 'recommendation_usage_graph':
    case 'recommendations_per_user':
    case 'recommendations_ctr_rate':
    case 'recommendation_conversion_rate': {
      const b = parse(SCHEMAS[type], body);
      return { type, filter: toFilter(b.filter), granularity: b.granularity ?? 'hour' };
    }
    case 'event_funnel':
      return { type, filter: toFilter(parse(SCHEMAS[type], body).filter) };
  }
}
