/**
 * The user event rollups (issue 15): per (dataset, UTC hour or day, event type, event name) the
 * number of user events and the sum of their revenue, so that the event funnel and the revenue
 * graphs over a long range read a few thousand rows instead of millions of events
 * (store/reports/event-rollup.ts). Both stores add a batch's stored events to them in the
 * transaction that stores the batch (store/sqlite/event-rollup.ts, store/postgres/event-rollup.ts).
 * User events are never updated, and deleted only with their dataset, whose rollup rows the purge
 * deletes too: each rollup row is always the aggregate of its key's events.
 *
 * Unlike the search rollups (./search-rollup-batch.ts) nothing here is read back: a batch's counts
 * are added by an upsert (`events = events + excluded.events`), which PostgreSQL's row locks make
 * atomic without an advisory lock. Keys are written in one order (sorted), so two batches touching
 * the same keys wait for each other instead of deadlocking.
 */
import { DAY_MS, HOUR_MS, periodStart, type PeriodTable } from './search-rollup-batch.js';

/** One user event rollup table. */
export type EventRollupTable = PeriodTable<'user_event_rollup_hourly' | 'user_event_rollup_daily'>;

/** The hourly user event rollup. */
export const EVENT_HOURLY: EventRollupTable = { table: 'user_event_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** The daily user event rollup. */
export const EVENT_DAILY: EventRollupTable = { table: 'user_event_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both user event rollup tables. */
export const EVENT_ROLLUP_TABLES: readonly EventRollupTable[] = [EVENT_HOURLY, EVENT_DAILY];

/** What the rollups need of a stored user event, as stored. */
export interface RolledEvent {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly eventType: string;
  readonly eventName: string;
  readonly revenue: number;
}

/** What one batch adds to one rollup row. */
export interface EventDelta {
  readonly datasetId: string;
  readonly start: number;
  readonly eventType: string;
  readonly eventName: string;
  events: number;
  revenue: number;
}

/** The events aggregated per key of `table`, in key order. */
export function eventRollupDeltas(events: readonly RolledEvent[], table: EventRollupTable): EventDelta[] {
  const byKey = new Map<string, EventDelta>();
  for (const e of events) {
    const start = periodStart(e.createdAt, table.periodMs);
    const key = JSON.stringify([e.datasetId, start, e.eventType, e.eventName]);
    let d = byKey.get(key);
    if (!d) byKey.set(key, (d = { datasetId: e.datasetId, start, eventType: e.eventType, eventName: e.eventName, events: 0, revenue: 0 }));
    d.events += 1;
    d.revenue += e.revenue;
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The migration statement that fills `table` from the `user_events` rows already stored. */
export const eventRollupBackfillSql = (table: EventRollupTable): string => {
  const p = table.periodMs;
  return `INSERT INTO ${table.table} (dataset_id, ${table.column}, event_type, event_name, events, revenue)
  SELECT dataset_id, (created_at / ${p}) * ${p}, event_type, event_name, COUNT(*), SUM(revenue)
  FROM user_events GROUP BY dataset_id, (created_at / ${p}) * ${p}, event_type, event_name;`;
};
