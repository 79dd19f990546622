/**
 * `head_queries` over a date range, from the searches per (hour or day, query)
 * (../search-query-periods.ts) instead of grouping every search of the range.
 *
 * The range is cut as the rollups cut it (./rollup-range.ts): whole days, whole hours, partial
 * edge hours. Each whole period is a list of queries, most searched first; the edge hours' searches
 * are read and counted here, one more list. Summing whole lists would read every query of every
 * day of the range (~12k a day at 10M events, ~1M rows for 90 days), so the page is found by the
 * threshold algorithm: read the first N rows of every list; any query seen in none of them has at
 * most T searches in the range, T the sum of each unfinished list's last count read; once the
 * (offset + limit)-th of the queries seen, ranked by their exact count (read for those queries
 * only, by the tables' primary key), has more than T, no query unseen can rank before it.
 * Otherwise N grows and the lists are read further (at worst to their ends, where T is 0). The
 * answer is the raw path's: counts exact, ties by text in code-point order.
 */
import { QUERY_DAILY, QUERY_HOURLY, type QueryPeriodTable } from '../search-query-periods.js';
import { DAILY, HOURLY } from '../search-rollup-batch.js';
import { Where, type RangeBounds, type ReportSql } from './report-sql.js';
import { planRange, rawRange, rollupSpans, spanWhere, type Span } from './rollup-range.js';
import type { ReportWindow } from './report-rows.js';
import { searchSelection, type SearchAnalyticsFilter } from './search-filter.js';
import { rollupTotals } from './search-rollup.js';
import { keyedText, rankedText } from '../text-keys.js';

/** A query text and its searches in the range. */
export interface QueryCount {
  readonly query: string;
  readonly count: number;
}

/** Lists read per statement (SQLite allows 500 terms in a compound SELECT). */
const LISTS_PER_STATEMENT = 200;
/** Query texts per statement reading their exact counts. */
const QUERIES_PER_STATEMENT = 500;
/** A list row read costs more than a search grouped (its statement, and the exact counts of the queries read): the lists are read while their rows times this stay below the range's searches. */
const GROUPED_COST = 8;
/** How much further the lists are read each round. */
const GROWTH = 4;

/** One ranked list: a period's queries, most searched first, as far as read. */
interface RankedList {
  readonly table: QueryPeriodTable;
  readonly start: number;
  /** Rows read so far. */
  read: number;
  /** The last count read (what any query not read yet has at most), 0 once the list is read to its end. */
  bound: number;
}

/** `a` before `b` in the raw path's order: most searched first, then text in code-point (UTF-8 byte) order. */
function byRank(a: { count: number; bytes: Buffer }, b: { count: number; bytes: Buffer }): number {
  return b.count - a.count || Buffer.compare(a.bytes, b.bytes);
}

