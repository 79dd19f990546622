/**
 * PostgreSQL's side of the user event rollups (../event-rollup-batch.ts): a batch's stored events
 * added to both tables inside the transaction that stored them, one upsert per table, keys in
 * sorted order.
 */
import { EVENT_ROLLUP_TABLES, eventRollupDeltas, type RolledEvent } from '../event-rollup-batch.js';
import type { Tx } from './database.js';

/** The columns of `user_events` a RETURNING clause gives {@link addEventRollup}. */
export const EVENT_ROLLUP_RETURNING =
  'RETURNING id, dataset_id AS "datasetId", created_at AS "createdAt", event_type AS "eventType", event_name AS "eventName", revenue';

/** Adds events just stored in `tx` (as RETURNING gave them) to both rollups. */
export async function addEventRollup(tx: Tx, events: readonly RolledEvent[]): Promise<void> {
  if (events.length === 0) return;
  const stored = events.map((e) => ({ ...e, createdAt: Number(e.createdAt), revenue: Number(e.revenue) }));
  for (const t of EVENT_ROLLUP_TABLES) {
    const deltas = eventRollupDeltas(stored, t);
    await tx.run(
      `INSERT INTO ${t.table} AS r (dataset_id, ${t.column}, event_type, event_name, events, revenue)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::float8[])
       ON CONFLICT (dataset_id, ${t.column}, event_type, event_name) DO UPDATE SET events = r.events + excluded.events, revenue = r.revenue + excluded.revenue`,
      [
        deltas.map((d) => d.datasetId),
        deltas.map((d) => d.start),
        deltas.map((d) => d.eventType),
        deltas.map((d) => d.eventName),
        deltas.map((d) => d.events),
        deltas.map((d) => d.revenue),
      ],
    );
  }
}
