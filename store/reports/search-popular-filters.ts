/**
 * `popular_filters`: which filter conditions the dataset's searches used (clause, field, filter
 * type: what counts is ../filter-uses.ts), by how many searches, with each one's most used values.
 *
 * When the filter is only a date range, search type and method, the count is exact over every
 * search of the range: whole days and hours from the filter rollups (../filter-rollup-batch.ts),
 * the partial edge hours (./rollup-range.ts) from the raw searches' request params. Any other
 * filter (query, rating, top score, component) narrows the searches below what the rollups key,
 * so those reports walk the raw searches, in TypeScript (the conditions are JSON inside JSON:
 * walking them in SQL would be two dialects of JSON table functions), and only the newest
 * {@link POPULAR_FILTERS_SEARCH_CAP} matching ones, so one report's work is bounded whatever the
 * dataset's history.
 */
import { FILTER_DAILY, FILTER_HOURLY } from '../filter-rollup-batch.js';
import { usesOfFiltersText, type FilterUse } from '../filter-uses.js';
import { jsonObjectText, Where, type ReportSql } from './report-sql.js';
import { planRange, rawRange, rollupSpans, spanWhere, type Span } from './rollup-range.js';
import { rollupServes } from './search-rollup.js';
import { searchSelection, type SearchAnalyticsFilter } from './search-filter.js';

/** Most searches (the newest matching ones) a report the rollups cannot serve reads. */
export const POPULAR_FILTERS_SEARCH_CAP = 100_000;

/** Searches read per statement. */
const SLICE = 2000;

/** Values shown per filter (the most used). */
const COMMON_VALUES = 10;

/** Filters shown (the most used). */
const MAX_FILTERS = 10_000;

/**
 * Bound of the capped raw walk's tally, so that its 100,000 searches' thousands of distinct
 * values cannot grow it without limit: values first seen after it is reached are not counted.
 */
const MAX_VALUES_PER_FILTER = 10_000;

/** One row of the report. */
export interface PopularFilter {
  readonly clause: string;
  readonly field: string;
  readonly filter_type: string;
  /** Searches that used this (clause, field, filter type). */
  readonly count: number;
  /** The most used values (each counted once per search), by how many searches used them. */
  readonly common_values: Record<string, number>;
}

interface Tally {
  readonly clause: string;
  readonly field: string;
  readonly filterType: string;
  count: number;
  readonly values: Map<string, number>;
}

/** The tally of (clause, field, filter type) `u`, made empty when new. */
function tallyOf(tally: Map<string, Tally>, u: { clause: string; field: string; filterType: string }): Tally {
  const key = JSON.stringify([u.clause, u.field, u.filterType]);
  let t = tally.get(key);
  if (!t) tally.set(key, (t = { clause: u.clause, field: u.field, filterType: u.filterType, count: 0, values: new Map() }));
  return t;
}

/** Adds `n` searches of value `v` to `t` (with `bounded`, none once it holds {@link MAX_VALUES_PER_FILTER} others). */
function addValue(t: Tally, v: string, n: number, bounded: boolean): void {
  const was = t.values.get(v);
  if (was !== undefined) t.values.set(v, was + n);
  else if (!bounded || t.values.size < MAX_VALUES_PER_FILTER) t.values.set(v, n);
}

