/**
 * The search rollups (issue 15): per (dataset, UTC hour or day, search type, search method) the
 * number of searches, their latency sum, a latency histogram (./latency-histogram.ts), how many
 * of them are rated (positive: rating >= 1, negative: <= 0; a search's rating is its
 * `query_ratings` row of kind 'search' in the same dataset, as the reports join it) and the sum of
 * those ratings, and how many have at least one linked click and one linked conversion (a user
 * event of the same dataset whose `request_id` is the search's id, as store/reports/linked-events.ts
 * counts it), so that
 * the search reports over a long range read a few thousand rows instead of millions
 * (store/reports/search-rollup.ts). Both stores keep them in the transaction that inserts or
 * deletes rows of `search_queries`, so the invariant always holds: each rollup row is the
 * aggregate of the raw rows of its key, and a key with no raw row has no rollup row.
 *
 * The same holds for ratings: storing a rating of a stored search moves its counts, and a
 * search inserted after its rating counts it. And for linked events: the first click (or
 * conversion) of a stored search moves its row's count, a search inserted after its events counts
 * them, and a search deleted takes its flags with it. User events are deleted only with their
 * dataset, whose rollup rows go too.
 *
 * Here: the two tables, and the batch-side arithmetic both stores share (a batch of inserted or
 * deleted rows, or of rating changes, aggregated per key and merged into the stored row). Each
 * store reads the stored rows of a batch's keys, merges, and writes them back
 * (store/sqlite/search-rollup.ts, store/postgres/search-rollup.ts).
 *
 * Why the histogram is JSON text of the non-empty buckets, not a column per bucket or a child
 * table: a report over months reads ~90 day rows per (type, method) and merges their few hundred
 * buckets in JS in milliseconds; ~900 bucket columns would be summed column by column in SQL
 * (slower to read, and to write a row), and a child table holds a row per non-empty bucket, as
 * many as the raw searches at hourly resolution. The price is a read-modify-write per key, which
 * SQLite's single writer serializes, and PostgreSQL under an advisory lock.
 */
import { addHistogram, encodeHistogram, latencyBucket, latencyBucketSql, type LatencyHistogram } from './latency-histogram.js';

/** An hour, in ms. */
export const HOUR_MS = 3_600_000;
/** A day, in ms. */
export const DAY_MS = 86_400_000;

/** A rollup table (search or user event rollups): its name, the column holding its period's start (epoch ms, UTC), and the period. */
export interface PeriodTable<Name extends string = string> {
  readonly table: Name;
  readonly column: 'hour' | 'day';
  readonly periodMs: number;
}

/** One search rollup table. */
export type RollupTable = PeriodTable<'search_rollup_hourly' | 'search_rollup_daily'>;

