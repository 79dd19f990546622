/**
 * The record rollups (issue 15): the search rollups' counterpart for RAG answers (`rag_queries`)
 * and recommendations (`recommendation_queries`), so that their graphs and funnels over a long
 * range read a few thousand rows instead of millions of records (store/reports/record-rollup.ts).
 *
 * - `record_rollup_hourly` / `_daily`: per (dataset, UTC hour or day, kind, subtype: the answer's
 *   `rag_type` or the recommendation's `recommendation_type`) the records, how many are rated
 *   (positive: rating >= 1, negative: <= 0; an answer's rating is its `query_ratings` row of kind
 *   'rag' in the same dataset, as the reports join it; recommendations are never rated) and the sum
 *   of those ratings, how many have a linked click and a linked conversion (a user event of the
 *   same dataset whose `request_id` is the record's id, store/reports/linked-events.ts), and the
 *   linked clicks that carry a position and the sum of those positions (`/events/ctr`'s average
 *   click position).
 * - `record_event_rollup_hourly` / `_daily`: per the same key and an event name, the user events
 *   linked to those records (every type, each event once), which the RAG and recommendation
 *   `event_funnel` count.
 *
 * Both stores keep them in the transaction that inserts or deletes records, stores a rating or
 * stores user events, so that each row is always the aggregate of its key's records (a key with
 * no record has no row): a record inserted after its rating or events counts them, the first
 * click (or conversion) of a stored record sets its flag, each event naming a stored record adds
 * to its name's count, and a record deleted takes its counts with it. User events are deleted only
 * with their dataset, whose rows go too.
 *
 * Every value is a count or a sum, so a change is added by an upsert (`records = records +
 * excluded.records`), keys in sorted order, and rows left without a record are deleted after. What
 * a change is depends on what is stored when it is made (a rating replaced, a flag already set),
 * read in the same transaction; PostgreSQL's writers hold the search rollups' advisory lock for
 * those reads (store/postgres/record-rollup.ts says why that is enough).
 */
import {
  countRating,
  DAY_MS,
  HOUR_MS,
  LINK_FLAGS_SQL,
  periodStart,
  type ClickPositions,
  type EventLink,
  type LinkFlags,
  type PeriodTable,
  type RatingCounts,
} from './search-rollup-batch.js';

/** Which records a rollup row counts. */
export type RecordKind = 'rag' | 'recommendation';

/** A table of records the rollups count, and what its rows are keyed and rated by. */
export interface RecordSource {
  readonly kind: RecordKind;
  readonly table: 'rag_queries' | 'recommendation_queries';
  /** The column that is the rollups' subtype. */
  readonly subtypeColumn: 'rag_type' | 'recommendation_type';
  /** The `query_ratings.kind` that rates these records; null: never rated. */
  readonly ratingKind: 'rag' | null;
}

/** RAG answers. */
export const RAG_RECORDS: RecordSource = { kind: 'rag', table: 'rag_queries', subtypeColumn: 'rag_type', ratingKind: 'rag' };
/** Recommendations. */
export const RECOMMENDATION_RECORDS: RecordSource = { kind: 'recommendation', table: 'recommendation_queries', subtypeColumn: 'recommendation_type', ratingKind: null };
/** Both record tables, in the order a request id is looked up. */
export const RECORD_SOURCES: readonly RecordSource[] = [RAG_RECORDS, RECOMMENDATION_RECORDS];

/** One record rollup table. */
export type RecordRollupTable = PeriodTable<'record_rollup_hourly' | 'record_rollup_daily'>;
/** One linked-event rollup table. */
export type RecordEventRollupTable = PeriodTable<'record_event_rollup_hourly' | 'record_event_rollup_daily'>;

