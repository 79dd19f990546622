/**
 * `POST /api/analytics/events/all`: a page of a dataset's user events matching a filter, as report
 * SQL. A filter that matches little walks the dataset's whole event history, so the listing runs
 * where reports run: off the HTTP process's event loop on SQLite, and under the report deadline on
 * both engines (as a repository read it ran on the event loop, with no deadline).
 *
 * The metadata filter compares JSON values by type on both engines: a string never equals a
 * number, `true` never equals 1, numbers compare by value.
 */
import type { UserEvent, UserEventFilter } from '../../core/domain/user-events.js';
import { userEventFromRow } from '../rows.js';
import { metadataScalar, userEventConditions } from '../user-event-records.js';
import { Where, type Dialect, type ReportSql } from './report-sql.js';

/** A page of a listing: how many events, after skipping how many. */
export interface EventPage {
  readonly limit: number;
  readonly offset: number;
}

/**
 * The condition of a metadata filter, with `?` placeholders. SQLite: a JSON path of quoted labels
 * (`$."a"."b"`, every segment an object key; segments never hold `"`, the facade refuses them).
 * PostgreSQL: `->` with text keys (object members only, as SQLite's quoted labels) and jsonb
 * equality; the NUL character is replaced as the store replaced it when writing.
 */
function metadataCondition(dialect: Dialect, filter: NonNullable<UserEventFilter['metadata']>): { sql: string; params: unknown[] } {
  const v = metadataScalar(filter);
  if (dialect === 'postgres') {
    const path = filter.path.map(() => ' -> ?::text').join('');
    return { sql: `(metadata::jsonb${path}) = ?::jsonb`, params: [...filter.path.map((s) => s.replaceAll('\0', '\uFFFD')), JSON.stringify(v)] };
  }
  const path = '$' + filter.path.map((s) => `."${s}"`).join('');
  if (typeof v === 'string') return { sql: `(json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?)`, params: [path, path, v] };
  if (typeof v === 'number') return { sql: `(json_type(metadata, ?) IN ('integer', 'real') AND json_extract(metadata, ?) = ?)`, params: [path, path, v] };
  return { sql: 'json_type(metadata, ?) = ?', params: [path, v === null ? 'null' : String(v)] };
}

/** A page of the dataset's events matching `filter`, newest first (ties by id). */
export async function listUserEvents(sql: ReportSql, datasetId: string, filter: UserEventFilter, page: EventPage): Promise<UserEvent[]> {
  const where = new Where().add('dataset_id = ?', datasetId);
  for (const [condition, value] of userEventConditions(filter)) where.add(condition, value);
  if (filter.metadata !== undefined) {
    const m = metadataCondition(sql.dialect, filter.metadata);
    where.add(m.sql, ...m.params);
  }
  const rows = await sql.all(`SELECT * FROM user_events ${where.sql()} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, [
    ...where.params,
    Math.max(0, page.limit),
    Math.max(0, page.offset),
  ]);
  return rows.map(userEventFromRow);
}