/** The hourly rollup (graphs are bucketed from it) and the daily one (whole days of the totals and percentiles). */
export const HOURLY: RollupTable = { table: 'search_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** See {@link HOURLY}. */
export const DAILY: RollupTable = { table: 'search_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both rollup tables. */
export const ROLLUP_TABLES: readonly RollupTable[] = [HOURLY, DAILY];

/** The start of the period holding `ms`, as SQL computes it (`(created_at / p) * p`, integer division truncating). */
export const periodStart = (ms: number, periodMs: number): number => Math.trunc(ms / periodMs) * periodMs;

/** The key fields of a `search_queries` row, as stored. */
export interface RollupKey {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly searchType: string;
  readonly searchMethod: string;
}

/** Whether a search has a linked click and a linked conversion (see the module comment). */
export interface LinkFlags {
  readonly clicked: boolean;
  readonly converted: boolean;
}

/** No linked event. */
export const NO_LINKS: LinkFlags = { clicked: false, converted: false };

/** What a rollup needs of a `search_queries` row, as stored. */
export interface RollupSearch extends RollupKey, LinkFlags, ClickPositions {
  readonly latency: number;
  /** The search's rating as the reports count it (see the module comment), or null. */
  readonly rating: number | null;
}

/** A `search_queries` row as a writer has it, before its rating is looked up by its id. */
export interface UnratedSearch extends RollupKey {
  readonly id: string;
  readonly latency: number;
  /** The query text, for the query totals. */
  readonly query: string;
  /** Its user, for the per-user rollups (../user-rollup-batch.ts); absent: none. */
  readonly userId?: string | null;
}

/**
 * The all-time searches per (dataset, query text), `search_query_totals`: `head_queries` over a
 * dataset's whole history, unfiltered, walks its (dataset_id, searches DESC, query) index (on
 * PostgreSQL a prefix of the query: ./text-keys.ts) instead of grouping millions of searches.
 * Written beside the rollups, by the same statements, so it is always the count of the stored
 * searches of each query; a query with none left has no row.
 */
export const QUERY_TOTALS = 'search_query_totals';

/** What one batch adds to (or, negative, takes from) one query total. */
export interface QueryTotalDelta {
  readonly datasetId: string;
  readonly query: string;
  readonly searches: number;
}

/** The rows counted per (dataset, query) (sign 1: inserted, -1: deleted), in key order. */
export function queryTotalDeltas(rows: readonly { datasetId: string; query: string }[], sign: 1 | -1): QueryTotalDelta[] {
  const byKey = new Map<string, { datasetId: string; query: string; searches: number }>();
  for (const r of rows) {
    const key = JSON.stringify([r.datasetId, r.query]);
    const d = byKey.get(key) ?? byKey.set(key, { datasetId: r.datasetId, query: r.query, searches: 0 }).get(key)!;
    d.searches += sign;
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The migration statement that fills the query totals from the searches already stored. */
export const QUERY_TOTALS_BACKFILL = `INSERT INTO ${QUERY_TOTALS} (dataset_id, query, searches) SELECT dataset_id, query, COUNT(*) FROM search_queries GROUP BY dataset_id, query;`;

/** A search's counted rating replaced (a rating stored for a search already stored). */
export interface RatingChange {
  readonly search: RollupKey;
  readonly before: number | null;
  readonly after: number | null;
}

/** A stored search's flags changed by user events just stored (each 1: now set; 0: unchanged), and the positions of its clicks among them. */
export interface LinkChange extends EventLink {
  readonly search: RollupKey;
}

/** A user event as the link flags see it. */
export interface LinkingEvent {
  readonly datasetId: string;
  readonly eventType: string;
  readonly isConversion: boolean | null | undefined;
  readonly requestId: string | null | undefined;
  /** The position as stored (a click's counts toward the average click position). */
  readonly position?: number | null;
}

/** The position `e` adds to its record's click positions: a click's, when it has one. */
const clickPosition = (e: LinkingEvent): number | null => (e.eventType === 'click' && typeof e.position === 'number' ? e.position : null);

/** What one stored event changes for the record it names: its flags set now (1), and its click position. */
export interface EventLink extends ClickPositions {
  readonly clicked: 0 | 1;
  readonly converted: 0 | 1;
}

/**
 * What storing `e` changes for a record whose flags were `was` (the stored events', and the
 * batch's earlier ones): the first click or conversion sets a flag, a click with a position adds
 * it; undefined when nothing changes.
 */
export function eventLink(was: LinkFlags, e: LinkingEvent): EventLink | undefined {
  const clicked = !was.clicked && e.eventType === 'click' ? 1 : 0;
  const converted = !was.converted && e.isConversion === true ? 1 : 0;
  const position = clickPosition(e);
  if (clicked + converted === 0 && position === null) return undefined;
  return { clicked, converted, ...(position === null ? NO_POSITIONS : { positioned: 1, positionSum: position }) };
}

/** The flags after `link` (none: unchanged). */
export const flagsAfter = (was: LinkFlags, link: EventLink | undefined): LinkFlags =>
  link ? { clicked: was.clicked || link.clicked === 1, converted: was.converted || link.converted === 1 } : was;

/** Whether `e` can set a flag of the search it names: a click or a conversion with a request id. */
export const linksSearch = (e: LinkingEvent): boolean => typeof e.requestId === 'string' && (e.eventType === 'click' || e.isConversion === true);

/**
 * The aggregate of user events behind the flags, to which each store adds its WHERE (the events of
 * some request ids) and `GROUP BY request_id, dataset_id`: per (request id, dataset), whether a
 * click and a conversion are among them (0/1).
 */
export const LINK_FLAGS_SQL = `SELECT request_id, dataset_id, MAX(CASE WHEN event_type = 'click' THEN 1 ELSE 0 END) AS clicked,
  MAX(CASE WHEN is_conversion = 1 THEN 1 ELSE 0 END) AS converted,
  COUNT(CASE WHEN event_type = 'click' THEN position END) AS positioned, SUM(CASE WHEN event_type = 'click' THEN position END) AS position_sum FROM user_events`;

/** The positions of a record's linked clicks: how many clicks carry one, and their sum (for the average click position). */
export interface ClickPositions {
  readonly positioned: number;
  readonly positionSum: number;
}

/** No positioned click. */
export const NO_POSITIONS: ClickPositions = { positioned: 0, positionSum: 0 };

/** The click positions a record of `datasetId` counts, from the {@link LINK_FLAGS_SQL} rows of its id (only its own dataset's events). */
export function countedPositions(rows: readonly { dataset_id: string; positioned?: unknown; position_sum?: unknown }[], datasetId: string): ClickPositions {
  const row = rows.find((r) => r.dataset_id === datasetId);
  return row ? { positioned: Number(row.positioned ?? 0), positionSum: Number(row.position_sum ?? 0) } : NO_POSITIONS;
}

/**
 * The flags a search of `searchDatasetId` has, given the aggregate of the user events naming its id
 * (`clicked`, `converted`: 0/1 or null when none, per dataset of the events; see the SQL of each
 * store): only events of the search's own dataset count.
 */
export function countedFlags(rows: readonly { dataset_id: string; clicked: unknown; converted: unknown }[], searchDatasetId: string): LinkFlags {
  const row = rows.find((r) => r.dataset_id === searchDatasetId);
  return row ? { clicked: Number(row.clicked ?? 0) > 0, converted: Number(row.converted ?? 0) > 0 } : NO_LINKS;
}

/** The change one batch makes to one rollup row. */
export interface RollupDelta {
  readonly datasetId: string;
  readonly start: number;
  readonly searchType: string;
  readonly searchMethod: string;
  searches: number;
  latencySum: number;
  readonly histogram: LatencyHistogram;
  rated: number;
  positive: number;
  negative: number;
  ratingSum: number;
  clicked: number;
  converted: number;
  positioned: number;
  positionSum: number;
}

/** The stored columns of a rollup row after its key, in the order every writer reads and writes them. */
export const ROLLUP_VALUE_COLUMNS = 'searches, latency_sum, latency_histogram, rated, positive, negative, rating_sum, clicked, converted, positioned, position_sum';

/** A rollup row as stored (column names). */
export interface StoredRollup {
  readonly searches: number;
  readonly latency_sum: number;
  readonly latency_histogram: string;
  readonly rated: number;
  readonly positive: number;
  readonly negative: number;
  readonly rating_sum: number;
  readonly clicked: number;
  readonly converted: number;
  readonly positioned: number;
  readonly position_sum: number;
}

/** A rollup row to write back. */
export interface MergedRollup {
  readonly searches: number;
  readonly latencySum: number;
  readonly histogram: string;
  readonly rated: number;
  readonly positive: number;
  readonly negative: number;
  readonly ratingSum: number;
  readonly clicked: number;
  readonly converted: number;
  readonly positioned: number;
  readonly positionSum: number;
}

/** A merged row's values in {@link ROLLUP_VALUE_COLUMNS} order. */
export const mergedValues = (m: MergedRollup): (number | string)[] => [
  m.searches,
  m.latencySum,
  m.histogram,
  m.rated,
  m.positive,
  m.negative,
  m.ratingSum,
  m.clicked,
  m.converted,
  m.positioned,
  m.positionSum,
];

/** The delta of `row`'s key in `byKey`, made empty when new. */
function deltaOf(byKey: Map<string, RollupDelta>, row: RollupKey, table: RollupTable): RollupDelta {
  const start = periodStart(row.createdAt, table.periodMs);
  const key = JSON.stringify([row.datasetId, start, row.searchType, row.searchMethod]);
  let d = byKey.get(key);
  if (!d) {
    d = {
      datasetId: row.datasetId,
      start,
      searchType: row.searchType,
      searchMethod: row.searchMethod,
      searches: 0,
      latencySum: 0,
      histogram: new Map(),
      rated: 0,
      positive: 0,
      negative: 0,
      ratingSum: 0,
      clicked: 0,
      converted: 0,
      positioned: 0,
      positionSum: 0,
    };
    byKey.set(key, d);
  }
  return d;
}

/** The rating counts of a rollup row (search or record rollups). */
export interface RatingCounts {
  rated: number;
  positive: number;
  negative: number;
  ratingSum: number;
}

/** Counts a rating (none for null) `sign` times into `d`, as the reports count it. */
export function countRating(d: RatingCounts, rating: number | null, sign: number): void {
  if (rating === null) return;
  d.rated += sign;
  d.ratingSum += sign * rating;
  if (rating >= 1) d.positive += sign;
  if (rating <= 0) d.negative += sign;
}

/** The deltas in key order, so that every writer touches keys in the same order. */
const inKeyOrder = (byKey: Map<string, RollupDelta>): RollupDelta[] => [...byKey.keys()].sort().map((k) => byKey.get(k)!);

/** The rows aggregated per key of `table` (sign 1: inserted, -1: deleted), in key order. */
export function rollupDeltas(rows: readonly RollupSearch[], table: RollupTable, sign: 1 | -1): RollupDelta[] {
  const byKey = new Map<string, RollupDelta>();
  for (const r of rows) {
    const d = deltaOf(byKey, r, table);
    d.searches += sign;
    d.latencySum += sign * r.latency;
    const b = latencyBucket(r.latency);
    d.histogram.set(b, (d.histogram.get(b) ?? 0) + sign);
    countRating(d, r.rating, sign);
    if (r.clicked) d.clicked += sign;
    if (r.converted) d.converted += sign;
    d.positioned += sign * r.positioned;
    d.positionSum += sign * r.positionSum;
  }
  return inKeyOrder(byKey);
}

/** Flag changes aggregated per key of `table`, in key order. */
export function linkDeltas(changes: readonly LinkChange[], table: RollupTable): RollupDelta[] {
  const byKey = new Map<string, RollupDelta>();
  for (const c of changes) {
    const d = deltaOf(byKey, c.search, table);
    d.clicked += c.clicked;
    d.converted += c.converted;
    d.positioned += c.positioned;
    d.positionSum += c.positionSum;
  }
  return inKeyOrder(byKey);
}

/** Rating changes aggregated per key of `table`, in key order. */
export function ratingDeltas(changes: readonly RatingChange[], table: RollupTable): RollupDelta[] {
  const byKey = new Map<string, RollupDelta>();
  for (const c of changes) {
    const d = deltaOf(byKey, c.search, table);
    countRating(d, c.before, -1);
    countRating(d, c.after, 1);
  }
  return inKeyOrder(byKey);
}

/**
 * The rating a record of `datasetId` counts, given its `query_ratings` row (if any): the row's
 * rating when it is of `kind` (a search's by default, or a RAG answer's) in the same dataset, else
 * null (as the reports join it).
 */
export const countedRating = (
  row: { kind: string; datasetId: string; rating: number } | undefined,
  datasetId: string,
  kind: 'search' | 'rag' = 'search',
): number | null => (row && row.kind === kind && row.datasetId === datasetId ? Number(row.rating) : null);

/** The stored row (or none) with `delta` applied; null when no search is left (the row is deleted). */
export function mergeRollup(stored: StoredRollup | undefined, delta: RollupDelta): MergedRollup | null {
  const searches = Number(stored?.searches ?? 0) + delta.searches;
  if (searches <= 0) return null;
  const histogram = new Map(delta.histogram);
  if (stored) addHistogram(histogram, stored.latency_histogram);
  return {
    searches,
    latencySum: Number(stored?.latency_sum ?? 0) + delta.latencySum,
    histogram: encodeHistogram(histogram),
    rated: Number(stored?.rated ?? 0) + delta.rated,
    positive: Number(stored?.positive ?? 0) + delta.positive,
    negative: Number(stored?.negative ?? 0) + delta.negative,
    ratingSum: Number(stored?.rating_sum ?? 0) + delta.ratingSum,
    clicked: Number(stored?.clicked ?? 0) + delta.clicked,
    converted: Number(stored?.converted ?? 0) + delta.converted,
    positioned: Number(stored?.positioned ?? 0) + delta.positioned,
    positionSum: Number(stored?.position_sum ?? 0) + delta.positionSum,
  };
}

/**
 * The migration statement that fills `table` from the `search_queries` rows already stored (the
 * same rows incremental writes give, up to the order of the latency sum's additions). Without
 * `withPositions`, the columns before the click positions (for the migration that ran before
 * those columns existed; {@link positionsBackfillSql} fills them after).
 */
export function rollupBackfillSql(table: RollupTable, dialect: 'sqlite' | 'postgres', withPositions = true): string {
  const p = table.periodMs;
  const concat = (item: string): string => (dialect === 'sqlite' ? `group_concat(${item}, ',' ORDER BY b)` : `string_agg(${item}, ',' ORDER BY b)`);
  const columns = withPositions ? ROLLUP_VALUE_COLUMNS : ROLLUP_VALUE_COLUMNS.replace(', positioned, position_sum', '');
  return `INSERT INTO ${table.table} (dataset_id, ${table.column}, search_type, search_method, ${columns})
  SELECT dataset_id, start, search_type, search_method, SUM(n), SUM(total), '[' || ${concat(`CAST(b AS TEXT) || ',' || CAST(n AS TEXT)`)} || ']',
    SUM(rated), SUM(positive), SUM(negative), SUM(rating_total), SUM(clicked), SUM(converted)${withPositions ? ', SUM(positioned), SUM(position_sum)' : ''}
  FROM (SELECT dataset_id, (created_at / ${p}) * ${p} AS start, search_type, search_method, b, COUNT(*) AS n, SUM(latency) AS total,
          COUNT(rating) AS rated, SUM(CASE WHEN rating >= 1 THEN 1 ELSE 0 END) AS positive, SUM(CASE WHEN rating <= 0 THEN 1 ELSE 0 END) AS negative,
          COALESCE(SUM(rating), 0) AS rating_total, SUM(clicked) AS clicked, SUM(converted) AS converted, SUM(positioned) AS positioned,
          SUM(position_sum) AS position_sum
        FROM (SELECT q.dataset_id, q.created_at, q.search_type, q.search_method, q.latency, r.rating, ${latencyBucketSql('q.latency')} AS b,
                COALESCE(ev.clicked, 0) AS clicked, COALESCE(ev.converted, 0) AS converted, COALESCE(ev.positioned, 0) AS positioned,
                COALESCE(ev.position_sum, 0) AS position_sum
              FROM search_queries q LEFT JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = 'search'
              LEFT JOIN (${LINK_FLAGS_SQL} WHERE request_id IS NOT NULL AND (event_type = 'click' OR is_conversion = 1) GROUP BY request_id, dataset_id) ev
                ON ev.request_id = q.id AND ev.dataset_id = q.dataset_id) raw
        GROUP BY dataset_id, (created_at / ${p}) * ${p}, search_type, search_method, b) per_bucket
  GROUP BY dataset_id, start, search_type, search_method;`;
}

/**
 * The migration statement that sets the click positions of `table`'s rows from the clicks already
 * stored (the rest of each row is already right): the clicks walked once, each joined to its search
 * by primary key, instead of refilling every row.
 */
export function positionsBackfillSql(table: RollupTable): string {
  const p = table.periodMs;
  return `UPDATE ${table.table} SET positioned = x.positioned, position_sum = x.position_sum
  FROM (SELECT q.dataset_id AS dataset_id, (q.created_at / ${p}) * ${p} AS start, q.search_type AS search_type, q.search_method AS search_method,
          COUNT(e.position) AS positioned, SUM(e.position) AS position_sum
        FROM user_events e JOIN search_queries q ON q.id = e.request_id AND q.dataset_id = e.dataset_id
        WHERE e.event_type = 'click' AND e.position IS NOT NULL
        GROUP BY q.dataset_id, (q.created_at / ${p}) * ${p}, q.search_type, q.search_method) x
  WHERE ${table.table}.dataset_id = x.dataset_id AND ${table.table}.${table.column} = x.start AND ${table.table}.search_type = x.search_type
    AND ${table.table}.search_method = x.search_method;`;
}
