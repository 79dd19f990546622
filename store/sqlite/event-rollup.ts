/**
 * SQLite's side of the user event rollups (../event-rollup-batch.ts): a batch's stored events
 * added to both tables inside the transaction that stored them, each with the links it has to a
 * stored search or answer; and the links of stored events to a search or answer just stored or
 * deleted, inside the transaction that wrote it. SQLite's single writer makes each lookup and the
 * upserts after it atomic.
 */
import {
  EVENT_LINK_TARGETS,
  EVENT_ROLLUP_TABLES,
  EVENT_VALUE_COLUMNS,
  eventRollupDeltas,
  eventUpsertSet,
  eventValues,
  LINKED_EVENTS_SQL,
  linkedEventDeltas,
  linkedEventsOf,
  type EventDelta,
  type EventLinkTarget,
  type EventRollupTable,
  type LinkedEventRow,
  type RolledEvent,
} from '../event-rollup-batch.js';
import type { Db } from './database.js';

/** A user event just stored, with the request it names. */
export interface StoredUserEvent extends Omit<RolledEvent, 'links'> {
  readonly requestId: string | null;
}

/** Adds `deltas` (per table) to the rollups of `db`. */
function rollupWriter(db: Db): (deltasOf: (t: EventRollupTable) => EventDelta[]) => void {
  const tables = EVENT_ROLLUP_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, event_type, event_name, ${EVENT_VALUE_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ${EVENT_VALUE_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (dataset_id, ${t.column}, event_type, event_name) DO UPDATE SET ${eventUpsertSet('')}`,
    ),
  }));
  return (deltasOf) => {
    for (const { t, add } of tables) {
      for (const d of deltasOf(t)) add.run(d.datasetId, d.start, d.eventType, d.eventName, ...eventValues(d));
    }
  };
}

/** Adds events just stored to the rollups of `db`; call it inside the transaction that stored them. */
export function sqliteEventRollup(db: Db): (events: readonly StoredUserEvent[]) => void {
  const write = rollupWriter(db);
  const recordIn = new Map(EVENT_LINK_TARGETS.map((target) => [target, db.prepare(`SELECT 1 FROM ${target.table} WHERE id = ? AND dataset_id = ?`).pluck()]));
  return (events) => {
    if (events.length === 0) return;
    const rolled = events.map((e): RolledEvent => {
      if (e.requestId === null) return e;
      return { ...e, links: EVENT_LINK_TARGETS.filter((target) => recordIn.get(target)!.get(e.requestId, e.datasetId) !== undefined).map((t) => t.kind) };
    });
    write((t) => eventRollupDeltas(rolled, t));
  };
}

/**
 * Counts (`sign` 1) or uncounts (-1) in the rollups of `db` the links of the stored events to
 * records of `target` just stored or deleted; call it inside the transaction that wrote them.
 */
export function sqliteEventLinks(db: Db): (target: EventLinkTarget, records: readonly { id: string; datasetId: string }[], sign: 1 | -1) => void {
  const write = rollupWriter(db);
  // By the user_events_request index; a record without events (most, when it is stored) is one probe.
  const eventsOf = db.prepare(`${LINKED_EVENTS_SQL} WHERE request_id = ?`);
  return (target, records, sign) => {
    const linked = records.flatMap((r) => linkedEventsOf(eventsOf.all(r.id) as LinkedEventRow[], r.datasetId));
    if (linked.length > 0) write((t) => linkedEventDeltas(linked, target, sign, t));
  };
}
