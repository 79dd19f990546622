/**
 * The user event rollups (issue 15): per (dataset, UTC hour or day, event type, event name) the
 * number of user events and the sum of their revenue, so that the event funnel and the revenue
 * graphs over a long range read a few thousand rows instead of millions of events
 * (store/reports/event-rollup.ts). Both stores add a batch's stored events to them in the
 * transaction that stores the batch (store/sqlite/event-rollup.ts, store/postgres/event-rollup.ts).
 * User events are never updated, and deleted only with their dataset, whose rollup rows the purge
 * deletes too: each rollup row is always the aggregate of its key's events.
 *
 * Each row also counts, apart, those of its events linked to a stored search and to a stored RAG
 * answer (`request_id` naming one of the event's own dataset, as `search_revenue` and
 * `chat_revenue` with `direct` count a purchase), and their revenue. A link holds while both the
 * event and its record are stored, so it is counted by whichever of the two is stored second (an
 * event naming a stored record; a record whose events came first, in the events' own hours) and
 * uncounted when the record goes (the retention purge; the dataset purge takes the rows).
 *
 * Unlike the search rollups (./search-rollup-batch.ts) no rollup row is read back: a batch's counts
 * are added by an upsert (`events = events + excluded.events`), which PostgreSQL's row locks make
 * atomic (only the reads that decide a link take the rollup lock: store/postgres/event-rollup.ts).
 * Keys are written in one order (sorted), so two batches touching the same keys wait for each other
 * instead of deadlocking.
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

/** A kind of record a user event links to by its `request_id`. */
export type LinkKind = 'search' | 'rag';

/** A kind of record a user event may be linked to, and the rollup columns counting the events linked to one. */
export interface EventLinkTarget {
  readonly kind: LinkKind;
  readonly table: 'search_queries' | 'rag_queries';
  /** How many of the row's events are linked to one, and the sum of their revenue. */
  readonly eventsColumn: 'search_events' | 'rag_events';
  readonly revenueColumn: 'search_revenue' | 'rag_revenue';
}

/** Events linked to a stored search. */
export const SEARCH_LINK: EventLinkTarget = { kind: 'search', table: 'search_queries', eventsColumn: 'search_events', revenueColumn: 'search_revenue' };
/** Events linked to a stored RAG answer. */
export const RAG_LINK: EventLinkTarget = { kind: 'rag', table: 'rag_queries', eventsColumn: 'rag_events', revenueColumn: 'rag_revenue' };
/** Both link targets. */
export const EVENT_LINK_TARGETS: readonly EventLinkTarget[] = [SEARCH_LINK, RAG_LINK];

/** The value columns of a rollup row, in the order every writer writes them ({@link eventValues}). */
export const EVENT_VALUE_COLUMNS = ['events', 'revenue', 'search_events', 'search_revenue', 'rag_events', 'rag_revenue'] as const;

/** The value columns holding sums of reals; the others are counts. */
export const EVENT_REAL_COLUMNS: ReadonlySet<string> = new Set(['revenue', 'search_revenue', 'rag_revenue']);

/** What the rollups need of a stored user event, as stored. */
export interface RolledEvent {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly eventType: string;
  readonly eventName: string;
  readonly revenue: number;
  /** The kinds of stored record its request id named in its dataset when it was stored (none: absent). */
  readonly links?: readonly LinkKind[];
}

/** What one batch adds to one rollup row. */
export interface EventDelta {
  readonly datasetId: string;
  readonly start: number;
  readonly eventType: string;
  readonly eventName: string;
  events: number;
  revenue: number;
  /** Of those, the events linked to each kind of record, and their revenue. */
  readonly linked: Record<LinkKind, { events: number; revenue: number }>;
}

/** A delta's values in {@link EVENT_VALUE_COLUMNS} order. */
export const eventValues = (d: EventDelta): number[] => [d.events, d.revenue, d.linked.search.events, d.linked.search.revenue, d.linked.rag.events, d.linked.rag.revenue];

/** The delta of `e`'s key of `table` in `byKey`, made empty when new. */
function deltaOf(byKey: Map<string, EventDelta>, e: RolledEvent, table: EventRollupTable): EventDelta {
  const start = periodStart(e.createdAt, table.periodMs);
  const key = JSON.stringify([e.datasetId, start, e.eventType, e.eventName]);
  let d = byKey.get(key);
  if (!d) {
    d = { datasetId: e.datasetId, start, eventType: e.eventType, eventName: e.eventName, events: 0, revenue: 0, linked: { search: { events: 0, revenue: 0 }, rag: { events: 0, revenue: 0 } } };
    byKey.set(key, d);
  }
  return d;
}

/** The deltas in key order, so that every writer touches keys in the same order. */
const inKeyOrder = (byKey: Map<string, EventDelta>): EventDelta[] => [...byKey.keys()].sort().map((k) => byKey.get(k)!);

