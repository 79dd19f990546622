/**
 * Contract of the filter rollups on both stores (store/filter-rollup-batch.ts): after seeded
 * random batches of searches with filters (redelivered batches, ids repeated within a batch,
 * request params without filters or not JSON objects, fields longer than a PostgreSQL index
 * entry, values past the per-search bounds, the NUL escape), a retention purge and a dataset
 * purge, the rollup rows are the aggregate of the stored searches (and what the migration's fill
 * computes from them), and `popular_filters` gives, for aligned and unaligned ranges, types and
 * methods, the figures of every stored search of the range, as the raw walk gives them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import { FILTER_ROLLUP_TABLES, filterRollupDeltas, type FilteredSearch } from '../../store/filter-rollup-batch.js';
import { MAX_VALUE_LENGTH, MAX_VALUES_PER_SEARCH, usesOfParams } from '../../store/filter-uses.js';
import { clientSql } from '../../store/postgres/database.js';
import { fillPgFilterRollup } from '../../store/postgres/filter-rollup.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { popularFilters, type PopularFilter } from '../../store/reports/search-popular-filters.js';
import type { SearchFilterType, SearchMethod } from '../../store/reports/search-filter.js';
import type { Store } from '../../store/repository.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { fillSqliteFilterRollup } from '../../store/sqlite/filter-rollup.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import type { StoreLocation } from '../helpers/store-snapshot.js';
import { searchRecord } from '../helpers/analytics-record.js';
import { rng } from '../helpers/random-corpus.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const KINDS: SearchFilterType[] = ['search', 'autocomplete', 'search_over_groups'];
const METHODS: SearchMethod[] = ['bm25', 'hybrid', 'semantic'];
const FIELDS = ['tag_set', 'metadata.color', 'num_value', 'time_stamp', 'location', 'metadata.é'];
const TAGS = ['red', 'green', 'blue', 'x', 'y', '\u{1F600}', '\uFFFD', 'a\u0000b'];
/** Five days across a month's end. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;
/** A field longer than a PostgreSQL index entry (2704 bytes): 1500 three-byte characters. */
const LONG_FIELD = 'ø€'.repeat(750);

/** A rollup row, comparable. */
type Row = { key: string; searches: number };

const byKey = (a: Row, b: Row): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const rowOf = (table: string, column: string, r: Record<string, any>): Row => ({
  key: `${table}|${r.dataset_id}|${Number(r[column])}|${r.search_type}|${r.search_method}|${r.key}|${r.clause}|${r.field}|${r.filter_type}|${r.value}`,
  searches: Number(r.searches),
});

async function rollupRows(store: Store): Promise<Row[]> {
  const out: Row[] = [];
  for (const t of FILTER_ROLLUP_TABLES) out.push(...(await store.reports.all(`SELECT * FROM ${t.table}`, [])).map((r) => rowOf(t.table, t.column, r)));
  return out.sort(byKey);
}

/** The stored searches, as the rollups see them. */
async function storedSearches(store: Store): Promise<FilteredSearch[]> {
  return (
    await store.reports.all('SELECT dataset_id, created_at, search_type, search_method, request_params FROM search_queries', [])
  ).map((r) => ({ datasetId: String(r.dataset_id), createdAt: Number(r.created_at), searchType: String(r.search_type), searchMethod: String(r.search_method), requestParams: String(r.request_params) }));
}

/** The rollup rows the stored searches call for, computed here. */
async function expectedRows(store: Store): Promise<Row[]> {
  const searches = await storedSearches(store);
  return FILTER_ROLLUP_TABLES.flatMap((t) =>
    filterRollupDeltas(searches, t, 1).map((d) =>
      rowOf(t.table, t.column, { ...d, dataset_id: d.datasetId, [t.column]: d.start, search_type: d.searchType, search_method: d.searchMethod, filter_type: d.filterType }),
    ),
  ).sort(byKey);
}

/** What the migration's fill computes from the searches stored now, in a transaction rolled back. */
async function filled(loc: StoreLocation): Promise<Row[]> {
  const rows = await readInRolledBackTx(
    loc,
    [...FILTER_ROLLUP_TABLES.map((t) => `DELETE FROM ${t.table}`), { sqlite: fillSqliteFilterRollup, postgres: (c) => fillPgFilterRollup(clientSql(c)) }],
    FILTER_ROLLUP_TABLES.map((t) => `SELECT * FROM ${t.table}`),
  );
  return FILTER_ROLLUP_TABLES.flatMap((t, i) => rows[i]!.map((r) => rowOf(t.table, t.column, r))).sort(byKey);
}

