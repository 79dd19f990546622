/**
 * SQLite user events (`user_events`, migration 8): batches stored once per id, read by id and by
 * filter. The metadata filter compares JSON values by type, as the PostgreSQL store's jsonb
 * equality does (a string never equals a number, `true` never equals 1), so both engines agree.
 */
import type { UserEvent, UserEventFilter } from '../../core/domain/user-events.js';
import type Database from 'better-sqlite3';
import type { UserEventRepository } from '../repository.js';
import type { Db } from './database.js';
import { toJson, userEventFromRow } from '../rows.js';
import { metadataScalar, userEventConditions } from '../user-event-records.js';

type Row = Record<string, any>;

/** A number the NOT NULL REAL column accepts (NaN and Infinity arrive as null through JSON). */
const finite = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/** A boolean as the 0/1 column holds it; absent stays absent (then NOT NULL skips the row). */
const bit = (b: boolean | undefined | null): number | null => (b === undefined || b === null ? null : b ? 1 : 0);

/**
 * The SQL condition (and its parameters) of a metadata filter: the JSON path is built from quoted
 * labels (`$."a"."b"`), so every segment is an object key, as PostgreSQL's `->` with text keys.
 * Segments never hold `"` (facade/schemas/analytics-events.ts refuses them).
 */
function metadataCondition(filter: NonNullable<UserEventFilter['metadata']>): { sql: string; params: unknown[] } {
  const path = '$' + filter.path.map((s) => `."${s}"`).join('');
  const v = metadataScalar(filter);
  if (typeof v === 'string') return { sql: `(json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?)`, params: [path, path, v] };
  if (typeof v === 'number') return { sql: `(json_type(metadata, ?) IN ('integer', 'real') AND json_extract(metadata, ?) = ?)`, params: [path, path, v] };
  return { sql: 'json_type(metadata, ?) = ?', params: [path, v === null ? 'null' : String(v)] };
}

/** Builds the user event repository. */
export function sqliteUserEvents(db: Db): UserEventRepository {
  // OR IGNORE: an id already stored is kept as it was (a batch written twice stores once), and a
  // row missing a NOT NULL value is skipped instead of failing its batch.
  const insert = db.prepare(
    `INSERT OR IGNORE INTO user_events (id, dataset_id, event_type, event_name, items, metadata, user_id, is_conversion, request_id, request_type, location, position, clicked_chunk_id, revenue, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // One statement per combination of filters present (at most 2^6 of them).
  const listings = new Map<string, Database.Statement>();
  const getOne = db.prepare('SELECT * FROM user_events WHERE dataset_id = ? AND id = ?');
  const insertAll = db.transaction((events: readonly UserEvent[]): number => {
    let added = 0;
    for (const e of events) {
      added += insert.run(
        e.id,
        e.datasetId,
        e.eventType,
        e.eventName,
        JSON.stringify(e.items ?? []),
        toJson(e.metadata),
        e.userId ?? null,
        bit(e.isConversion),
        e.requestId ?? null,
        e.requestType ?? null,
        e.location ?? null,
        e.position ?? null,
        e.clickedChunkId ?? null,
        finite(e.revenue),
        e.createdAt,
        e.updatedAt,
      ).changes;
    }
    return added;
  });

  return {
    async insertMany(events) {
      return events.length === 0 ? 0 : insertAll.immediate(events);
    },
    async get(datasetId, id) {
      const row = getOne.get(datasetId, id) as Row | undefined;
      return row ? userEventFromRow(row) : undefined;
    },
    async list(datasetId, filter, page) {
      const where = ['dataset_id = ?'];
      const params: unknown[] = [datasetId];
      for (const [condition, value] of userEventConditions(filter)) where.push(condition), params.push(value);
      if (filter.metadata !== undefined) {
        const m = metadataCondition(filter.metadata);
        where.push(m.sql);
        params.push(...m.params);
      }
      const sql = `SELECT * FROM user_events WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`;
      let statement = listings.get(sql);
      if (!statement) listings.set(sql, (statement = db.prepare(sql)));
      const rows = statement.all(...params, page.limit, page.offset) as Row[];
      return rows.map(userEventFromRow);
    },
  };
}
