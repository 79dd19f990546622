/**
 * SQLite's side of the user event rollups (../event-rollup-batch.ts): a batch's stored events
 * added to both tables inside the transaction that stored them.
 */
import { EVENT_ROLLUP_TABLES, eventRollupDeltas, type RolledEvent } from '../event-rollup-batch.js';
import type { Db } from './database.js';

/** Adds events just stored to the rollups of `db`; call it inside the transaction that stored them. */
export function sqliteEventRollup(db: Db): (events: readonly RolledEvent[]) => void {
  const tables = EVENT_ROLLUP_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, event_type, event_name, events, revenue) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, ${t.column}, event_type, event_name) DO UPDATE SET events = events + excluded.events, revenue = revenue + excluded.revenue`,
    ),
  }));
  return (events) => {
    if (events.length === 0) return;
    for (const { t, add } of tables) {
      for (const d of eventRollupDeltas(events, t)) add.run(d.datasetId, d.start, d.eventType, d.eventName, d.events, d.revenue);
    }
  };
}
