/**
 * What one analytics record may store. Every search stored its whole request body and metadata:
 * ten 5 MB searches from a read key added 60 MB to the store (and held 50 MB in the recorder's
 * buffer). A record now keeps at most a few tens of KB; what was cut is flagged inside the stored
 * request params (`request_truncated`, `metadata_truncated`, `results_truncated`, ...), so
 * reports can tell a cut record from a small one.
 */
import type { RecordedResult } from '../../core/domain/analytics.js';
import { measureJson } from '../../core/domain/limits.js';

/** The caps of one stored record. */
export const RECORD_CAPS = Object.freeze({
  /** Largest stored request body (`request_params`), as JSON bytes; larger members are left out. */
  requestParamsBytes: 16_384,
  /** Largest stored `metadata`, as JSON bytes; larger metadata is stored as null. */
  metadataBytes: 4096,
  /** Deepest nesting stored in request params or metadata. */
  depth: 32,
  /** Longest stored query text (a multi-query's joined texts can be longer than one query). */
  queryLength: 4096,
  /** Longest stored user_id. */
  userIdLength: 1024,
  /** Most results stored per record, best first (`result_count` keeps the full number). */
  results: 100,
  /** Most ids stored per positive/negative list of a recommendation. */
  exampleIds: 100,
  /** Longest tracking id stored in those lists. */
  trackingIdLength: 256,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `value` fits in `bytes` of JSON and the depth cap. */
const fits = (value: unknown, bytes: number): boolean => !measureJson(value, bytes, RECORD_CAPS.depth).over;

/** The flags a cut record carries in its stored request params. */
export type TruncationFlags = Partial<Record<'metadata_truncated' | 'results_truncated' | 'query_truncated' | 'user_id_truncated' | 'ids_truncated', true>>;

/**
 * The request body as stored: whole when it fits, else its members in order while they fit,
 * with `request_truncated: true` and the names of the members left out (`truncated_fields`).
 * `flags` (what else was cut) are added either way.
 */
export function cappedRequestParams(body: unknown, flags: TruncationFlags): unknown {
  const flagged = Object.keys(flags).length > 0;
  const budget = RECORD_CAPS.requestParamsBytes;
  // A spread, not withFields: `body` is the user's JSON, whose `__proto__` key must stay a key; only a flagged (capped) request gets here.
  // eslint-disable-next-line no-restricted-syntax
  if (fits(body, budget)) return flagged ? (isObject(body) ? { ...body, ...flags } : { request: body ?? null, ...flags }) : (body ?? null);
  const out: Record<string, unknown> = { request_truncated: true, ...flags };
  const left: string[] = [];
  // Room for the flags and for up to 32 names (of at most 64 characters) of members left out.
  let room = budget - 2560;
  if (isObject(body)) {
    for (const [key, value] of Object.entries(body)) {
      const m = measureJson(value, room, RECORD_CAPS.depth);
      if (m.over || key.length > 64) {
        if (left.length < 32) left.push(key.slice(0, 64));
        continue;
      }
      out[key] = value;
      room -= m.bytes + key.length + 4;
    }
  }
  out.truncated_fields = left;
  return out;
}

/** `metadata` as stored: null (flagged) when it is larger or deeper than the cap. */
export function cappedMetadata(metadata: unknown, flags: TruncationFlags): unknown {
  if (metadata === null || metadata === undefined) return null;
  if (fits(metadata, RECORD_CAPS.metadataBytes)) return metadata;
  flags.metadata_truncated = true;
  return null;
}

/** `text` cut to `max` UTF-16 units (without splitting a surrogate pair), flagging `flag` when cut. */
export function cappedText(text: string, max: number, flags: TruncationFlags, flag: keyof TruncationFlags): string {
  if (text.length <= max) return text;
  flags[flag] = true;
  const end = max > 0 && (text.charCodeAt(max - 1) & 0xfc00) === 0xd800 ? max - 1 : max;
  return text.slice(0, end);
}

/** The first RECORD_CAPS.results results, flagged when there were more. */
export function cappedResults(results: readonly RecordedResult[], flags: TruncationFlags): readonly RecordedResult[] {
  if (results.length <= RECORD_CAPS.results) return results;
  flags.results_truncated = true;
  return results.slice(0, RECORD_CAPS.results);
}

/** A recommendation's id list as stored: at most RECORD_CAPS.exampleIds ids of at most RECORD_CAPS.trackingIdLength each. */
export function cappedIds(ids: readonly string[], flags: TruncationFlags): string[] {
  const kept = ids.slice(0, RECORD_CAPS.exampleIds).map((id) => cappedText(id, RECORD_CAPS.trackingIdLength, flags, 'ids_truncated'));
  if (ids.length > RECORD_CAPS.exampleIds) flags.ids_truncated = true;
  return kept;
}