/** The periods of `table` in `span` that hold searches of the dataset (from the search rollups: a few rows per period). */
async function periodsIn(sql: ReportSql, datasetId: string, table: QueryPeriodTable, span: Span): Promise<number[]> {
  const rollup = table === QUERY_DAILY ? DAILY : HOURLY;
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${rollup.column}`, span);
  const rows = await sql.all<{ start: number }>(`SELECT DISTINCT r.${rollup.column} AS start FROM ${rollup.table} r ${where.sql()}`, where.params);
  return rows.map((r) => Number(r.start));
}

/** Where a query was read: its count in each list it was read in. */
type Seen = Map<string, Map<RankedList, number>>;

/** The entry of `query` in `seen`, made empty when new. */
const seenIn = (seen: Seen, query: string): Map<RankedList, number> => seen.get(query) ?? seen.set(query, new Map()).get(query)!;

/** Each list read on to its first `rows` rows (or its end), the rows read added to `seen`, each list's bound updated. */
async function readFurther(sql: ReportSql, datasetId: string, lists: readonly RankedList[], rows: number, seen: Seen): Promise<void> {
  for (let i = 0; i < lists.length; i += LISTS_PER_STATEMENT) {
    const part = lists.slice(i, i + LISTS_PER_STATEMENT);
    const params: unknown[] = [];
    const terms = part.map((l, j) => {
      params.push(j, datasetId, l.start, rows - l.read, l.read);
      return `SELECT * FROM (SELECT CAST(? AS INTEGER) AS list, t.query AS query, t.searches AS n FROM ${l.table.table} t
        WHERE t.dataset_id = ? AND t.${l.table.column} = ? ORDER BY t.searches DESC, ${rankedText(sql.dialect, 't.query')} LIMIT ? OFFSET ?) l${j}`;
    });
    const got = await sql.all<{ list: number; query: string; n: number }>(terms.join(' UNION ALL '), params);
    const counted = part.map(() => ({ rows: 0, last: Infinity }));
    for (const r of got) {
      const c = counted[Number(r.list)]!;
      c.rows++;
      c.last = Math.min(c.last, Number(r.n));
      seenIn(seen, r.query).set(part[Number(r.list)]!, Number(r.n));
    }
    part.forEach((l, j) => {
      const c = counted[j]!;
      l.bound = c.rows < rows - l.read ? 0 : c.last;
      l.read += c.rows;
    });
  }
}

/** The searches of each of `queries` in the whole periods of the range (spans of `parts`). */
async function periodCounts(sql: ReportSql, datasetId: string, parts: readonly (readonly [QueryPeriodTable, Span])[], queries: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const key = (expr: string): string => keyedText(sql.dialect, expr);
  for (const [table, span] of parts) {
    for (let i = 0; i < queries.length; i += QUERIES_PER_STATEMENT) {
      const part = queries.slice(i, i + QUERIES_PER_STATEMENT);
      const where = new Where().add('t.dataset_id = ?', datasetId).add(`${key('t.query')} IN (${part.map(() => key('?')).join(', ')})`, ...part);
      spanWhere(where, `t.${table.column}`, span);
      const rows = await sql.all<{ query: string; n: number }>(`SELECT t.query AS query, SUM(t.searches) AS n FROM ${table.table} t ${where.sql()} GROUP BY t.query`, where.params);
      for (const r of rows) counts.set(r.query, (counts.get(r.query) ?? 0) + Number(r.n));
    }
  }
  return counts;
}

/** The searches of the range's partial edge hours, counted per query, most first (ties by text). */
async function edgeCounts(sql: ReportSql, datasetId: string, spans: readonly Span[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const span of spans) {
    const s = searchSelection(sql.dialect, datasetId, { dateRange: rawRange(span) });
    for (const r of await sql.all<{ query: string; n: number }>(`SELECT q.query AS query, COUNT(*) AS n FROM ${s.from} ${s.where.sql()} GROUP BY q.query`, s.where.params)) {
      counts.set(r.query, (counts.get(r.query) ?? 0) + Number(r.n));
    }
  }
  return counts;
}

/**
 * The queries read but not counted exactly yet that may still be among the first `wanted`: a
 * query has at least the counts read of it (and its edge count) and at most those plus the bounds
 * of the unfinished lists it was not read in; one whose most is below the `wanted`-th largest least
 * has `wanted` queries before it, and is left uncounted (a later round may count it).
 */
function unranked(seen: Seen, exact: ReadonlyMap<string, { count: number }>, edges: ReadonlyMap<string, number>, listBounds: number, wanted: number): string[] {
  const open: { query: string; least: number; most: number }[] = [];
  for (const [query, counts] of seen) {
    if (exact.has(query)) continue;
    let least = edges.get(query) ?? 0;
    let boundsRead = 0;
    for (const [list, n] of counts) {
      least += n;
      boundsRead += list.bound;
    }
    open.push({ query, least, most: least + listBounds - boundsRead });
  }
  const leasts = [...[...exact.values()].map((e) => e.count), ...open.map((o) => o.least)].sort((a, b) => b - a);
  const floor = leasts.length >= wanted ? leasts[wanted - 1]! : 0;
  return open.filter((o) => o.most >= floor).map((o) => o.query);
}

/** `head_queries` by grouping every search matching `filter`: one page, most searched first, ties by text. */
export async function groupedHeadQueries(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, page: ReportWindow): Promise<QueryCount[]> {
  const s = searchSelection(sql.dialect, datasetId, filter);
  const rows = await sql.all<{ query: string; n: number }>(
    `SELECT q.query AS query, COUNT(*) AS n FROM ${s.from} ${s.where.sql()} GROUP BY q.query ORDER BY n DESC, q.query LIMIT ? OFFSET ?`,
    [...s.where.params, page.limit, page.offset],
  );
  return rows.map((r) => ({ query: r.query, count: Number(r.n) }));
}

/**
 * `head_queries` of the dataset's searches in `dateRange` (no other filter): one page, most
 * searched first, ties by text. By grouping the range's searches instead when the lists would be
 * read about as far (a deep page over few searches: many small counts tie, and bound little);
 * `groupedCost` 0 never does (tests).
 */
export async function rangeHeadQueries(
  sql: ReportSql,
  datasetId: string,
  dateRange: RangeBounds | undefined,
  page: ReportWindow,
  groupedCost = GROUPED_COST,
): Promise<QueryCount[]> {
  const plan = planRange(dateRange, true);
  const parts = rollupSpans(plan, QUERY_DAILY, QUERY_HOURLY);
  const lists: RankedList[] = [];
  for (const [table, span] of parts) {
    for (const start of await periodsIn(sql, datasetId, table, span)) lists.push({ table, start, read: 0, bound: Infinity });
  }
  const { groups } = await rollupTotals(sql, datasetId, { dateRange }, false);
  const searches = groups.reduce((n, g) => n + g.n, 0);
  const edges = await edgeCounts(sql, datasetId, plan.raw);
  const edgeRanked = [...edges].map(([query, count]) => ({ query, count, bytes: Buffer.from(query, 'utf8') })).sort(byRank);
  const wanted = page.offset + page.limit;
  const seen: Seen = new Map();
  const exact = new Map<string, { query: string; count: number; bytes: Buffer }>();
  for (let rows = Math.max(2 * wanted, 20); ; rows *= GROWTH) {
    const unfinished = lists.filter((l) => l.bound > 0);
    if (unfinished.length * rows * groupedCost > searches) return groupedHeadQueries(sql, datasetId, { dateRange }, page);
    await readFurther(sql, datasetId, unfinished, rows, seen);
    for (const e of edgeRanked.slice(0, rows)) seenIn(seen, e.query);
    const edgeBound = edgeRanked.length > rows ? edgeRanked[rows - 1]!.count : 0;
    const listBounds = lists.reduce((t, l) => t + l.bound, 0);
    const fresh = unranked(seen, exact, edges, listBounds, wanted);
    const counted = await periodCounts(sql, datasetId, parts, fresh);
    for (const query of fresh) exact.set(query, { query, count: (counted.get(query) ?? 0) + (edges.get(query) ?? 0), bytes: Buffer.from(query, 'utf8') });
    const threshold = listBounds + edgeBound;
    const ranked = [...exact.values()].sort(byRank);
    if (threshold === 0 || (ranked.length >= wanted && ranked[wanted - 1]!.count > threshold)) {
      return ranked.slice(page.offset, wanted).map(({ query, count }) => ({ query, count }));
    }
  }
}
