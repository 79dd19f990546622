/**
 * The RAG reports that list answers themselves (`RagQueryEvent`s): the filtered, sorted listing,
 * one answer by id, and a topic's answers. Each answer comes with its hallucination figures (set
 * by later analysis; 0 and none until then) and its latest rating.
 */
import type { RagRecord, RagType } from '../../core/domain/rag.js';
import { fromJson } from '../rows.js';
import { HAS_CLICK, RAG_RATING_JOIN, ragSelection, type RagAnalyticsFilter } from './rag-filter.js';
import type { ReportSql } from './report-sql.js';

/** A rating as reports show it. */
export interface ReportRating {
  readonly rating: number;
  readonly note: string | null;
  readonly metadata: unknown;
}

/** An answer as the RAG reports list it. */
export interface RatedRag {
  readonly rag: RagRecord;
  readonly hallucinationScore: number;
  readonly detectedHallucinations: readonly string[];
  /** The latest rating; null when unrated. */
  readonly rating: ReportRating | null;
}

/** LIMIT and OFFSET of a listing page. */
export interface ReportWindow {
  readonly limit: number;
  readonly offset: number;
}

/** Columns `sort_by` of `rag_queries` may name. */
export const RAG_SORT_COLUMNS = ['hallucination_score', 'top_score', 'created_at'] as const;

/** One of {@link RAG_SORT_COLUMNS}. */
export type RagSortColumn = (typeof RAG_SORT_COLUMNS)[number];

const COLUMNS = `q.id, q.dataset_id, q.rag_type, q.user_message, q.search_id, q.topic_id, q.results, q.llm_response, q.top_score,
  q.user_id, q.metadata, q.prompt_tokens, q.completion_tokens, q.latency, q.hallucination_score, q.detected_hallucinations, q.created_at,
  r.rating AS rating_value, r.note AS rating_note, r.metadata AS rating_metadata`;

type Row = Record<string, any>;

/** JSON text of a column, parsed; a damaged value shows as `fallback`, not as a failed report. */
function parsed<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return fromJson(text, fallback);
  } catch {
    return fallback;
  }
}

function ratedFromRow(r: Row): RatedRag {
  return {
    rag: {
      id: r.id,
      datasetId: r.dataset_id,
      ragType: r.rag_type as RagType,
      userMessage: r.user_message,
      searchId: r.search_id,
      topicId: r.topic_id,
      results: parsed(r.results, []),
      llmResponse: r.llm_response,
      topScore: Number(r.top_score),
      userId: r.user_id,
      metadata: parsed(r.metadata, null),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
      latencyMs: Number(r.latency),
      createdAt: Number(r.created_at),
    },
    hallucinationScore: Number(r.hallucination_score),
    detectedHallucinations: parsed(r.detected_hallucinations, []),
    rating:
      r.rating_value === null || r.rating_value === undefined
        ? null
        : { rating: Number(r.rating_value), note: r.rating_note ?? null, metadata: parsed(r.rating_metadata, null) },
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

/** `rag_queries`: a sorted page of the answers matching the filter (and click condition), ties by id. */
export async function ragQueries(sql: ReportSql, datasetId: string, req: RagQueriesRequest): Promise<RatedRag[]> {
  const { where } = ragSelection(sql.dialect, datasetId, req.filter);
  if (req.hasClicks !== undefined) where.add(req.hasClicks ? HAS_CLICK : `NOT ${HAS_CLICK}`);
  const rows = await sql.all(
    `SELECT ${COLUMNS} FROM rag_queries q ${RAG_RATING_JOIN} ${where.sql()}
     ORDER BY q.${req.sortBy} ${req.sortOrder === 'asc' ? 'ASC' : 'DESC'}, q.id LIMIT ? OFFSET ?`,
    [...where.params, req.page.limit, req.page.offset],
  );
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
    `SELECT ${COLUMNS} FROM rag_queries q ${RAG_RATING_JOIN} WHERE q.dataset_id = ? AND q.topic_id = ? ORDER BY q.created_at, q.id`,
    [datasetId, topicId],
  );
  return rows.map(ratedFromRow);
}
