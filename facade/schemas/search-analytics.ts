/**
 * Bodies of `POST /api/analytics/search` (one variant per `type`, each validated by its own
 * schema) and of the rating routes `PUT /api/analytics/search` and `PUT /api/analytics/rag`.
 */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { QueryRating } from '../../core/domain/user-events.js';
import { SEARCH_SORT_COLUMNS } from '../../store/reports/search-events.js';
import { SEARCH_FILTER_TYPES, type SearchAnalyticsFilter, type SearchMethod } from '../../store/reports/search-filter.js';
import { DEFAULT_GRANULARITY, SEARCH_REPORT_TYPES, type SearchReportRequest, type SearchReportType } from '../../store/reports/search-reports.js';
import { dateRange, floatRange, granularity, intRange, pageWindow, reportPage, sortOrder } from './analytics-common.js';
import { boundedJson, boundedString, boundedText, finite, parse, requireBody, uuid } from './common.js';

/** Text compared with stored text: PostgreSQL cannot hold NUL, so it is refused on every store. */
const filterText = (max: number) => boundedString(max).refine((s) => !s.includes('\u0000'), { message: 'must not contain the NUL character (\\u0000)' });

/** The wire's search methods; the aliases are mapped to what `search_queries.search_method` holds. */
const WIRE_SEARCH_METHODS = ['semantic', 'fulltext', 'full_text', 'hybrid', 'bm25', 'BM25'] as const;

const searchMethod = z
  .enum(WIRE_SEARCH_METHODS, { message: `search_method must be one of ${WIRE_SEARCH_METHODS.join(', ')}` })
  .transform((m): SearchMethod => (m === 'full_text' ? 'fulltext' : m === 'BM25' ? 'bm25' : m));

const searchFilter = z
  .object({
    date_range: dateRange.nullable().optional(),
    search_type: z.enum(SEARCH_FILTER_TYPES, { message: `search_type must be one of ${SEARCH_FILTER_TYPES.join(', ')}` }).nullable().optional(),
    search_method: searchMethod.nullable().optional(),
    query: filterText(LIMITS.queryLength).nullable().optional(),
    query_rating: intRange.nullable().optional(),
    top_score: floatRange.nullable().optional(),
    component_name: filterText(LIMITS.configStringLength).nullable().optional(),
  })
  .nullable()
  .optional()
  .transform(
    (f): SearchAnalyticsFilter => ({
      dateRange: f?.date_range ?? undefined,
      searchType: f?.search_type ?? undefined,
      searchMethod: f?.search_method ?? undefined,
      query: f?.query ?? undefined,
      queryRating: f?.query_rating ?? undefined,
      topScore: f?.top_score ?? undefined,
      componentName: f?.component_name ?? undefined,
    }),
  );

const page = reportPage
  .nullable()
  .optional()
  .transform((p) => pageWindow(p ?? 1));
const graphGranularity = granularity
  .nullable()
  .optional()
  .transform((g) => g ?? DEFAULT_GRANULARITY);
const flag = z.boolean().nullable().optional();

const graph = z.object({ filter: searchFilter, granularity: graphGranularity });
const filtered = z.object({ filter: searchFilter });
const paged = z.object({ filter: searchFilter, page });