/** The events just stored aggregated per key of `table` (with the links each has), in key order. */
export function eventRollupDeltas(events: readonly RolledEvent[], table: EventRollupTable): EventDelta[] {
  const byKey = new Map<string, EventDelta>();
  for (const e of events) {
    const d = deltaOf(byKey, e, table);
    d.events += 1;
    d.revenue += e.revenue;
    for (const kind of e.links ?? []) {
      d.linked[kind].events += 1;
      d.linked[kind].revenue += e.revenue;
    }
  }
  return inKeyOrder(byKey);
}

/**
 * The links of stored events to a record of `target` just stored (`sign` 1) or deleted (-1),
 * aggregated per key of `table`, in key order: the events themselves were already counted.
 */
export function linkedEventDeltas(events: readonly RolledEvent[], target: EventLinkTarget, sign: 1 | -1, table: EventRollupTable): EventDelta[] {
  const byKey = new Map<string, EventDelta>();
  for (const e of events) {
    const linked = deltaOf(byKey, e, table).linked[target.kind];
    linked.events += sign;
    linked.revenue += sign * e.revenue;
  }
  return inKeyOrder(byKey);
}

/**
 * The user events naming a request, to which each store adds its WHERE on `request_id`: what a
 * record's links are ({@link linkedEventsOf}).
 */
export const LINKED_EVENTS_SQL = 'SELECT request_id, dataset_id, created_at, event_type, event_name, revenue FROM user_events';

/** A row of {@link LINKED_EVENTS_SQL}. */
export type LinkedEventRow = { request_id: string; dataset_id: string; created_at: unknown; event_type: string; event_name: string; revenue: unknown };

/** The events linked to a record of `datasetId`, from the {@link LINKED_EVENTS_SQL} rows of its id: only its own dataset's. */
export function linkedEventsOf(rows: readonly LinkedEventRow[], datasetId: string): RolledEvent[] {
  return rows
    .filter((r) => r.dataset_id === datasetId)
    .map((r) => ({ datasetId, createdAt: Number(r.created_at), eventType: r.event_type, eventName: r.event_name, revenue: Number(r.revenue) }));
}

/**
 * The SET list of an upsert of {@link EVENT_VALUE_COLUMNS} adding `excluded`'s values to the stored
 * row's (`stored`: how the statement names it). A linked sum whose count comes back to zero is set
 * to zero, not left at the rounding residue of what was added and taken away.
 */
export function eventUpsertSet(stored: string): string {
  const add = (c: string): string => `${c} = ${stored}${c} + excluded.${c}`;
  return [
    add('events'),
    add('revenue'),
    ...EVENT_LINK_TARGETS.flatMap((t) => [
      add(t.eventsColumn),
      `${t.revenueColumn} = CASE WHEN ${stored}${t.eventsColumn} + excluded.${t.eventsColumn} = 0 THEN 0 ELSE ${stored}${t.revenueColumn} + excluded.${t.revenueColumn} END`,
    ]),
  ].join(', ');
}

/** The migration statement that fills `table` from the `user_events` rows already stored (events and revenue: the columns v11 made). */
export const eventRollupBackfillSql = (table: EventRollupTable): string => {
  const p = table.periodMs;
  return `INSERT INTO ${table.table} (dataset_id, ${table.column}, event_type, event_name, events, revenue)
  SELECT dataset_id, (created_at / ${p}) * ${p}, event_type, event_name, COUNT(*), SUM(revenue)
  FROM user_events GROUP BY dataset_id, (created_at / ${p}) * ${p}, event_type, event_name;`;
};

/**
 * The migration statement that sets the links to `target` of `table`'s rows (every row is already
 * there, with its events) from the stored events and records: each event naming a record of its
 * own dataset joined to it by primary key.
 */
export function eventLinkBackfillSql(table: EventRollupTable, target: EventLinkTarget): string {
  const p = table.periodMs;
  return `UPDATE ${table.table} SET ${target.eventsColumn} = x.n, ${target.revenueColumn} = x.revenue
  FROM (SELECT e.dataset_id AS dataset_id, (e.created_at / ${p}) * ${p} AS start, e.event_type AS event_type, e.event_name AS event_name,
          COUNT(*) AS n, SUM(e.revenue) AS revenue
        FROM user_events e JOIN ${target.table} l ON l.id = e.request_id AND l.dataset_id = e.dataset_id
        GROUP BY e.dataset_id, (e.created_at / ${p}) * ${p}, e.event_type, e.event_name) x
  WHERE ${table.table}.dataset_id = x.dataset_id AND ${table.table}.${table.column} = x.start AND ${table.table}.event_type = x.event_type
    AND ${table.table}.event_name = x.event_name;`;
}
