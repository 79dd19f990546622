/**
 * `POST /api/analytics/rag` bodies: a report chosen by `type`, each validated into its canonical
 * request. Absent and null members are the same; pages are 1-based (0 read as 1); ranges with a
 * lower bound above the upper one are refused.
 */
import { z } from 'zod';
import { QuarryError } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { ReportWindow } from '../../store/reports/report-rows.js';
import type { Granularity } from '../../store/reports/report-sql.js';
import { RAG_SORT_COLUMNS, type RagSortColumn } from '../../store/reports/rag-events.js';
import { RAG_TYPES, type RagAnalyticsFilter, type TopicAnalyticsFilter } from '../../store/reports/rag-filter.js';
import { TOPIC_SORT_COLUMNS, type TopicSortColumn } from '../../store/reports/rag-topics.js';
import { dateRange, granularity, intRange, pageWindow, reportPage, sortOrder } from './analytics-common.js';
import { boundedString, parse, uuid } from './common.js';

/** A member that may be absent or null (both mean "not given"). */
const opt = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const text = boundedString(LIMITS.queryLength);

const ragFilter = z.object({
  date_range: opt(dateRange),
  rag_type: opt(z.enum(RAG_TYPES, { message: `rag_type must be one of ${RAG_TYPES.join(', ')}` })),
  query: opt(text),
  query_rating: opt(intRange),
  component_name: opt(text),
});

const topicFilter = z.object({ date_range: opt(dateRange), component_name: opt(text) });

/** The canonical filter of a parsed `RAGAnalyticsFilter` (null members dropped). */
function toRagFilter(f: z.output<typeof ragFilter> | null | undefined): RagAnalyticsFilter {
  return {
    ...(f?.date_range ? { dateRange: f.date_range } : {}),
    ...(f?.rag_type ? { ragType: f.rag_type } : {}),
    ...(f?.query != null ? { query: f.query } : {}),
    ...(f?.query_rating ? { queryRating: f.query_rating } : {}),
    ...(f?.component_name != null ? { componentName: f.component_name } : {}),
  };
}

const graph = { filter: opt(ragFilter), granularity: opt(granularity) };
const paged = { filter: opt(ragFilter), page: opt(reportPage) };

/** The body schema of each report type. */
const SCHEMAS = {
  rag_queries: z.object({
    ...paged,
    has_clicks: opt(z.boolean()),
    sort_by: opt(z.enum(RAG_SORT_COLUMNS, { message: `sort_by must be one of ${RAG_SORT_COLUMNS.join(', ')}` })),
    sort_order: opt(sortOrder),
  }),
  rag_usage: z.object({ filter: opt(ragFilter) }),
  rag_usage_graph: z.object(graph),
  rag_query_details: z.object({ request_id: uuid }),
  rag_query_ratings: z.object({ filter: opt(ragFilter) }),
  followup_queries: z.object(paged),
  topic_queries: z.object({
    filter: opt(topicFilter),
    page: opt(reportPage),
    sort_by: opt(z.enum(TOPIC_SORT_COLUMNS, { message: `sort_by must be one of ${TOPIC_SORT_COLUMNS.join(', ')}` })),
    sort_order: opt(sortOrder),
  }),
  topic_details: z.object({ topic_id: uuid }),
  topics_over_time: z.object(graph),
  ctr_metrics_over_time: z.object(graph),
  messages_per_user: z.object(graph),
  chat_average_rating: z.object(graph),
  chat_conversion_rate: z.object(graph),
  event_funnel: z.object({ filter: opt(ragFilter) }),
  events_for_topic: z.object({ topic_id: uuid }),
  chat_revenue: z.object({ ...graph, direct: opt(z.boolean()) }),
  popular_chats: z.object(paged),
} as const;

/** The report types of `POST /api/analytics/rag`. */
export const RAG_REPORT_TYPES = Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[];

/** A graph's filter and bucket size (hour by default). */
export interface RagGraph {
  readonly filter: RagAnalyticsFilter;
  readonly granularity: Granularity;
}