const inRange = (at: number, r: RangeBounds | undefined): boolean =>
  !r || ((r.gte === undefined || at >= r.gte) && (r.gt === undefined || at > r.gt) && (r.lt === undefined || at < r.lt) && (r.lte === undefined || at <= r.lte));

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The report computed here from every stored search of the range, type and method. */
async function oracle(store: Store, datasetId: string, filter: { dateRange?: RangeBounds; searchType?: string; searchMethod?: string }): Promise<PopularFilter[]> {
  const tally = new Map<string, { clause: string; field: string; filter_type: string; count: number; values: Map<string, number> }>();
  for (const s of await storedSearches(store)) {
    if (s.datasetId !== datasetId || !inRange(s.createdAt, filter.dateRange)) continue;
    if ((filter.searchType !== undefined && s.searchType !== filter.searchType) || (filter.searchMethod !== undefined && s.searchMethod !== filter.searchMethod)) continue;
    for (const u of usesOfParams(s.requestParams)) {
      const key = JSON.stringify([u.clause, u.field, u.filterType]);
      const t = tally.get(key) ?? tally.set(key, { clause: u.clause, field: u.field, filter_type: u.filterType, count: 0, values: new Map() }).get(key)!;
      t.count++;
      for (const v of u.values) t.values.set(v, (t.values.get(v) ?? 0) + 1);
    }
  }
  return [...tally.values()]
    .sort((a, b) => b.count - a.count || byText(a.clause, b.clause) || byText(a.field, b.field) || byText(a.filter_type, b.filter_type))
    .map((t) => ({
      clause: t.clause,
      field: t.field,
      filter_type: t.filter_type,
      count: t.count,
      common_values: Object.fromEntries([...t.values].sort((a, b) => b[1] - a[1] || byText(a[0], b[0])).slice(0, 10)),
    }));
}

/** A report's rows with their common values as ordered entries (key order matters). */
const ordered = (rows: readonly PopularFilter[]) => rows.map((f) => ({ ...f, common_values: Object.entries(f.common_values) }));

describe('the filter uses one search counts', () => {
  it('counts every use, but at most the first values of a search, and none longer than the bound', () => {
    const many = Array.from({ length: MAX_VALUES_PER_SEARCH + 20 }, (_, i) => `v${i}`);
    const uses = usesOfParams(
      JSON.stringify({
        filters: {
          must: [{ field: 'a', match_any: ['x', 'x', 'y'] }, { field: 'b', match_any: many }, { ids: ['i1'] }],
          must_not: [{ field: 'c', match: ['z'.repeat(MAX_VALUE_LENGTH + 1), 'short'] }, { field: 'd\u0000', boolean: true }],
        },
      }),
    );
    expect(uses.map((u) => [u.clause, u.field, u.filterType, u.values.length])).toEqual([
      ['must', 'a', 'match_any', 2],
      ['must', 'b', 'match_any', MAX_VALUES_PER_SEARCH - 2],
      ['must', 'ids', 'has_id', 0],
      ['must_not', 'c', 'match', 0],
      ['must_not', 'd\uFFFD', 'boolean', 0],
    ]);
    expect(uses[1]!.values).toEqual(many.slice(0, MAX_VALUES_PER_SEARCH - 2));
    expect(usesOfParams('"filters"')).toEqual([]);
    expect(usesOfParams('not json')).toEqual([]);
  });
});

