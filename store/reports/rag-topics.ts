/**
 * The RAG reports about topics (conversations), wire-shaped but for the answers and user events,
 * which come as records. A topic counts once it has at least one answer in `rag_queries`; its
 * `message_count` is the number of its answers. Dates filter the topic's `created_at`.
 *
 * - `topic_queries`: `{topics: [{id, topic_id, name, dataset_id, owner_id, metadata, message_count,
 *   created_at, updated_at}]}` (the reference's `TopicQuery`: `id` and `topic_id` are both the
 *   topic's id; `message_count` is quarry's own),
 *   10 a page, sorted by `created_at` or `message_count` (ties by topic id).
 * - `topic_details`: `{topic, messages}`, the topic's answers oldest first (a topic without
 *   answers has none, and a count of 0); undefined when the dataset has no such topic.
 * - `topics_over_time`: `{total_topics, points}`, topics created per bucket; the filter's rag
 *   type, user message and rating select the answers a topic must have one of.
 * - `events_for_topic`: the user events linked to the topic's answers (as records), newest first
 *   (ties by id); undefined when the dataset has no such topic.
 */
import { topicAnswers, type RatedRag, type ReportWindow } from './rag-events.js';
import { topicSelection, type RagAnalyticsFilter, type TopicAnalyticsFilter } from './rag-filter.js';
import { toPoints, type TimePoint } from './rag-series.js';
import type { RequestType, UserEvent, UserEventType } from '../../core/domain/user-events.js';
import { bucketStart, reportTimestamp, type Granularity, type ReportSql } from './report-sql.js';

/** A topic as the topic reports show it. */
export interface TopicSummary {
  readonly id: string;
  readonly topic_id: string;
  readonly name: string;
  readonly dataset_id: string;
  readonly owner_id: string;
  /** The metadata the topic was created with, or null. */
  readonly metadata: unknown;
  readonly message_count: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** Columns `sort_by` of `topic_queries` may name. */
export const TOPIC_SORT_COLUMNS = ['created_at', 'message_count'] as const;

/** One of {@link TOPIC_SORT_COLUMNS}. */
export type TopicSortColumn = (typeof TOPIC_SORT_COLUMNS)[number];

type Row = Record<string, any>;

/** JSON text of a column, parsed; a damaged value shows as `fallback`, not as a failed report. */
function parsed(text: unknown, fallback: unknown): unknown {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

const summary = (r: Row): TopicSummary => ({
  id: r.id,
  topic_id: r.id,
  name: r.name,
  dataset_id: r.dataset_id,
  owner_id: r.owner_id,
  metadata: parsed(r.metadata, null),
  message_count: Number(r.message_count ?? 0),
  created_at: reportTimestamp(Number(r.created_at)),
  updated_at: reportTimestamp(Number(r.updated_at)),
});

/** What `topic_queries` asks for. */
export interface TopicQueriesRequest {
  readonly filter: TopicAnalyticsFilter;
  readonly page: ReportWindow;
  readonly sortBy: TopicSortColumn;
  readonly sortOrder: 'asc' | 'desc';
}

/** `topic_queries`: a sorted page of the topics with answers. */
export async function topicQueries(sql: ReportSql, datasetId: string, req: TopicQueriesRequest): Promise<{ topics: TopicSummary[] }> {
  const { from, fromParams, where } = topicSelection(sql.dialect, datasetId, req.filter);
  const order = req.sortBy === 'message_count' ? 'c.message_count' : 't.created_at';
  const rows = await sql.all(
    `SELECT t.id, t.name, t.dataset_id, t.owner_id, t.metadata, t.created_at, t.updated_at, c.message_count FROM ${from} ${where.sql()}
     ORDER BY ${order} ${req.sortOrder === 'asc' ? 'ASC' : 'DESC'}, t.id LIMIT ? OFFSET ?`,
    [...fromParams, ...where.params, req.page.limit, req.page.offset],
  );
  return { topics: rows.map(summary) };
}

/** The dataset's topic `topicId` with its answer count, or undefined. */
async function topicRow(sql: ReportSql, datasetId: string, topicId: string): Promise<Row | undefined> {
  const [row] = await sql.all(
    `SELECT t.id, t.name, t.dataset_id, t.owner_id, t.metadata, t.created_at, t.updated_at,
       (SELECT COUNT(*) FROM rag_queries q WHERE q.dataset_id = t.dataset_id AND q.topic_id = t.id) AS message_count
     FROM topics t WHERE t.dataset_id = ? AND t.id = ?`,
    [datasetId, topicId],
  );
  return row;
}

/** `topic_details`: the topic and its answers, or undefined when the dataset has no such topic. */
export async function topicDetails(
  sql: ReportSql,
  datasetId: string,
  topicId: string,
): Promise<{ topic: TopicSummary; messages: RatedRag[] } | undefined> {
  const row = await topicRow(sql, datasetId, topicId);
  if (row === undefined) return undefined;
  return { topic: summary(row), messages: await topicAnswers(sql, datasetId, topicId) };
}

/** `topics_over_time`: topics with matching answers, per bucket of their creation. */
export async function topicsOverTime(
  sql: ReportSql,
  datasetId: string,
  req: { filter: RagAnalyticsFilter; granularity: Granularity },
): Promise<{ total_topics: number; points: TimePoint[] }> {
  const { dateRange, componentName, ...answers } = req.filter;
  const { from, fromParams, where } = topicSelection(sql.dialect, datasetId, { dateRange, componentName }, answers);
  const rows = await sql.all<{ bucket: number; n: number }>(
    `SELECT ${bucketStart(sql.dialect, req.granularity, 't.created_at')} AS bucket, COUNT(*) AS n FROM ${from} ${where.sql()} GROUP BY bucket ORDER BY bucket`,
    [...fromParams, ...where.params],
  );
  const points = toPoints(rows, (r) => Number(r.n));
  return { total_topics: points.reduce((sum, p) => sum + p.point, 0), points };
}

const eventFromRow = (r: Row): UserEvent => ({
  id: r.id,
  datasetId: r.dataset_id,
  eventType: r.event_type as UserEventType,
  eventName: r.event_name,
  items: parsed(r.items, []) as string[],
  metadata: parsed(r.metadata, null),
  userId: r.user_id,
  isConversion: Number(r.is_conversion) === 1,
  requestId: r.request_id,
  requestType: r.request_type as RequestType | null,
  location: r.location,
  position: r.position === null ? null : Number(r.position),
  clickedChunkId: r.clicked_chunk_id,
  revenue: Number(r.revenue),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** `events_for_topic`: the user events linked to the topic's answers, or undefined when the dataset has no such topic. */
export async function eventsForTopic(sql: ReportSql, datasetId: string, topicId: string): Promise<UserEvent[] | undefined> {
  if ((await sql.all('SELECT 1 AS found FROM topics WHERE dataset_id = ? AND id = ?', [datasetId, topicId])).length === 0) return undefined;
  // CROSS JOIN: SQLite takes the topic's answers first (by their topic index), then each one's
  // events by request id. Left to choose, it walked the dataset's every event in created_at order
  // for the ORDER BY (5.6 s at 10M events). PostgreSQL plans it as the inner join it is.
  const rows = await sql.all(
    `SELECT e.* FROM rag_queries q CROSS JOIN user_events e
     WHERE e.request_id = q.id AND e.dataset_id = q.dataset_id AND q.dataset_id = ? AND q.topic_id = ? ORDER BY e.created_at DESC, e.id`,
    [datasetId, topicId],
  );
  return rows.map(eventFromRow);
}