/** Adds one search's uses to the tally (with `bounded`, within the capped walk's bound on fields and values). */
function tallyUses(tally: Map<string, Tally>, uses: readonly FilterUse[], bounded: boolean): void {
  for (const u of uses) {
    if (bounded && tally.size >= MAX_FILTERS && !tally.has(JSON.stringify([u.clause, u.field, u.filterType]))) continue;
    const t = tallyOf(tally, u);
    t.count++;
    for (const v of u.values) addValue(t, v, 1, bounded);
  }
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The report's rows: the most used first (ties by clause, field, filter type), at most {@link MAX_FILTERS}. */
function rowsOf(tally: Map<string, Tally>): PopularFilter[] {
  return [...tally.values()]
    .filter((t) => t.count > 0)
    .sort((a, b) => b.count - a.count || byText(a.clause, b.clause) || byText(a.field, b.field) || byText(a.filterType, b.filterType))
    .slice(0, MAX_FILTERS)
    .map((t) => ({
      clause: t.clause,
      field: t.field,
      filter_type: t.filterType,
      count: t.count,
      common_values: Object.fromEntries(
        [...t.values]
          .sort((a, b) => b[1] - a[1] || byText(a[0], b[0]))
          .slice(0, COMMON_VALUES),
      ),
    }));
}

type FiltersRow = { id: string; created_at: number; filters: string | null };

/** The `filters` text of the searches of `from`/`where`, newest first, after the keyset `after`, at most `limit`. */
function readFilters(sql: ReportSql, selection: ReturnType<typeof searchSelection>, after: { createdAt: number; id: string } | undefined, limit: number) {
  const { from, where } = selection;
  // Keyset paging, newest first: a slice never re-reads or skips a search written meanwhile.
  if (after) where.add('(q.created_at < ? OR (q.created_at = ? AND q.id > ?))', after.createdAt, after.createdAt, after.id);
  return sql.all<FiltersRow>(
    `SELECT q.id AS id, q.created_at AS created_at, ${jsonObjectText(sql.dialect, 'q.request_params', 'filters')} AS filters FROM ${from} ${where.sql()}
     ORDER BY q.created_at DESC, q.id LIMIT ?`,
    [...where.params, limit],
  );
}

/** Walks the searches matching `filter`, newest first, at most `cap` of them, adding each one's uses to `tally`. */
async function tallyRaw(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter, cap: number, tally: Map<string, Tally>): Promise<void> {
  const bounded = Number.isFinite(cap);
  let after: { createdAt: number; id: string } | undefined;
  for (let read = 0; read < cap; ) {
    const limit = Math.min(SLICE, cap - read);
    const rows = await readFilters(sql, searchSelection(sql.dialect, datasetId, filter), after, limit);
    for (const r of rows) if (r.filters !== null) tallyUses(tally, usesOfFiltersText(r.filters), bounded);
    read += rows.length;
    if (rows.length < limit) return;
    const last = rows[rows.length - 1]!;
    after = { createdAt: Number(last.created_at), id: last.id };
  }
}

type RollupRow = { clause: string; field: string; filter_type: string; value: string | null; n: number };

/** The filter rollups' counts over whole days and hours of `span`, per (clause, field, filter type) and per value. */
function readRollup(sql: ReportSql, table: typeof FILTER_DAILY, datasetId: string, filter: SearchAnalyticsFilter, span: Span): Promise<RollupRow[]> {
  const where = spanWhere(new Where().add('r.dataset_id = ?', datasetId), `r.${table.column}`, span);
  if (filter.searchType !== undefined) where.add('r.search_type = ?', filter.searchType);
  if (filter.searchMethod !== undefined) where.add('r.search_method = ?', filter.searchMethod);
  return sql.all<RollupRow>(
    `SELECT r.clause AS clause, r.field AS field, r.filter_type AS filter_type, r.value AS value, SUM(r.searches) AS n FROM ${table.table} r ${where.sql()}
     GROUP BY r.clause, r.field, r.filter_type, r.value`,
    where.params,
  );
}

/** `popular_filters` over the searches matching `filter` (see the module comment for which are read). */
export async function popularFilters(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter): Promise<{ popular_filters: PopularFilter[] }> {
  const tally = new Map<string, Tally>();
  if (!rollupServes(filter)) {
    await tallyRaw(sql, datasetId, filter, POPULAR_FILTERS_SEARCH_CAP, tally);
    return { popular_filters: rowsOf(tally) };
  }
  const plan = planRange(filter.dateRange, true);
  const reads = rollupSpans(plan, FILTER_DAILY, FILTER_HOURLY).map(([table, span]) => readRollup(sql, table, datasetId, filter, span));
  // Edge hours: at most two partial hours of searches, every one of them read.
  const edges = plan.raw.map((span) =>
    tallyRaw(sql, datasetId, { searchType: filter.searchType, searchMethod: filter.searchMethod, dateRange: rawRange(span) }, Infinity, tally),
  );
  const rollups = await Promise.all(reads);
  await Promise.all(edges);
  for (const rows of rollups) {
    for (const r of rows) {
      const t = tallyOf(tally, { clause: r.clause, field: r.field, filterType: r.filter_type });
      if (r.value === null) t.count += Number(r.n);
      else addValue(t, r.value, Number(r.n), false);
    }
  }
  return { popular_filters: rowsOf(tally) };
}
