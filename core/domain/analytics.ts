/**
 * Analytics records: one per search, autocomplete, RAG retrieval and recommendation, kept in the
 * store under the reference implementation's ClickHouse column names (`search_queries`,
 * `recommendation_queries`) so that the analytics endpoints can serve them as they are. Also the
 * BullMQ names and payload of the job that carries them from the facade to the store.
 */

import type { RagRecord } from './rag.js';

/**
 * What kind of request a search record describes: the reference's `search_type` column
 * (`ClickhouseSearchTypes`), not the search method.
 */
export type SearchKind = 'search' | 'autocomplete' | 'search_over_groups' | 'search_within_groups' | 'rag';

/** One result of a recorded request, in rank order. */
export interface RecordedResult {
  readonly id: string;
  readonly score: number;
}

/** A search as recorded for analytics (stored in `search_queries`). */
export interface SearchRecord {
  /** Uuid; the `id` of the V2 search response, so clicks and ratings can name it. */
  readonly id: string;
  readonly datasetId: string;
  /** Stored as `search_type`. */
  readonly kind: SearchKind;
  /**
   * The request's `search_type` (semantic, fulltext, hybrid, bm25), stored as `search_method`:
   * the reference's `search_type` column holds {@link SearchKind}, and its count report groups by both.
   */
  readonly searchMethod: string;
  /** The query text (a multi-query's texts joined by spaces). */
  readonly query: string;
  /** The request body as the caller sent it (search bodies carry no secrets). */
  readonly requestParams: unknown;
  /** Time spent answering, in milliseconds. */
  readonly latencyMs: number;
  /** Score of the first result; 0 when there is none. */
  readonly topScore: number;
  readonly results: readonly RecordedResult[];
  readonly resultCount: number;
  /** The request's `user_id`; null when absent. */
  readonly userId: string | null;
  /** The request's `metadata` (any JSON); null when absent. */
  readonly metadata: unknown;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** What a recommendation was asked for (the reference's capitalised `RecommendationType`). */
export type RecommendationKind = 'Chunk' | 'Group';

/** A recommendation as recorded for analytics (stored in `recommendation_queries`). */
export interface RecommendationRecord {
  /** Uuid; the `id` of the recommendation response. */
  readonly id: string;
  readonly datasetId: string;
  readonly recommendationType: RecommendationKind;
  readonly positiveIds: readonly string[];
  readonly negativeIds: readonly string[];
  readonly positiveTrackingIds: readonly string[];
  readonly negativeTrackingIds: readonly string[];
  /** The request body as the caller sent it. */
  readonly requestParams: unknown;
  readonly results: readonly RecordedResult[];
  /** Score of the first result; 0 when there is none. */
  readonly topScore: number;
  readonly userId: string | null;
  readonly metadata: unknown;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** The queue that carries analytics batches from the facade to the job workers. */
export const ANALYTICS_QUEUE = 'quarry-analytics';

/** Name of the job that stores one batch. */
export const ANALYTICS_FLUSH_JOB = 'flush-analytics';

/** Attempts of a flush job before BullMQ keeps it in its failed set (exponential backoff from 1 s). */
export const ANALYTICS_ATTEMPTS = 10;

/**
 * Payload of a flush job. `id` is the job id too: sending the same batch again (after a lost
 * reply) is deduplicated by BullMQ, and the store ignores record ids it already holds.
 */
export interface AnalyticsBatch {
  readonly id: string;
  readonly searches: readonly SearchRecord[];
  readonly recommendations: readonly RecommendationRecord[];
  /** RAG answers (`rag_queries`). Batches sent before RAG existed lack it: readers take it as empty. */
  readonly rags?: readonly RagRecord[];
}

/**
 * Payload of a flush job whose batch travels as bytes: the batch's JSON (an {@link AnalyticsBatch})
 * is a field of the job's own hash ({@link ANALYTICS_PAYLOAD_FIELD}), set right after the job is
 * added, so it goes with the job when it completes and stays with it in the failed set. The
 * facade's records then never sit in its heap as objects or as one large string (the search p99
 * waited for the young-generation collections that copied them).
 */
export interface AnalyticsBatchRef {
  readonly id: string;
  /** Records in the batch (for logs). */
  readonly records: number;
  readonly payload: 'job-hash';
}

/** What a flush job carries: a batch (jobs queued by earlier releases) or a reference to its bytes. */
export type AnalyticsJobData = AnalyticsBatch | AnalyticsBatchRef;

/** The field of a flush job's hash that holds its batch's JSON. */
export const ANALYTICS_PAYLOAD_FIELD = 'quarry_payload';

/** Whether a flush job's batch is in its hash rather than in its data. */
export const isBatchRef = (data: AnalyticsJobData): data is AnalyticsBatchRef => (data as Partial<AnalyticsBatchRef>).payload === 'job-hash';

/** The record lists of a batch. */
export type RecordList = 'searches' | 'recommendations' | 'rags';

/**
 * Fields a stored record cannot be without, by list: the NOT NULL columns of both stores, which
 * skip a row that lacks one (SQLite's INSERT OR IGNORE, PostgreSQL's filter before its insert).
 */
const REQUIRED_FIELDS: Readonly<Record<RecordList, readonly string[]>> = {
  searches: ['id', 'datasetId', 'kind', 'searchMethod', 'query', 'resultCount', 'createdAt'],
  recommendations: ['id', 'datasetId', 'recommendationType', 'createdAt'],
  rags: ['id', 'datasetId', 'ragType', 'userMessage', 'llmResponse', 'createdAt'],
};

/** The first field of `record` that {@link REQUIRED_FIELDS} names for `list` and it lacks (null, absent or NaN), or undefined. */
function missingField(list: RecordList, record: object): string | undefined {
  const r = record as Record<string, unknown>;
  return REQUIRED_FIELDS[list].find((f) => r[f] === null || r[f] === undefined || Number.isNaN(r[f]));
}

/** Whether `record` of `list` has every field a store requires (the stores skip one that does not). */
export const isCompleteRecord = (list: RecordList, record: object): boolean => missingField(list, record) === undefined;

/** A record the store would skip, and why. */
export interface IncompleteRecord {
  readonly list: RecordList;
  /** The record's id, when it has one. */
  readonly id: string | null;
  /** The first required field it lacks (null, absent or NaN). */
  readonly missing: string;
}

/**
 * `batch` without the records that lack a required field, and those records: the stores would
 * skip them without a word, so the caller reports them instead. No facade sends one; a batch
 * changed in Redis, or written by another release, might.
 */
export function completeRecords<B extends Omit<AnalyticsBatch, 'id'>>(batch: B): { batch: B; incomplete: IncompleteRecord[] } {
  const incomplete: IncompleteRecord[] = [];
  const keep = <R extends object>(list: RecordList, records: readonly R[] | undefined): readonly R[] | undefined => {
    if (records === undefined) return undefined;
    const kept = records.filter((record) => {
      const missing = missingField(list, record);
      if (missing === undefined) return true;
      const id = (record as { id?: unknown }).id;
      incomplete.push({ list, id: typeof id === 'string' ? id : null, missing });
      return false;
    });
    return kept.length === records.length ? records : kept;
  };
  const searches = keep('searches', batch.searches);
  const recommendations = keep('recommendations', batch.recommendations);
  const rags = keep('rags', batch.rags);
  if (incomplete.length === 0) return { batch, incomplete };
  return { batch: Object.assign({}, batch, rags === undefined ? { searches, recommendations } : { searches, recommendations, rags }), incomplete };
}