/** One validated RAG report request. */
export type RagReportRequest =
  | {
      readonly type: 'rag_queries';
      readonly filter: RagAnalyticsFilter;
      readonly page: ReportWindow;
      readonly hasClicks?: boolean;
      readonly sortBy: RagSortColumn;
      readonly sortOrder: 'asc' | 'desc';
    }
  | { readonly type: 'rag_usage' | 'rag_query_ratings' | 'event_funnel'; readonly filter: RagAnalyticsFilter }
  | ({
      readonly type:
        | 'rag_usage_graph'
        | 'topics_over_time'
        | 'ctr_metrics_over_time'
        | 'messages_per_user'
        | 'chat_average_rating'
        | 'chat_conversion_rate';
    } & RagGraph)
  | { readonly type: 'rag_query_details'; readonly requestId: string }
  | { readonly type: 'followup_queries' | 'popular_chats'; readonly filter: RagAnalyticsFilter; readonly page: ReportWindow }
  | {
      readonly type: 'topic_queries';
      readonly filter: TopicAnalyticsFilter;
      readonly page: ReportWindow;
      readonly sortBy: TopicSortColumn;
      readonly sortOrder: 'asc' | 'desc';
    }
  | { readonly type: 'topic_details' | 'events_for_topic'; readonly topicId: string }
  | ({ readonly type: 'chat_revenue'; readonly direct: boolean } & RagGraph);

/**
 * The body's `type`, checked against `types`: a body that is no object, or names no known report,
 * is refused with the list of valid ones.
 */
export function reportType<T extends string>(body: unknown, types: readonly T[]): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new QuarryError('invalid_json', `Json Deserialization Error: the body must be a JSON object with "type" (one of ${types.join(', ')})`);
  }
  const type = (body as Record<string, unknown>).type;
  if (typeof type !== 'string' || !(types as readonly string[]).includes(type)) {
    const got = type === undefined ? 'none' : JSON.stringify(type).slice(0, 100);
    throw new QuarryError('invalid_json', `Json Deserialization Error: type: must be one of ${types.join(', ')}; got ${got}`);
  }
  return type as T;
}

/** A listing body's paging and sorting members, as `rag_queries`, `topic_queries` and `recommendation_queries` take them. */
interface ListingBody<S extends string> {
  readonly page?: number | null;
  readonly has_clicks?: boolean | null;
  readonly sort_by?: S | null;
  readonly sort_order?: 'asc' | 'desc' | null;
}

/** A listing's page, click condition and sort; absent members are page 1, every record, newest first. */
export function listingOf<S extends string>(b: ListingBody<S>): { page: ReportWindow; hasClicks?: boolean; sortBy: S | 'created_at'; sortOrder: 'asc' | 'desc' } {
  return {
    page: pageWindow(b.page ?? 1),
    ...(b.has_clicks != null ? { hasClicks: b.has_clicks } : {}),
    sortBy: b.sort_by ?? 'created_at',
    sortOrder: b.sort_order ?? 'desc',
  };
}

/** Validates a `POST /api/analytics/rag` body. */
export function parseRagReport(body: unknown): RagReportRequest {
  const type = reportType(body, RAG_REPORT_TYPES);
  switch (type) {
    case 'rag_queries': {
      const b = parse(SCHEMAS.rag_queries, body);
      return { type, filter: toRagFilter(b.filter), ...listingOf(b) };
    }
    case 'rag_usage':
    case 'rag_query_ratings':
    case 'event_funnel':
      return { type, filter: toRagFilter(parse(SCHEMAS[type], body).filter) };
    case 'rag_usage_graph':
    case 'topics_over_time':
    case 'ctr_metrics_over_time':
    case 'messages_per_user':
    case 'chat_average_rating':
    case 'chat_conversion_rate': {
      const b = parse(SCHEMAS[type], body);
      return { type, filter: toRagFilter(b.filter), granularity: b.granularity ?? 'hour' };
    }
    case 'chat_revenue': {
      const b = parse(SCHEMAS.chat_revenue, body);
      return { type, filter: toRagFilter(b.filter), granularity: b.granularity ?? 'hour', direct: b.direct ?? false };
    }
    case 'rag_query_details':
      return { type, requestId: parse(SCHEMAS.rag_query_details, body).request_id };
    case 'followup_queries':
    case 'popular_chats': {
      const b = parse(SCHEMAS[type], body);
      return { type, filter: toRagFilter(b.filter), page: pageWindow(b.page ?? 1) };
    }
    case 'topic_queries': {
      const b = parse(SCHEMAS.topic_queries, body);
      const f = b.filter;
      return {
        type,
        filter: { ...(f?.date_range ? { dateRange: f.date_range } : {}), ...(f?.component_name != null ? { componentName: f.component_name } : {}) },
        ...listingOf(b),
      };
    }
    case 'topic_details':
    case 'events_for_topic':
      return { type, topicId: parse(SCHEMAS[type], body).topic_id };
  }
}