/** The hourly record rollup. */
export const RECORD_HOURLY: RecordRollupTable = { table: 'record_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** The daily record rollup. */
export const RECORD_DAILY: RecordRollupTable = { table: 'record_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both record rollup tables. */
export const RECORD_ROLLUP_TABLES: readonly RecordRollupTable[] = [RECORD_HOURLY, RECORD_DAILY];
/** The hourly linked-event rollup. */
export const RECORD_EVENT_HOURLY: RecordEventRollupTable = { table: 'record_event_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** The daily linked-event rollup. */
export const RECORD_EVENT_DAILY: RecordEventRollupTable = { table: 'record_event_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both linked-event rollup tables. */
export const RECORD_EVENT_ROLLUP_TABLES: readonly RecordEventRollupTable[] = [RECORD_EVENT_HOURLY, RECORD_EVENT_DAILY];

/** A stored record as the rollups key it. */
export interface RecordKey {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly kind: RecordKind;
  readonly subtype: string;
}

/** A record inserted or deleted: its key and id. */
export interface RolledRecord extends RecordKey {
  readonly id: string;
  /** An answer's user message, as stored (for the message totals); none for recommendations. */
  readonly message?: string | null;
  /** Its user, for the per-user rollups (./user-rollup-batch.ts); absent: none. */
  readonly userId?: string | null;
}

/**
 * The all-time answers per (dataset, user message), `rag_message_totals`: `popular_chats` over a
 * dataset's whole history, unfiltered, walks its (dataset_id, answers DESC, user_message) index
 * (on PostgreSQL a prefix of the message: ./text-keys.ts) instead of grouping every answer. Kept
 * by the same statements as the record rollups (answers inserted, purged); a message with no
 * answer left has no row.
 */
export const MESSAGE_TOTALS = 'rag_message_totals';

/** What one batch adds to (or, negative, takes from) one message total. */
export interface MessageTotalDelta {
  readonly datasetId: string;
  readonly message: string;
  answers: number;
}

/** The answers among `rows` counted per (dataset, user message) (sign 1: inserted, -1: deleted), in key order. */
export function messageTotalDeltas(rows: readonly RolledRecord[], sign: 1 | -1): MessageTotalDelta[] {
  const byKey = new Map<string, MessageTotalDelta>();
  for (const r of rows) {
    if (r.kind !== 'rag' || typeof r.message !== 'string') continue;
    const key = JSON.stringify([r.datasetId, r.message]);
    const d = byKey.get(key) ?? byKey.set(key, { datasetId: r.datasetId, message: r.message, answers: 0 }).get(key)!;
    d.answers += sign;
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The migration statement that fills the message totals from the answers already stored. */
export const MESSAGE_TOTALS_BACKFILL = `INSERT INTO ${MESSAGE_TOTALS} (dataset_id, user_message, answers) SELECT dataset_id, user_message, COUNT(*) FROM rag_queries GROUP BY dataset_id, user_message;`;

/** The counted values of a rollup row, in {@link RECORD_VALUE_COLUMNS} order. */
export interface RecordCounts extends RatingCounts {
  records: number;
  clicked: number;
  converted: number;
  /** Linked clicks that carry a position, and the sum of those positions. */
  positioned: number;
  positionSum: number;
}

/** The value columns of a record rollup row. */
export const RECORD_VALUE_COLUMNS = ['records', 'rated', 'positive', 'negative', 'rating_sum', 'clicked', 'converted', 'positioned', 'position_sum'] as const;

/** A row's counts in {@link RECORD_VALUE_COLUMNS} order. */
export const recordValues = (c: RecordCounts): number[] => [c.records, c.rated, c.positive, c.negative, c.ratingSum, c.clicked, c.converted, c.positioned, c.positionSum];

const zero = (): RecordCounts => ({ records: 0, rated: 0, positive: 0, negative: 0, ratingSum: 0, clicked: 0, converted: 0, positioned: 0, positionSum: 0 });

/** What a record with `rating`, `flags` and linked click `positions` counts, `sign` times (1: inserted, -1: deleted). */
export function recordCounts(rating: number | null, flags: LinkFlags, positions: ClickPositions, sign: 1 | -1): RecordCounts {
  const c = zero();
  c.records = sign;
  countRating(c, rating, sign);
  if (flags.clicked) c.clicked = sign;
  if (flags.converted) c.converted = sign;
  c.positioned = sign * positions.positioned;
  c.positionSum = sign * positions.positionSum;
  return c;
}

/** What replacing a record's counted rating `before` by `after` changes. */
export function ratingCounts(before: number | null, after: number | null): RecordCounts {
  const c = zero();
  countRating(c, before, -1);
  countRating(c, after, 1);
  return c;
}

/** What one user event linked to a record changes in its counts ({@link eventLink}). */
export function linkCounts(link: EventLink): RecordCounts {
  return { ...zero(), clicked: link.clicked, converted: link.converted, positioned: link.positioned, positionSum: link.positionSum };
}

/** A change to the record rollups: what one record's key gains (or loses). */
export interface RecordChange {
  readonly record: RecordKey;
  readonly counts: RecordCounts;
}

/** What a transaction changes in the record rollups, gathered and then applied at once. */
export interface RecordChanges {
  readonly records: RecordChange[];
  readonly events: RecordEventChange[];
}

/** No change yet. */
export const noRecordChanges = (): RecordChanges => ({ records: [], events: [] });

/** A change to the linked-event rollups: events of one name linked to one record, gained (or lost). */
export interface RecordEventChange {
  readonly record: RecordKey;
  readonly eventName: string;
  readonly events: number;
}

/** The key of a rollup row, its period's start per `table`. */
export interface RecordRowKey {
  readonly datasetId: string;
  readonly start: number;
  readonly kind: RecordKind;
  readonly subtype: string;
}

/** What one batch adds to one record rollup row. */
export interface RecordDelta extends RecordRowKey {
  readonly counts: RecordCounts;
}

/** What one batch adds to one linked-event rollup row. */
export interface RecordEventDelta extends RecordRowKey {
  readonly eventName: string;
  events: number;
}

const rowKey = (r: RecordKey, table: PeriodTable): RecordRowKey => ({ datasetId: r.datasetId, start: periodStart(r.createdAt, table.periodMs), kind: r.kind, subtype: r.subtype });

/** The changes summed per row of `table`, in key order (every writer touches keys in the same order); all-zero sums left out. */
export function recordDeltas(changes: readonly RecordChange[], table: RecordRollupTable): RecordDelta[] {
  const byKey = new Map<string, RecordDelta>();
  for (const ch of changes) {
    const key = rowKey(ch.record, table);
    const id = JSON.stringify([key.datasetId, key.start, key.kind, key.subtype]);
    const d = byKey.get(id) ?? byKey.set(id, { ...key, counts: zero() }).get(id)!;
    for (const k of Object.keys(d.counts) as (keyof RecordCounts)[]) d.counts[k] += ch.counts[k];
  }
  return [...byKey.keys()]
    .sort()
    .map((k) => byKey.get(k)!)
    .filter((d) => Object.values(d.counts).some((v) => v !== 0));
}

/** The linked-event changes summed per row of `table`, in key order; zero sums left out. */
export function recordEventDeltas(changes: readonly RecordEventChange[], table: RecordEventRollupTable): RecordEventDelta[] {
  const byKey = new Map<string, RecordEventDelta>();
  for (const ch of changes) {
    const key = rowKey(ch.record, table);
    const id = JSON.stringify([key.datasetId, key.start, key.kind, key.subtype, ch.eventName]);
    const d = byKey.get(id) ?? byKey.set(id, { ...key, eventName: ch.eventName, events: 0 }).get(id)!;
    d.events += ch.events;
  }
  return [...byKey.keys()]
    .sort()
    .map((k) => byKey.get(k)!)
    .filter((d) => d.events !== 0);
}

/**
 * Per (request id, dataset, event name), the user events naming a request, to which each store
 * adds its WHERE on `request_id` and this GROUP BY: what a record counts in the linked-event
 * rollups (only the rows of its own dataset).
 */
export const LINKED_NAMES_SQL = 'SELECT request_id, dataset_id, event_name, COUNT(*) AS n FROM user_events';
/** The GROUP BY of {@link LINKED_NAMES_SQL}. */
export const LINKED_NAMES_GROUP = 'GROUP BY request_id, dataset_id, event_name';

/** The linked-event changes of `record` from the rows {@link LINKED_NAMES_SQL} gave for its id, `sign` times. */
export function linkedNameChanges(rows: readonly { dataset_id: string; event_name: string; n: unknown }[], record: RecordKey, sign: 1 | -1): RecordEventChange[] {
  return rows.filter((r) => r.dataset_id === record.datasetId).map((r) => ({ record, eventName: r.event_name, events: sign * Number(r.n) }));
}

/** The migration statements that fill the record rollups of `source` from the rows already stored. */
export function recordRollupBackfillSql(source: RecordSource): string {
  const rating = source.ratingKind === null ? '' : `LEFT JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = '${source.ratingKind}'`;
  // A typed NULL: PostgreSQL cannot pick SUM's overload for an untyped one.
  const value = source.ratingKind === null ? 'CAST(NULL AS INTEGER)' : 'r.rating';
  const flags = `LEFT JOIN (${LINK_FLAGS_SQL} WHERE request_id IS NOT NULL AND (event_type = 'click' OR is_conversion = 1) GROUP BY request_id, dataset_id) ev
      ON ev.request_id = q.id AND ev.dataset_id = q.dataset_id`;
  const records = RECORD_ROLLUP_TABLES.map((t) => {
    const start = `(q.created_at / ${t.periodMs}) * ${t.periodMs}`;
    return `INSERT INTO ${t.table} (dataset_id, ${t.column}, kind, subtype, ${RECORD_VALUE_COLUMNS.join(', ')})
  SELECT q.dataset_id, ${start}, '${source.kind}', q.${source.subtypeColumn}, COUNT(*), COUNT(${value}),
    SUM(CASE WHEN ${value} >= 1 THEN 1 ELSE 0 END), SUM(CASE WHEN ${value} <= 0 THEN 1 ELSE 0 END), COALESCE(SUM(${value}), 0),
    SUM(COALESCE(ev.clicked, 0)), SUM(COALESCE(ev.converted, 0)), SUM(COALESCE(ev.positioned, 0)), COALESCE(SUM(ev.position_sum), 0)
  FROM ${source.table} q ${rating} ${flags}
  GROUP BY q.dataset_id, ${start}, q.${source.subtypeColumn};`;
  });
  const events = RECORD_EVENT_ROLLUP_TABLES.map((t) => {
    const start = `(q.created_at / ${t.periodMs}) * ${t.periodMs}`;
    return `INSERT INTO ${t.table} (dataset_id, ${t.column}, kind, subtype, event_name, events)
  SELECT q.dataset_id, ${start}, '${source.kind}', q.${source.subtypeColumn}, e.event_name, COUNT(*)
  FROM ${source.table} q JOIN user_events e ON e.request_id = q.id AND e.dataset_id = q.dataset_id
  GROUP BY q.dataset_id, ${start}, q.${source.subtypeColumn}, e.event_name;`;
  });
  return [...records, ...events].join('\n');
}
