/**
 * PostgreSQL user events (`user_events`): a batch is one INSERT over unnest (one statement, so one
 * transaction), stored once per id; read by id (listings by filter are report SQL:
 * store/reports/user-event-listing.ts). What SQLite would store or skip row by row must not fail
 * the batch here: rows missing a NOT NULL value are left out, the NUL
 * character is replaced, numbers the columns cannot hold are made to fit.
 */
import type { UserEvent } from '../../core/domain/user-events.js';
import type { UserEventRepository } from '../repository.js';
import { toJson, userEventFromRow } from '../rows.js';
import type { PgDb } from './database.js';
import { addEventRollup, EVENT_ROLLUP_RETURNING, type StoredUserEvent } from './event-rollup.js';
import { insertEventsWithRollup } from './search-rollup.js';

/** A number the NOT NULL DOUBLE PRECISION column accepts (NaN and Infinity arrive as null through JSON). */
const finite = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/** Text PostgreSQL can hold: the NUL character becomes U+FFFD (as store/postgres/analytics.ts does). */
const text = (s: string | null | undefined): string | null => (s === null || s === undefined ? null : s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s);

/** An integer BIGINT takes (epoch ms); null stays null (then the row is left out). */
const bigint = (n: number): number => (Number.isInteger(n) || typeof n !== 'number' ? n : Math.round(n));

/** A click position the INTEGER column holds; one it cannot hold is stored as none rather than fail the batch. */
const position = (n: number | null | undefined): number | null =>
  typeof n === 'number' && Number.isFinite(n) && Math.abs(n) <= 2_147_483_647 ? Math.round(n) : null;

/** A value with the NUL character replaced in every string and key (see {@link metadataJson}). */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\0', '\uFFFD');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('\0', '\uFFFD'), withoutNul(v)]));
  }
  return value;
}

/**
 * Metadata's JSON text as jsonb can read it: the metadata filter casts the column to jsonb, which
 * refuses `\u0000`, and one such row would fail every filtered listing of its dataset.
 */
function metadataJson(value: unknown): string | null {
  const json = toJson(value);
  return json !== null && json.includes('\\u0000') ? toJson(withoutNul(value)) : json;
}

/** Whether none of a row's NOT NULL values is absent (SQLite's INSERT OR IGNORE skips such a row). */
const complete = (...values: unknown[]): boolean => values.every((v) => v !== null && v !== undefined && !Number.isNaN(v));

/** Builds the user event repository. */
export function pgUserEvents(db: PgDb): UserEventRepository {
  // ON CONFLICT on the primary key: a batch stored twice keeps one copy; an id repeated within the
  // batch keeps its first event, as SQLite's INSERT OR IGNORE row by row does.
  const insertSql = `INSERT INTO user_events (id, dataset_id, event_type, event_name, items, metadata, user_id, is_conversion, request_id, request_type, location, position, clicked_chunk_id, revenue, created_at, updated_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::float8[], $15::bigint[], $16::bigint[])
     ON CONFLICT (id) DO NOTHING`;
  const columns: readonly ((e: UserEvent) => unknown)[] = [
    (e) => text(e.id),
    (e) => text(e.datasetId),
    (e) => text(e.eventType),
    (e) => text(e.eventName),
    (e) => JSON.stringify(e.items ?? []),
    (e) => metadataJson(e.metadata),
    (e) => text(e.userId),
    (e) => (e.isConversion ? 1 : 0),
    (e) => text(e.requestId),
    (e) => text(e.requestType),
    (e) => text(e.location),
    (e) => position(e.position),
    (e) => text(e.clickedChunkId),
    (e) => finite(e.revenue),
    (e) => bigint(e.createdAt),
    (e) => bigint(e.updatedAt),
  ];

  return {
    async insertMany(events) {
      const rows = events.filter((e) => complete(e.id, e.datasetId, e.eventType, e.eventName, e.isConversion, e.createdAt, e.updatedAt));
      if (rows.length === 0) return 0;
      const values = columns.map((f) => rows.map(f));
      const stored = rows.map((e) => ({
        id: text(e.id)!,
        datasetId: text(e.datasetId)!,
        eventType: e.eventType,
        eventName: text(e.eventName)!,
        isConversion: e.isConversion,
        requestId: text(e.requestId),
        position: position(e.position),
      }));
      // One transaction: the events, what they add to the user event rollups, the flags a click
      // or conversion naming a request sets in the search rollups, and what an event naming an
      // answer or recommendation counts in the record rollups.
      return db.tx((tx) =>
        insertEventsWithRollup(tx, stored, async () => {
          const added = await tx.all<StoredUserEvent & { id: string }>(`${insertSql} ${EVENT_ROLLUP_RETURNING}`, values);
          await addEventRollup(tx, added);
          return added.map((r) => r.id);
        }),
      );
    },
    async get(datasetId, id) {
      const row = await db.get('SELECT * FROM user_events WHERE dataset_id = $1 AND id = $2', [datasetId, id]);
      return row ? userEventFromRow(row) : undefined;
    },
  };
}

