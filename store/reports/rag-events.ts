/**
 * The RAG reports that list answers themselves (`RagQueryEvent`s): the filtered, sorted listing,
 * one answer by id, and a topic's answers. Each answer comes with its hallucination figures (set
 * by later analysis; 0 and none until then) and its latest rating.
 */
import type { RagRecord } from '../../core/domain/rag.js';
import { ragRecordFromRow } from '../rows.js';
import { clickCondition } from './linked-events.js';
import { RAG_RATING_JOIN, ragSelection, type RagAnalyticsFilter } from './rag-filter.js';
import { parsed, RATING_COLUMNS, ratingFromRow, type ReportRating, type ReportWindow } from './report-rows.js';
import { pageAcrossTies } from './tie-pages.js';
import type { ReportSql } from './report-sql.js';

/** An answer as the RAG reports list it. */
export interface RatedRag {
  readonly rag: RagRecord;
  readonly hallucinationScore: number;
  readonly detectedHallucinations: readonly string[];
  /** The latest rating; null when unrated. */
  readonly rating: ReportRating | null;
}

export type { ReportRating, ReportWindow } from './report-rows.js';

/** Columns `sort_by` of `rag_queries` may name. */
export const RAG_SORT_COLUMNS = ['hallucination_score', 'top_score', 'created_at'] as const;

/** One of {@link RAG_SORT_COLUMNS}. */
export type RagSortColumn = (typeof RAG_SORT_COLUMNS)[number];

const COLUMNS = `q.id, q.dataset_id, q.rag_type, q.user_message, q.search_id, q.topic_id, q.results, q.llm_response, q.top_score,
  q.user_id, q.metadata, q.prompt_tokens, q.completion_tokens, q.latency, q.hallucination_score, q.detected_hallucinations, q.created_at,
  ${RATING_COLUMNS}`;

type Row = Record<string, any>;

function ratedFromRow(r: Row): RatedRag {
  return {
    rag: ragRecordFromRow(r, parsed),
    hallucinationScore: Number(r.hallucination_score),
    detectedHallucinations: parsed(r.detected_hallucinations, []),
    rating: ratingFromRow(r, parsed),
  };
}

/** What `rag_queries` asks for. */
export interface RagQueriesRequest {
  readonly filter: RagAnalyticsFilter;
  readonly page: ReportWindow;
  /** true: only answers with a linked click; false: only those without; absent: all. */
  readonly hasClicks?: boolean;
  readonly sortBy: RagSortColumn;
  readonly sortOrder: 'asc' | 'desc';
}

/**
 * `rag_queries`: a sorted page of the answers matching the filter (and click condition), ties by
 * id (ascending, whichever the order), read without sorting a block of ties (./tie-pages.ts).
 */
export async function ragQueries(sql: ReportSql, datasetId: string, req: RagQueriesRequest): Promise<RatedRag[]> {
  const { where } = ragSelection(sql.dialect, datasetId, req.filter);
  const clicks = clickCondition(req.hasClicks);
  if (clicks !== undefined) where.add(clicks);
  const rows = await pageAcrossTies(sql, {
    columns: COLUMNS,
    from: `rag_queries q ${RAG_RATING_JOIN}`,
    where: { sql: where.sql(), params: where.params },
    sortBy: req.sortBy,
    sortOrder: req.sortOrder,
    page: req.page,
  });
  return rows.map(ratedFromRow);
}

/** `rag_query_details`: one answer of the dataset with its rating, or undefined. */
export async function ragDetails(sql: ReportSql, datasetId: string, id: string): Promise<RatedRag | undefined> {
  const rows = await sql.all(`SELECT ${COLUMNS} FROM rag_queries q ${RAG_RATING_JOIN} WHERE q.dataset_id = ? AND q.id = ?`, [datasetId, id]);
  return rows[0] === undefined ? undefined : ratedFromRow(rows[0]);
}

/** Every answer of one topic of the dataset, oldest first (ties by id). */
export async function topicAnswers(sql: ReportSql, datasetId: string, topicId: string): Promise<RatedRag[]> {
  const rows = await sql.all(
    // +q.created_at: an expression no index orders, so SQLite reads the topic's answers by their
    // topic index and sorts them, instead of walking the dataset's answers in created_at order
    // for the ORDER BY (topic_details, ~300 ms at 10M events).
    `SELECT ${COLUMNS} FROM rag_queries q ${RAG_RATING_JOIN} WHERE q.dataset_id = ? AND q.topic_id = ? ORDER BY +q.created_at, q.id`,
    [datasetId, topicId],
  );
  return rows.map(ratedFromRow);
}
