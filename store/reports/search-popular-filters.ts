/**
 * `popular_filters`: which filter conditions the dataset's searches used, counted in TypeScript
 * over the `filters` member of their stored request params (the conditions are JSON inside JSON:
 * walking them in SQL would be two dialects of JSON table functions). Only the newest
 * {@link POPULAR_FILTERS_SEARCH_CAP} matching searches are read, in slices, so one report's
 * work is bounded whatever the dataset's history.
 */
import { jsonObjectText, type ReportSql } from './report-sql.js';
import { searchSelection, type SearchAnalyticsFilter } from './search-filter.js';

/** Most searches (the newest matching ones) a popular-filters report reads. */
export const POPULAR_FILTERS_SEARCH_CAP = 100_000;

/** Searches read per statement. */
const SLICE = 2000;

/** Values shown per filter (the most used). */
const COMMON_VALUES = 10;

/**
 * Bounds of the tally, so that searches with thousands of distinct fields or values cannot grow
 * it without limit: fields and values first seen after a bound is reached are not counted.
 */
const MAX_FILTERS = 10_000;
const MAX_VALUES_PER_FILTER = 10_000;

/** The clauses of a ChunkFilter. */
const CLAUSES = ['must', 'should', 'must_not'] as const;

/** The predicates of a field condition, each one filter type. */
const FIELD_PREDICATES = ['match', 'match_any', 'match_all', 'range', 'date_range', 'boolean', 'geo_radius', 'geo_bounding_box', 'geo_polygon'] as const;

/** An id condition's lists: each a "field" of filter type {@link HAS_ID}. */
const ID_LISTS = ['ids', 'tracking_ids'] as const;

/** The filter type of an ids/tracking_ids condition. */
const HAS_ID = 'has_id';

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with object keys sorted: PostgreSQL's jsonb reorders keys, SQLite keeps them as stored. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A value as a `common_values` key: strings as they are, anything else as JSON with sorted keys (the same on both engines). */
const valueKey = (v: unknown): string => (typeof v === 'string' ? v : canonicalJson(v));

/** The values a predicate used: each element of a match list, else the predicate itself. Empty when unset. */
function predicateValues(predicate: string, v: unknown): unknown[] {
  if (v === null || v === undefined) return [];
  if (predicate.startsWith('match') || ID_LISTS.includes(predicate as (typeof ID_LISTS)[number])) return Array.isArray(v) ? v : [];
  if (predicate === 'boolean') return typeof v === 'boolean' ? [v] : [];
  return isObject(v) ? [v] : [];
}

/** The (clause, field, filter type) → values used by one search's `filters`. */
function usesOf(filters: unknown): Map<string, { clause: string; field: string; filterType: string; values: Set<string> }> {
  const uses = new Map<string, { clause: string; field: string; filterType: string; values: Set<string> }>();
  if (!isObject(filters)) return uses;
  const use = (clause: string, field: string, filterType: string, values: unknown[]) => {
    if (values.length === 0) return;
    const key = JSON.stringify([clause, field, filterType]);
    let u = uses.get(key);
    if (!u) uses.set(key, (u = { clause, field, filterType, values: new Set() }));
    for (const v of values) u.values.add(valueKey(v));
  };
  for (const clause of CLAUSES) {
    const conditions = filters[clause];
    if (!Array.isArray(conditions)) continue;
    for (const c of conditions) {
      if (!isObject(c)) continue;
      if (typeof c.field === 'string') {
        for (const p of FIELD_PREDICATES) use(clause, c.field, p, predicateValues(p, c[p]));
      } else {
        for (const list of ID_LISTS) use(clause, list, HAS_ID, predicateValues(list, c[list]));
      }
    }
  }
  return uses;
}

/** Adds one search's uses to the tally, within its bounds. */
function tallyUses(tally: Map<string, Tally>, uses: ReturnType<typeof usesOf>): void {
  for (const [key, u] of uses) {
    let t = tally.get(key);
    if (!t) {
      if (tally.size >= MAX_FILTERS) continue;
      tally.set(key, (t = { clause: u.clause, field: u.field, filterType: u.filterType, count: 0, values: new Map() }));
    }
    t.count++;
    for (const v of u.values) {
      const n = t.values.get(v);
      if (n !== undefined) t.values.set(v, n + 1);
      else if (t.values.size < MAX_VALUES_PER_FILTER) t.values.set(v, 1);
    }
  }
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The report's rows: most used first (ties by clause, field, filter type). */
function rowsOf(tally: Map<string, Tally>): PopularFilter[] {
  return [...tally.values()]
    .sort((a, b) => b.count - a.count || byText(a.clause, b.clause) || byText(a.field, b.field) || byText(a.filterType, b.filterType))
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

/** `popular_filters` over the newest {@link POPULAR_FILTERS_SEARCH_CAP} searches matching `filter`. */
export async function popularFilters(sql: ReportSql, datasetId: string, filter: SearchAnalyticsFilter): Promise<{ popular_filters: PopularFilter[] }> {
  const tally = new Map<string, Tally>();
  const filtersText = jsonObjectText(sql.dialect, 'q.request_params', 'filters');
  let after: { createdAt: number; id: string } | undefined;
  for (let read = 0; read < POPULAR_FILTERS_SEARCH_CAP; ) {
    const { from, where } = searchSelection(sql.dialect, datasetId, filter);
    // Keyset paging, newest first: a slice never re-reads or skips a search written meanwhile.
    if (after) where.add('(q.created_at < ? OR (q.created_at = ? AND q.id > ?))', after.createdAt, after.createdAt, after.id);
    const limit = Math.min(SLICE, POPULAR_FILTERS_SEARCH_CAP - read);
    const rows = await sql.all<{ id: string; created_at: number; filters: string | null }>(
      `SELECT q.id AS id, q.created_at AS created_at, ${filtersText} AS filters FROM ${from} ${where.sql()} ORDER BY q.created_at DESC, q.id LIMIT ?`,
      [...where.params, limit],
    );
    for (const r of rows) {
      if (r.filters === null) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(r.filters);
      } catch {
        // A `filters` member that is a bare string is no filter.
        continue;
      }
      tallyUses(tally, usesOf(parsed));
    }
    read += rows.length;
    if (rows.length < limit) break;
    const last = rows[rows.length - 1]!;
    after = { createdAt: Number(last.created_at), id: last.id };
  }
  return { popular_filters: rowsOf(tally) };
}
