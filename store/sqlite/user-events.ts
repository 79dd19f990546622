/**
 * SQLite user events (`user_events`, migration 8): batches stored once per id, read by id
 * (listings by filter are report SQL, for both engines: store/reports/user-event-listing.ts).
 */
import type { UserEvent } from '../../core/domain/user-events.js';
import type { UserEventRepository } from '../repository.js';
import type { Db } from './database.js';
import { toJson, userEventFromRow } from '../rows.js';
import type { LinkChange } from '../search-rollup-batch.js';
import { sqliteEventRollup, type StoredUserEvent } from './event-rollup.js';
import { sqliteSearchRollup } from './search-rollup.js';
import { sqliteRecordRollup } from './record-rollup.js';
import { noRecordChanges } from '../record-rollup-batch.js';

type Row = Record<string, any>;

/** A number the NOT NULL REAL column accepts (NaN and Infinity arrive as null through JSON). */
const finite = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/** A boolean as the 0/1 column holds it; absent stays absent (then NOT NULL skips the row). */
const bit = (b: boolean | undefined | null): number | null => (b === undefined || b === null ? null : b ? 1 : 0);

/** Builds the user event repository. */
export function sqliteUserEvents(db: Db): UserEventRepository {
  // OR IGNORE: an id already stored is kept as it was (a batch written twice stores once), and a
  // row missing a NOT NULL value is skipped instead of failing its batch.
  const insert = db.prepare(
    `INSERT OR IGNORE INTO user_events (id, dataset_id, event_type, event_name, items, metadata, user_id, is_conversion, request_id, request_type, location, position, clicked_chunk_id, revenue, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const getOne = db.prepare('SELECT * FROM user_events WHERE dataset_id = ? AND id = ?');
  const rollup = sqliteSearchRollup(db);
  const addToEventRollups = sqliteEventRollup(db);
  const records = sqliteRecordRollup(db);
  // The stored events go into the user event rollups, and a click or conversion naming a stored
  // search may set its flags in the search rollups (and an event naming a stored answer or
  // recommendation counts in the record rollups), in the same transaction; each event's change is
  // read before it is stored, so the batch's later events see its earlier ones.
  const insertAll = db.transaction((events: readonly UserEvent[]): number => {
    const added: StoredUserEvent[] = [];
    const links: LinkChange[] = [];
    const recordChanges = noRecordChanges();
    for (const e of events) {
      const link = rollup.linkChange(e);
      const named = records.eventChange(e);
      const revenue = finite(e.revenue);
      const stored = insert.run(
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
        revenue,
        e.createdAt,
        e.updatedAt,
      ).changes;
      if (stored !== 1) continue;
      added.push({ datasetId: e.datasetId, createdAt: e.createdAt, eventType: e.eventType, eventName: e.eventName, revenue, requestId: e.requestId ?? null });
      if (link) links.push(link);
      if (named) {
        recordChanges.records.push(...named.records);
        recordChanges.events.push(...named.events);
      }
    }
    rollup.links(links);
    records.apply(recordChanges);
    addToEventRollups(added);
    return added.length;
  });

  return {
    async insertMany(events) {
      return events.length === 0 ? 0 : insertAll.immediate(events);
    },
    async get(datasetId, id) {
      const row = getOne.get(datasetId, id) as Row | undefined;
      return row ? userEventFromRow(row) : undefined;
    },
  };
}
