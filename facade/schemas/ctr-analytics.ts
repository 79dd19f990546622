/**
 * Bodies of `POST /api/analytics/events/ctr` (click-through reports, discriminated on `type`) and
 * `POST /api/analytics/top`. As every body schema here, unknown fields are dropped (serde's
 * default); `null` reads as absent. The search variants take the reference's whole
 * `SearchAnalyticsFilter` and the recommendation ones its `RecommendationAnalyticsFilter`, so that
 * a filter written for the other reports means the same here instead of being half ignored.
 */
import { z } from 'zod';
import { LIMITS } from '../../core/domain/limits.js';
import { REQUEST_TYPES } from '../../core/domain/user-events.js';
import type { CtrReportRequest, RecommendationCtrFilter, SearchCtrFilter } from '../../store/reports/ctr-reports.js';
import type { TopDatasetsRequest } from '../../store/reports/top-datasets.js';
import { dateRange, floatRange, intRange, pageWindow, reportPage } from './analytics-common.js';
import { boundedString, parse, requireBody } from './common.js';

/** The report variants of `POST /api/analytics/events/ctr`. */
export const CTR_REPORT_TYPES = [
  'search_ctr_metrics',
  'searches_with_clicks',
  'searches_without_clicks',
  'recommendation_ctr_metrics',
  'recommendations_with_clicks',
  'recommendations_without_clicks',
] as const;

/** Longest `component_name` matched (a component is a short UI name). */
const COMPONENT_NAME_MAX_LENGTH = 1024;

const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const searchKind = z.enum(['search', 'autocomplete', 'search_over_groups', 'search_within_groups', 'rag'], {
  message: 'search_type must be one of search, autocomplete, search_over_groups, search_within_groups, rag',
});

/** Search methods with the reference's aliases, as the searches record them. */
const searchMethod = z
  .enum(['semantic', 'fulltext', 'full_text', 'hybrid', 'bm25', 'BM25'], { message: 'search_method must be one of semantic, fulltext, hybrid, bm25' })
  .transform((m) => (m === 'full_text' ? 'fulltext' : m === 'BM25' ? 'bm25' : m));

const componentName = boundedString(COMPONENT_NAME_MAX_LENGTH);

const searchFilter = z.object({
  date_range: optional(dateRange),
  search_type: optional(searchKind),
  search_method: optional(searchMethod),
  query: optional(boundedString(LIMITS.queryLength)),
  query_rating: optional(intRange),
  top_score: optional(floatRange),
  component_name: optional(componentName),
});

const recommendationFilter = z.object({
  date_range: optional(dateRange),
  // The reference's capitalised RecommendationType (a serde attribute quirk kept on the wire).
  recommendation_type: optional(z.enum(['Chunk', 'Group'], { message: 'recommendation_type must be Chunk or Group' })),
  top_score: optional(floatRange),
  component_name: optional(componentName),
});

const reportType = z.object({
  type: z.enum(CTR_REPORT_TYPES, { message: `type must be one of ${CTR_REPORT_TYPES.join(', ')}` }),
});

const searchBody = z.object({ filter: optional(searchFilter), page: optional(reportPage) });
const recommendationBody = z.object({ filter: optional(recommendationFilter), page: optional(reportPage) });

/** Drops absent fields, so a filter holds only what narrows the report. */
function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

function toSearchFilter(f: z.output<typeof searchFilter> | null | undefined): SearchCtrFilter {
  if (!f) return {};
  return defined({
    dateRange: f.date_range,
    searchType: f.search_type,
    searchMethod: f.search_method,
    query: f.query,
    queryRating: f.query_rating,
    topScore: f.top_score,
    componentName: f.component_name,
  });
}

function toRecommendationFilter(f: z.output<typeof recommendationFilter> | null | undefined): RecommendationCtrFilter {
  if (!f) return {};
  return defined({ dateRange: f.date_range, recommendationType: f.recommendation_type, topScore: f.top_score, componentName: f.component_name });
}

/** Validates `POST /api/analytics/events/ctr`: the variant first, then its own fields. */
export function parseCtrReport(body: unknown): CtrReportRequest {
  requireBody(body, `a JSON object with "type" (one of ${CTR_REPORT_TYPES.join(', ')})`);
  const { type } = parse(reportType, body);
  switch (type) {
    case 'search_ctr_metrics':
      return { type, filter: toSearchFilter(parse(searchBody, body).filter) };
    case 'searches_with_clicks':
    case 'searches_without_clicks': {
      const b = parse(searchBody, body);
      return { type, filter: toSearchFilter(b.filter), window: pageWindow(b.page ?? 1) };
    }
    case 'recommendation_ctr_metrics':
      return { type, filter: toRecommendationFilter(parse(recommendationBody, body).filter) };
    case 'recommendations_with_clicks':
    case 'recommendations_without_clicks': {
      const b = parse(recommendationBody, body);
      return { type, filter: toRecommendationFilter(b.filter), window: pageWindow(b.page ?? 1) };
    }
  }
}

const topBody = z.object({
  type: z.enum(REQUEST_TYPES, { message: `type must be one of ${REQUEST_TYPES.join(', ')}` }),
  date_range: optional(dateRange),
});

/** Validates `POST /api/analytics/top`. */
export function parseTopDatasets(body: unknown): TopDatasetsRequest {
  requireBody(body, `a JSON object with "type" (one of ${REQUEST_TYPES.join(', ')})`);
  const b = parse(topBody, body);
  return b.date_range ? { type: b.type, dateRange: b.date_range } : { type: b.type };
}