describe.each(STORE_KINDS)('%s store: filter rollups', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('stay the aggregate of the stored searches through redeliveries and purges, and serve popular_filters as every search of the range gives it', async () => {
    const r = rng(17);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    let n = 0;
    const condition = (): Record<string, unknown> => {
      const roll = r();
      if (roll < 0.1) return { ids: [pick(['i1', 'i2', 'i3'])], ...(r() < 0.5 ? { tracking_ids: ['t1'] } : {}) };
      const field = r() < 0.03 ? LONG_FIELD : pick(FIELDS);
      if (roll < 0.5) return { field, match_any: Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(TAGS)) };
      if (roll < 0.6) return { field, match_all: [pick(TAGS), 7, { b: 1, a: [2] }] };
      if (roll < 0.7) return { field, range: r() < 0.5 ? { gte: 1, lt: Math.floor(r() * 3) } : { lt: 2, gte: 1 } };
      if (roll < 0.8) return { field, boolean: r() < 0.5 };
      if (roll < 0.85) return { field, match: Array.from({ length: MAX_VALUES_PER_SEARCH + 5 }, (_, i) => `id-${i % 150}`) };
      if (roll < 0.9) return { field, match: ['L'.repeat(MAX_VALUE_LENGTH + 1), pick(TAGS)] };
      return { field, geo_radius: { center: { lat: 1, lon: 2 }, distance: pick([1, 2]) } };
    };
    const params = (): unknown => {
      const roll = r();
      if (roll < 0.15) return null;
      if (roll < 0.2) return 'filters';
      if (roll < 0.25) return { query: 'q', filters: 'must' };
      const filters: Record<string, unknown> = {};
      for (const clause of ['must', 'should', 'must_not']) if (r() < 0.5) filters[clause] = Array.from({ length: 1 + Math.floor(r() * 3) }, condition);
      return { query: 'q', filters };
    };
    const search = (): SearchRecord =>
      searchRecord({
        id: `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
        datasetId: r() < 0.8 ? DATASETS[0]! : DATASETS[1]!,
        kind: pick(KINDS),
        searchMethod: pick(METHODS),
        requestParams: params(),
        createdAt: START + Math.floor(r() * SPAN),
      });
    const batches = Array.from({ length: 6 }, () => Array.from({ length: 40 + Math.floor(r() * 80) }, search));
    for (const b of batches) await store.analytics.insertSearches(b);
    // Redelivered: a whole batch, a batch mixing old and new searches, an id twice in one batch.
    expect(await store.analytics.insertSearches(batches[2]!)).toBe(0);
    const fresh = Array.from({ length: 25 }, search);
    expect(await store.analytics.insertSearches([...batches[4]!.slice(0, 30), ...fresh, { ...fresh[3]!, requestParams: { filters: { must: [{ field: 'not stored', boolean: true }] } } }])).toBe(25);

    const check = async () => {
      const rows = await rollupRows(store);
      expect(rows).toEqual(await expectedRows(store));
      expect(await filled(t.loc)).toEqual(rows);
      const lo = START + Math.floor(r() * SPAN * 0.4);
      const hi = lo + Math.floor(r() * SPAN * 0.6);
      const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
      const ranges = [undefined, { gte: START + DAY_MS, lt: START + 3 * DAY_MS }, { gte: lo, lt: hi }, { gt: lo, lte: hi }, { gte: lo }, { lte: hi }, { gte: inHour, lt: inHour + 1_800_000 }];
      for (const dateRange of ranges) {
        for (const [searchType, searchMethod] of [[undefined, undefined], ['search', undefined], [undefined, 'hybrid'], ['autocomplete', 'bm25']] as const) {
          for (const datasetId of DATASETS) {
            const filter = { dateRange, searchType, searchMethod };
            const got = (await popularFilters(store.reports, datasetId, filter)).popular_filters;
            const label = `${datasetId} ${JSON.stringify(filter)}`;
            expect(ordered(got), label).toEqual(ordered(await oracle(store, datasetId, filter)));
            // A bound that every search passes forces the raw walk.
            const raw = (await popularFilters(store.reports, datasetId, { ...filter, topScore: { gte: -1e300 } })).popular_filters;
            expect(ordered(got), `raw ${label}`).toEqual(ordered(raw));
          }
        }
      }
    };
    await check();
    const rows = await rollupRows(store);
    expect(rows.filter((row) => row.key.includes(LONG_FIELD)).length).toBeGreaterThan(0);
    expect(rows.filter((row) => row.key.includes('|a\uFFFDb')).length).toBeGreaterThan(0);
    expect((await popularFilters(store.reports, DATASETS[0]!, {})).popular_filters.length).toBeGreaterThan(20);

    // The retention purge subtracts what it deletes (keys left empty go).
    expect(await store.analytics.purgeBefore(START + 2 * DAY_MS + 5 * HOUR_MS, 37)).toBeGreaterThan(100);
    await check();
    expect((await rollupRows(store)).every((row) => row.searches > 0)).toBe(true);

    // A dataset purge (an unknown dataset is purgeable) takes its rollups with its searches.
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    await check();
    expect((await rollupRows(store)).length).toBeGreaterThan(0);
  }, 180_000);
});
