/**
 * `POST /api/analytics/events/all`: a page and a filter of user events. `metadata_filter` is one
 * equality, `a.b = <JSON value>`, parsed strictly (anything else is a 400, never a guess).
 */
import { z } from 'zod';
import { QuarryError } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { USER_EVENT_TYPES, type UserEventFilter } from '../../core/domain/user-events.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { dateRange, reportPage } from './analytics-common.js';
import { boundedString, parse } from './common.js';
import { storableKey } from './message.js';

/** Longest `metadata_filter` expression. */
export const METADATA_FILTER_MAX_LENGTH = 4096;
/** Most keys in a `metadata_filter` path. */
export const METADATA_FILTER_MAX_DEPTH = LIMITS.metadataDepth;

/**
 * A key of a metadata path: letters, digits and `_ - : @ # / +` (filter_clicked's keys are
 * `<filter_type>::<field>`). No quote, dot, space, bracket or operator: each would make the
 * expression ambiguous or the JSON path of one engine mean something else than the other's.
 */
const PATH_KEY = /^[\p{L}\p{N}_\-:@#/+]+$/u;

const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const listEvents = z.object({
  page: optional(reportPage),
  filter: optional(
    z.object({
      date_range: optional(dateRange),
      event_type: optional(z.enum(USER_EVENT_TYPES)),
      is_conversion: optional(z.boolean()),
      // No NUL: PostgreSQL refuses it in a parameter, SQLite would just match nothing.
      user_id: optional(storableKey(LIMITS.userIdLength)),
      metadata_filter: optional(boundedString(METADATA_FILTER_MAX_LENGTH)),
    }),
  ),
});

/** A validated events listing: its 1-based page and the store's filter. */
export interface ListEventsRequest {
  readonly page: number;
  readonly filter: UserEventFilter;
}

const refuse = (why: string): QuarryError =>
  new QuarryError('invalid_json', `Json Deserialization Error: filter.metadata_filter: ${why} (expected "key.key = <JSON string, number, boolean or null>", e.g. "color = \\"red\\"")`);

/** Parses `a.b = <JSON value>` into a path of object keys and a JSON scalar. */
export function parseMetadataFilter(text: string): NonNullable<UserEventFilter['metadata']> {
  const eq = text.indexOf('=');
  if (eq < 0) throw refuse('no "="');
  const left = text.slice(0, eq).trim();
  const right = text.slice(eq + 1).trim();
  if (left === '') throw refuse('no key before "="');
  const path = left.split('.');
  if (path.length > METADATA_FILTER_MAX_DEPTH) throw refuse(`at most ${METADATA_FILTER_MAX_DEPTH} keys in a path`);
  for (const key of path) if (!PATH_KEY.test(key)) throw refuse(`bad key "${key.slice(0, 64)}"`);
  let value: unknown;
  try {
    value = JSON.parse(right);
  } catch {
    throw refuse(`the value after "=" is not JSON: ${right.slice(0, 64)}`);
  }
  if (!(value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) {
    throw refuse('the value must be a JSON string, number, boolean or null');
  }
  if (typeof value === 'string' && value.includes('\u0000')) throw refuse('the value must not contain the NUL character (\\u0000)');
  return { path, value };
}

/** Integer epoch-ms bounds, both inclusive, of a date range (stored times are whole milliseconds). */
function createdBounds(r: RangeBounds): Pick<UserEventFilter, 'createdAfter' | 'createdBefore'> {
  const lows = [r.gte === undefined ? undefined : Math.ceil(r.gte), r.gt === undefined ? undefined : Math.floor(r.gt) + 1].filter((n) => n !== undefined);
  const highs = [r.lte === undefined ? undefined : Math.floor(r.lte), r.lt === undefined ? undefined : Math.ceil(r.lt) - 1].filter((n) => n !== undefined);
  return {
    ...(lows.length > 0 ? { createdAfter: Math.max(...lows) } : {}),
    ...(highs.length > 0 ? { createdBefore: Math.min(...highs) } : {}),
  };
}

/** Validates `POST /api/analytics/events/all` (an empty body lists page 1 unfiltered). */
export function parseListEvents(body: unknown): ListEventsRequest {
  const b = parse(listEvents, body ?? {});
  const f = b.filter ?? {};
  const filter: UserEventFilter = {
    ...(f.date_range ? createdBounds(f.date_range) : {}),
    ...(f.event_type != null ? { eventType: f.event_type } : {}),
    ...(f.is_conversion != null ? { isConversion: f.is_conversion } : {}),
    ...(f.user_id != null ? { userId: f.user_id } : {}),
    ...(f.metadata_filter != null ? { metadata: parseMetadataFilter(f.metadata_filter) } : {}),
  };
  return { page: b.page ?? 1, filter };
}
