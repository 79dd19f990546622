/**
 * Builders of analytics records from what a route has at hand: the parsed request, the raw body
 * (for `user_id`, `metadata` and `request_params`), the ranked results and the response id.
 * Routes call these and hand the record to the recorder; they never shape records themselves.
 */
import { performance } from 'node:perf_hooks';
import type {
  RecommendationKind,
  RecommendationRecord,
  RecordedResult,
  SearchKind,
  SearchRecord,
} from '../../core/domain/analytics.js';
import { RECORD_CAPS, cappedIds, cappedMetadata, cappedRequestParams, cappedResults, cappedText, type TruncationFlags } from './record-caps.js';

/** The body's `user_id` when it is a string (cut to the cap), else null. */
function userIdOf(body: unknown, flags: TruncationFlags): string | null {
  const v = isObject(body) ? body.user_id : undefined;
  return typeof v === 'string' ? cappedText(v, RECORD_CAPS.userIdLength, flags, 'user_id_truncated') : null;
}

/** The body's `metadata` (any JSON), null when absent. */
function metadataOf(body: unknown): unknown {
  return isObject(body) ? (body.metadata ?? null) : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Scores as JSON can carry them (NaN/Infinity would turn into null on the way to the store). */
const finiteOr0 = (n: number): number => (Number.isFinite(n) ? n : 0);

function recorded(results: readonly RecordedResult[]): RecordedResult[] {
  return results.map((r) => ({ id: r.id, score: finiteOr0(r.score) }));
}

/** What {@link searchRecordFrom} needs. */
export interface SearchRecordInput {
  /** The response `id` (V2); V1 responses carry none, the record gets one all the same. */
  readonly id: string;
  readonly datasetId: string;
  /** @defaultValue `'search'` */
  readonly kind?: SearchKind;
  /** The raw request body (`ctx.state.body`). */
  readonly body: unknown;
  /** The validated request: its search method and query text. */
  readonly request: { readonly searchType: string; readonly query: string };
  /** The results as returned, best first. */
  readonly results: readonly RecordedResult[];
  /** `performance.now()` taken when the handler started; latency runs from there to this call. */
  readonly startedAt: number;
}

/** Builds the analytics record of a search, autocomplete or search over groups (capped: record-caps.ts). */
export function searchRecordFrom(input: SearchRecordInput): SearchRecord {
  const all = recorded(input.results);
  const flags: TruncationFlags = {};
  const results = cappedResults(all, flags);
  const query = cappedText(input.request.query, RECORD_CAPS.queryLength, flags, 'query_truncated');
  const userId = userIdOf(input.body, flags);
  const metadata = cappedMetadata(metadataOf(input.body), flags);
  return {
    id: input.id,
    datasetId: input.datasetId,
    kind: input.kind ?? 'search',
    searchMethod: input.request.searchType,
    query,
    requestParams: cappedRequestParams(input.body, flags),
    latencyMs: Math.max(0, performance.now() - input.startedAt),
    topScore: all[0]?.score ?? 0,
    results,
    resultCount: all.length,
    userId,
    metadata,
    createdAt: Date.now(),
  };
}

/** What {@link recommendationRecordFrom} needs. */
export interface RecommendationRecordInput {
  /** The response `id`. */
  readonly id: string;
  readonly datasetId: string;
  readonly recommendationType: RecommendationKind;
  /** The raw request body (`ctx.state.body`): positive/negative ids and tracking ids come from it. */
  readonly body: unknown;
  /** The results as returned, best first. */
  readonly results: readonly RecordedResult[];
}

/** The body's string array at `key` (absent or malformed: empty). */
function stringsOf(body: unknown, key: string): string[] {
  const v = isObject(body) ? body[key] : undefined;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Builds the analytics record of a chunk or group recommendation (capped: record-caps.ts). */
export function recommendationRecordFrom(input: RecommendationRecordInput): RecommendationRecord {
  const all = recorded(input.results);
  const flags: TruncationFlags = {};
  const ids = (kind: 'positive' | 'negative') =>
    cappedIds(stringsOf(input.body, input.recommendationType === 'Group' ? `${kind}_group_ids` : `${kind}_chunk_ids`), flags);
  const trackingIds = (kind: 'positive' | 'negative') =>
    cappedIds(stringsOf(input.body, input.recommendationType === 'Group' ? `${kind}_group_tracking_ids` : `${kind}_tracking_ids`), flags);
  const record = {
    positiveIds: ids('positive'),
    negativeIds: ids('negative'),
    positiveTrackingIds: trackingIds('positive'),
    negativeTrackingIds: trackingIds('negative'),
    results: cappedResults(all, flags),
    userId: userIdOf(input.body, flags),
    metadata: cappedMetadata(metadataOf(input.body), flags),
  };
  return {
    id: input.id,
    datasetId: input.datasetId,
    recommendationType: input.recommendationType,
    ...record,
    requestParams: cappedRequestParams(input.body, flags),
    topScore: all[0]?.score ?? 0,
    createdAt: Date.now(),
  };
}
