/**
 * What both user event stores read a listing's filter as, so that the same filter selects the same
 * events on each: the column conditions, and the metadata values a filter may compare.
 */
import { badRequest } from '../core/domain/errors.js';
import type { UserEventFilter } from '../core/domain/user-events.js';

/** A metadata filter's value: only scalars, which both engines compare alike. */
export type MetadataScalar = string | number | boolean | null;

/**
 * The filter's column conditions (metadata aside), each `[SQL with one ?, value]` in binding order,
 * so that each store numbers or binds the placeholders its own way.
 */
export function userEventConditions(filter: UserEventFilter): [string, unknown][] {
  const conditions: [string, unknown][] = [];
  // Both bounds inclusive (epoch ms are integers: the facade turns gt/lt into gte/lte).
  if (filter.createdAfter !== undefined) conditions.push(['created_at >= ?', filter.createdAfter]);
  if (filter.createdBefore !== undefined) conditions.push(['created_at <= ?', filter.createdBefore]);
  if (filter.eventType !== undefined) conditions.push(['event_type = ?', filter.eventType]);
  if (filter.isConversion !== undefined) conditions.push(['is_conversion = ?', filter.isConversion ? 1 : 0]);
  if (filter.userId !== undefined) conditions.push(['user_id = ?', filter.userId]);
  return conditions;
}

/**
 * The metadata filter's value, refused unless a scalar: jsonb equality ignores the key order of
 * objects, SQLite's JSON text would not, so the engines would disagree.
 */
export function metadataScalar(filter: NonNullable<UserEventFilter['metadata']>): MetadataScalar {
  const v = filter.value;
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  throw badRequest('metadata_filter: the value must be a JSON string, number, boolean or null');
}
