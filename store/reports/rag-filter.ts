/**
 * The filters of the RAG reports, as one FROM + WHERE over `rag_queries q` (answers) or `topics t`
 * (conversations). Every statement starts `WHERE q.dataset_id = ?` (or `t.dataset_id = ?`) with
 * the date bounds on `created_at` next, so both engines walk the (dataset_id, created_at) index.
 * A user event links to an answer when its `request_id` is the answer's id in the same dataset.
 */
import type { RagType } from '../../core/domain/rag.js';
import { jsonText, Where, type Dialect, type RangeBounds } from './report-sql.js';

/** The values of `rag_type` (the reference's `RagTypes`). */
export const RAG_TYPES = ['chosen_chunks', 'all_chunks'] as const satisfies readonly RagType[];

/** `RAGAnalyticsFilter`, canonical: every absent member matches everything. */
export interface RagAnalyticsFilter {
  /** Epoch-ms bounds on the answer's `created_at`. */
  readonly dateRange?: RangeBounds;
  readonly ragType?: RagType;
  /** The exact user message (as the search reports match the exact query). */
  readonly query?: string;
  /** Bounds on the answer's latest rating; an unrated answer never matches one. */
  readonly queryRating?: RangeBounds;
  /** `metadata.component_name` of the answer. */
  readonly componentName?: string;
}

/** `TopicAnalyticsFilter` of `topic_queries`: about the topic itself. */
export interface TopicAnalyticsFilter {
  /** Epoch-ms bounds on the topic's `created_at`. */
  readonly dateRange?: RangeBounds;
  /** `metadata.component_name` of the topic. */
  readonly componentName?: string;
}

/**
 * The answer's latest rating, joined on its id within its dataset. Ratings sent through the
 * search route rate searches and are left out, as the search reports leave out the RAG ones.
 */
export const RAG_RATING_JOIN = `LEFT JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = 'rag'`;

/** FROM and WHERE of the answers a report reads. */
export interface Selection {
  /** `rag_queries q`, with the rating joined as `r` when needed. */
  readonly from: string;
  readonly where: Where;
}

/** The conditions of `filter` on the answer `q` and its rating `r`, after the dataset and dates. */
function addAnswerConditions(dialect: Dialect, where: Where, filter: RagAnalyticsFilter): Where {
  if (filter.ragType !== undefined) where.add('q.rag_type = ?', filter.ragType);
  if (filter.query !== undefined) where.add('q.user_message = ?', filter.query);
  where.range('r.rating', filter.queryRating);
  if (filter.componentName !== undefined) where.add(`${jsonText(dialect, 'q.metadata', 'component_name')} = ?`, filter.componentName);
  return where;
}

/**
 * The dataset's answers matching `filter`. The rating is joined when the filter bounds it or
 * `withRating` asks for it (reports that read `r.rating`).
 */
export function ragSelection(dialect: Dialect, datasetId: string, filter: RagAnalyticsFilter, withRating = false): Selection {
  const where = addAnswerConditions(dialect, new Where().add('q.dataset_id = ?', datasetId).range('q.created_at', filter.dateRange), filter);
  const rating = withRating || filter.queryRating !== undefined;
  return { from: rating ? `rag_queries q ${RAG_RATING_JOIN}` : 'rag_queries q', where };
}

/** The topics a topic report reads: FROM (with parameters of its own) and WHERE. */
export interface TopicSelection {
  /** `topics t` joined to `c`, its answers' count `c.message_count` (topics without answers drop out). */
  readonly from: string;
  /** Parameters of {@link from}, bound before the WHERE's. */
  readonly fromParams: readonly unknown[];
  readonly where: Where;
}

/**
 * The dataset's topics (`t`) that have at least one answer: created within the filter's dates and
 * carrying its component name in their own metadata. With `answers` (rag type, user message,
 * rating), only the answers matching those are counted, of any date: a topic is reported at its
 * creation, whenever its answers came.
 */
export function topicSelection(
  dialect: Dialect,
  datasetId: string,
  filter: TopicAnalyticsFilter,
  answers: Omit<RagAnalyticsFilter, 'dateRange' | 'componentName'> = {},
): TopicSelection {
  const counted = addAnswerConditions(dialect, new Where().add('q.dataset_id = ?', datasetId).add('q.topic_id IS NOT NULL'), answers);
  const rating = answers.queryRating !== undefined ? ` ${RAG_RATING_JOIN}` : '';
  const from = `topics t JOIN (SELECT q.topic_id, COUNT(*) AS message_count FROM rag_queries q${rating} ${counted.sql()} GROUP BY q.topic_id) c ON c.topic_id = t.id`;
  const where = new Where().add('t.dataset_id = ?', datasetId).range('t.created_at', filter.dateRange);
  if (filter.componentName !== undefined) where.add(`${jsonText(dialect, 't.metadata', 'component_name')} = ?`, filter.componentName);
  return { from, fromParams: counted.params, where };
}

/** The linked-event conditions, kept here too for the reports that import them with the filter. */
export { HAS_CLICK, HAS_CONVERSION, linkedEvent } from './linked-events.js';