/** Each variant's schema, turning the body into its canonical request. */
const VARIANTS: { [T in SearchReportType]: z.ZodType<Extract<SearchReportRequest, { type: T }>> } = {
  latency_graph: graph.transform((b) => ({ type: 'latency_graph' as const, ...b })),
  search_usage_graph: graph.transform((b) => ({ type: 'search_usage_graph' as const, ...b })),
  ctr_metrics_over_time: graph.transform((b) => ({ type: 'ctr_metrics_over_time' as const, ...b })),
  search_conversion_rate: graph.transform((b) => ({ type: 'search_conversion_rate' as const, ...b })),
  searches_per_user: graph.transform((b) => ({ type: 'searches_per_user' as const, ...b })),
  search_average_rating: graph.transform((b) => ({ type: 'search_average_rating' as const, ...b })),
  search_metrics: filtered.transform((b) => ({ type: 'search_metrics' as const, ...b })),
  popular_filters: filtered.transform((b) => ({ type: 'popular_filters' as const, ...b })),
  event_funnel: filtered.transform((b) => ({ type: 'event_funnel' as const, ...b })),
  head_queries: paged.transform((b) => ({ type: 'head_queries' as const, ...b })),
  no_result_queries: paged.transform((b) => ({ type: 'no_result_queries' as const, ...b })),
  low_confidence_queries: z
    .object({ filter: searchFilter, page, threshold: finite.nullable().optional() })
    .transform((b) => ({ type: 'low_confidence_queries' as const, filter: b.filter, page: b.page, threshold: b.threshold ?? undefined })),
  search_queries: z
    .object({
      filter: searchFilter,
      page,
      has_clicks: flag,
      sort_by: z.enum(SEARCH_SORT_COLUMNS, { message: `sort_by must be one of ${SEARCH_SORT_COLUMNS.join(', ')}` }).nullable().optional(),
      sort_order: sortOrder.nullable().optional(),
    })
    .transform((b) => ({
      type: 'search_queries' as const,
      filter: b.filter,
      page: b.page,
      hasClicks: b.has_clicks ?? undefined,
      sortBy: b.sort_by ?? 'created_at',
      sortOrder: b.sort_order ?? 'desc',
    })),
  count_queries: z
    .object({ filter: searchFilter, count_collapsed_queries: flag })
    .transform((b) => ({ type: 'count_queries' as const, filter: b.filter, countCollapsedQueries: b.count_collapsed_queries ?? false })),
  query_details: z.object({ request_id: uuid }).transform((b) => ({ type: 'query_details' as const, requestId: b.request_id })),
  search_revenue: z
    .object({ filter: searchFilter, granularity: graphGranularity, direct: flag })
    .transform((b) => ({ type: 'search_revenue' as const, filter: b.filter, granularity: b.granularity, direct: b.direct ?? false })),
};

const isReportType = (t: unknown): t is SearchReportType => typeof t === 'string' && (SEARCH_REPORT_TYPES as readonly string[]).includes(t);

/** Validates a `POST /api/analytics/search` body: `type` picks the variant (unknown → 400 listing them). */
export function parseSearchReport(body: unknown): SearchReportRequest {
  requireBody(body, `a JSON object with "type" (one of ${SEARCH_REPORT_TYPES.join(', ')})`);
  const type = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).type : undefined;
  if (!isReportType(type)) {
    const got = type === undefined ? 'none' : JSON.stringify(type).slice(0, 100);
    throw badRequest(`Json Deserialization Error: type must be one of ${SEARCH_REPORT_TYPES.join(', ')}; got ${got}`);
  }
  return parse(VARIANTS[type], body);
}

/** Longest rating note, in UTF-8 bytes. */
export const RATING_NOTE_MAX_BYTES = 4096;

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };

const rating = z.object({
  query_id: uuid,
  rating: z
    .number({ message: 'rating must be an integer' })
    .int({ message: 'rating must be an integer' })
    .min(INT32.min, { message: `rating must be at least ${INT32.min}` })
    .max(INT32.max, { message: `rating must be at most ${INT32.max}` }),
  note: boundedText(RATING_NOTE_MAX_BYTES)
    .refine((s) => !s.includes('\u0000'), { message: 'must not contain the NUL character (\\u0000)' })
    .nullable()
    .optional(),
  metadata: boundedJson.optional(),
});

/** Validates `PUT /api/analytics/search` or `PUT /api/analytics/rag` into the rating to store (of `kind`, now). */
export function parseRating(body: unknown, kind: QueryRating['kind'], datasetId: string, now: number): QueryRating {
  requireBody(body, 'a JSON object with "query_id" and "rating"');
  const b = parse(rating, body);
  return { kind, datasetId, queryId: b.query_id, rating: b.rating, note: b.note ?? null, metadata: b.metadata ?? null, createdAt: now };
}
