/**
 * Contract of the search rollups on both stores (store/search-rollup-batch.ts): after seeded
 * random batches (redelivered ones among them), ratings, user events linked to the searches
 * (clicks and conversions before and after their search is stored, several per search, some in
 * one batch, redelivered, of another dataset, of unknown requests), retention purges at cutoffs
 * inside an hour, and a dataset purge, the rollup rows are the aggregate of the raw rows (and what
 * the migration's backfill computes from them), and every report the rollups serve gives the raw
 * path's figures: counts exact, sums and averages up to floating-point order, percentiles within
 * LATENCY_RELATIVE_ERROR of the exact nearest-rank latency, for aligned and unaligned ranges and
 * every granularity they serve.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import type { QueryRating, UserEvent, UserEventType } from '../../core/domain/user-events.js';
import { addHistogram, LATENCY_RELATIVE_ERROR } from '../../store/latency-histogram.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { averageRating, conversionRate, ctrOverTime, searchUsageGraph, latencyGraph } from '../../store/reports/search-graphs.js';
import { HAS_CLICK, HAS_CONVERSION, type SearchAnalyticsFilter } from '../../store/reports/search-filter.js';
import { countQueries, headQueries, searchMetrics } from '../../store/reports/search-reports.js';
import { ctrReport } from '../../store/reports/ctr-reports.js';
import { rangeHeadQueries } from '../../store/reports/head-queries.js';
import type { Store } from '../../store/repository.js';
import {
  DAY_MS,
  HOUR_MS,
  positionsBackfillSql,
  QUERY_TOTALS,
  QUERY_TOTALS_BACKFILL,
  ROLLUP_TABLES,
  rollupBackfillSql,
  rollupDeltas,
  type RollupSearch,
} from '../../store/search-rollup-batch.js';
import { QUERY_PERIOD_TABLES, queryPeriodBackfillSql } from '../../store/search-query-periods.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const KINDS: SearchKind[] = ['search', 'autocomplete', 'search_over_groups'];
const METHODS = ['semantic', 'fulltext', 'hybrid', 'bm25'];
/** Five days across a month's end, so that month buckets split the range. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;
/** Forces the raw path (top_score is finite): the reference every rollup answer is compared with. */
const RAW: SearchAnalyticsFilter = { topScore: { gte: -1e300 } };

/** A rollup row as read, comparable: histogram as a sorted bucket → count object. */
type Rollup = {
  key: string;
  searches: number;
  latency_sum: number;
  histogram: Record<number, number>;
  ratings: [number, number, number];
  rating_sum: number;
  /** Searches with a linked click, with a linked conversion; linked clicks with a position, and their sum. */
  links: [number, number, number, number];
};

/** A stored rollup row, comparable. */
const rollupOf = (table: (typeof ROLLUP_TABLES)[number], r: Record<string, any>): Rollup => ({
  key: `${table.table}|${r.dataset_id}|${Number(r[table.column])}|${r.search_type}|${r.search_method}`,
  searches: Number(r.searches),
  latency_sum: Number(r.latency_sum),
  histogram: histogramOf(r.latency_histogram),
  ratings: [Number(r.rated), Number(r.positive), Number(r.negative)],
  rating_sum: Number(r.rating_sum),
  links: [Number(r.clicked), Number(r.converted), Number(r.positioned), Number(r.position_sum)],
});

const histogramOf = (text: string): Record<number, number> => Object.fromEntries([...addHistogram(new Map(), text)].filter(([, n]) => n !== 0));

async function rollupRows(store: Store): Promise<Rollup[]> {
  const out: Rollup[] = [];
  for (const t of ROLLUP_TABLES) {
    const rows = await store.reports.all(`SELECT * FROM ${t.table} ORDER BY dataset_id, ${t.column}, search_type, search_method`, []);
    out.push(...rows.map((r) => rollupOf(t, r)));
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** The rollup rows the raw rows call for, computed here. */
async function expectedRollups(store: Store): Promise<Rollup[]> {
  const raw = await store.reports.all<Record<string, unknown>>(
    `SELECT q.dataset_id, q.created_at, q.search_type, q.search_method, q.latency, r.rating,
       CASE WHEN ${HAS_CLICK} THEN 1 ELSE 0 END AS clicked, CASE WHEN ${HAS_CONVERSION} THEN 1 ELSE 0 END AS converted,
       (SELECT COUNT(e.position) FROM user_events e WHERE e.request_id = q.id AND e.dataset_id = q.dataset_id AND e.event_type = 'click') AS positioned,
       (SELECT SUM(e.position) FROM user_events e WHERE e.request_id = q.id AND e.dataset_id = q.dataset_id AND e.event_type = 'click') AS position_sum
     FROM search_queries q LEFT JOIN query_ratings r ON r.query_id = q.id AND r.dataset_id = q.dataset_id AND r.kind = 'search'`,
    [],
  );
  const rows: RollupSearch[] = raw.map((r) => ({
    datasetId: String(r.dataset_id),
    createdAt: Number(r.created_at),
    searchType: String(r.search_type),
    searchMethod: String(r.search_method),
    latency: Number(r.latency),
    rating: r.rating === null ? null : Number(r.rating),
    clicked: Number(r.clicked) === 1,
    converted: Number(r.converted) === 1,
    positioned: Number(r.positioned),
    positionSum: Number(r.position_sum ?? 0),
  }));
  const out: Rollup[] = [];
  for (const t of ROLLUP_TABLES) {
    for (const d of rollupDeltas(rows, t, 1)) {
      out.push({
        key: `${t.table}|${d.datasetId}|${d.start}|${d.searchType}|${d.searchMethod}`,
        searches: d.searches,
        latency_sum: d.latencySum,
        histogram: Object.fromEntries(d.histogram),
        ratings: [d.rated, d.positive, d.negative],
        rating_sum: d.ratingSum,
        links: [d.clicked, d.converted, d.positioned, d.positionSum],
      });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/**
 * What the migrations' backfill computes from the raw rows now, in a transaction rolled back: the
 * fill of today's columns, or (`upgrade`) the older fill without click positions and the update
 * that sets them, as a store migrated from before them runs it.
 */
async function backfilled(t: TestStore, upgrade = false): Promise<Rollup[]> {
  const dialect = t.loc.databaseUrl === null ? 'sqlite' : 'postgres';
  const rows = await readInRolledBackTx(
    t.loc,
    ROLLUP_TABLES.flatMap((table) =>
      upgrade
        ? [`DELETE FROM ${table.table}`, rollupBackfillSql(table, dialect, false), positionsBackfillSql(table)]
        : [`DELETE FROM ${table.table}`, rollupBackfillSql(table, dialect)],
    ),
    ROLLUP_TABLES.map((table) => `SELECT * FROM ${table.table}`),
  );
  return ROLLUP_TABLES.flatMap((table, i) => rows[i]!.map((r) => rollupOf(table, r))).sort((a, b) => (a.key < b.key ? -1 : 1));
}

/**
 * The query totals are the stored searches counted per (dataset, query), as the backfill counts
 * them too, and `head_queries` over everything (served by them) pages as the raw path does.
 */
async function expectTotalsMatch(t: TestStore): Promise<void> {
  const counted = 'SELECT dataset_id, query, COUNT(*) AS searches FROM search_queries GROUP BY dataset_id, query ORDER BY dataset_id, query';
  const totals = `SELECT dataset_id, query, searches FROM ${QUERY_TOTALS} ORDER BY dataset_id, query`;
  const normal = (rows: Record<string, any>[]) => rows.map((r) => [r.dataset_id, r.query, Number(r.searches)]);
  const stored = normal(await t.store.reports.all(totals, []));
  expect(stored.length).toBeGreaterThan(0);
  expect(stored).toEqual(normal(await t.store.reports.all(counted, [])));
  const [filled] = await readInRolledBackTx(t.loc, [`DELETE FROM ${QUERY_TOTALS}`, QUERY_TOTALS_BACKFILL], [totals]);
  expect(normal(filled!)).toEqual(stored);
  for (const datasetId of DATASETS) {
    for (const page of [{ limit: 10, offset: 0 }, { limit: 7, offset: 5 }, { limit: 1000, offset: 0 }]) {
      expect(await headQueries(t.store.reports, datasetId, { filter: {}, page }), `head queries ${JSON.stringify(page)}`).toEqual(
        await headQueries(t.store.reports, datasetId, { filter: RAW, page }),
      );
    }
  }
}

/**
 * The searches per (dataset, hour or day, query) are the stored searches counted so (as the
 * backfill counts them too), and `head_queries` over a date range (served by them) pages as the
 * raw path does, ties by text in code-point order.
 */
async function expectQueryPeriodsMatch(t: TestStore, ranges: readonly (RangeBounds | undefined)[]): Promise<void> {
  for (const table of QUERY_PERIOD_TABLES) {
    const p = table.periodMs;
    const counted = `SELECT dataset_id, (created_at / ${p}) * ${p} AS start, query, COUNT(*) AS searches FROM search_queries
      GROUP BY dataset_id, (created_at / ${p}) * ${p}, query ORDER BY dataset_id, start, query`;
    const periods = `SELECT dataset_id, ${table.column} AS start, query, searches FROM ${table.table} ORDER BY dataset_id, start, query`;
    const normal = (rows: Record<string, any>[]) => rows.map((r) => [r.dataset_id, Number(r.start), r.query, Number(r.searches)]);
    const stored = normal(await t.store.reports.all(periods, []));
    expect(stored.length).toBeGreaterThan(0);
    expect(stored, table.table).toEqual(normal(await t.store.reports.all(counted, [])));
    const [filled] = await readInRolledBackTx(t.loc, [`DELETE FROM ${table.table}`, queryPeriodBackfillSql(table)], [periods]);
    expect(normal(filled!)).toEqual(stored);
  }
  for (const datasetId of DATASETS) {
    for (const dateRange of ranges) {
      for (const page of [{ limit: 10, offset: 0 }, { limit: 3, offset: 8 }, { limit: 7, offset: 25 }, { limit: 1000, offset: 0 }]) {
        const raw = await headQueries(t.store.reports, datasetId, { filter: { dateRange, ...RAW }, page });
        const label = `head queries ${JSON.stringify(dateRange)} ${JSON.stringify(page)}`;
        expect(await headQueries(t.store.reports, datasetId, { filter: { dateRange }, page }), label).toEqual(raw);
        // The lists read however far it takes, never the grouped searches (this data is small).
        expect({ queries: await rangeHeadQueries(t.store.reports, datasetId, dateRange, page, 0) }, label).toEqual(raw);
      }
    }
  }
}

/** Rollup rows equal: keys, counts and histograms exactly, sums up to rounding. */
function expectSameRollups(actual: Rollup[], expected: Rollup[]): void {
  expect(actual.map((r) => r.key)).toEqual(expected.map((r) => r.key));
  actual.forEach((a, i) => {
    const e = expected[i]!;
    expect({ key: a.key, searches: a.searches, histogram: a.histogram, ratings: a.ratings, rating_sum: a.rating_sum, links: a.links }).toEqual({
      key: e.key,
      searches: e.searches,
      histogram: e.histogram,
      ratings: e.ratings,
      rating_sum: e.rating_sum,
      links: e.links,
    });
    expect(a.latency_sum).toBeCloseTo(e.latency_sum, 6);
  });
}

/** `a` equals `b` up to floating-point rounding of sums (relative 1e-9). */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** Every report the rollups serve equals its raw-path answer for the dataset, filter and range. */
async function expectReportsMatch(store: Store, datasetId: string, filter: SearchAnalyticsFilter): Promise<void> {
  const sql = store.reports;
  const raw = { ...filter, ...RAW };
  for (const granularity of ['hour', 'day', 'month'] as const) {
    const usage = await searchUsageGraph(sql, datasetId, { filter, granularity });
    expect(usage, `usage ${granularity} ${JSON.stringify(filter)}`).toEqual(await searchUsageGraph(sql, datasetId, { filter: raw, granularity }));
    const latency = await latencyGraph(sql, datasetId, { filter, granularity });
    const rawLatency = await latencyGraph(sql, datasetId, { filter: raw, granularity });
    expect(latency.points.map((p) => p.time_stamp)).toEqual(rawLatency.points.map((p) => p.time_stamp));
    latency.points.forEach((p, i) => expect(close(p.point, rawLatency.points[i]!.point), `latency ${granularity} ${p.time_stamp}`).toBe(true));
    // Shares of counts and averages of integer ratings: the same divisions of the same integers.
    expect(await ctrOverTime(sql, datasetId, { filter, granularity }), `ctr ${granularity}`).toEqual(await ctrOverTime(sql, datasetId, { filter: raw, granularity }));
    expect(await conversionRate(sql, datasetId, { filter, granularity }), `conversion ${granularity}`).toEqual(
      await conversionRate(sql, datasetId, { filter: raw, granularity }),
    );
    expect(await averageRating(sql, datasetId, { filter, granularity }), `rating ${granularity}`).toEqual(await averageRating(sql, datasetId, { filter: raw, granularity }));
  }
  const ctr = (f: SearchAnalyticsFilter) => ctrReport(sql, datasetId, { type: 'search_ctr_metrics', filter: f });
  expect(await ctr(filter), `search_ctr_metrics ${JSON.stringify(filter)}`).toEqual(await ctr(raw));
  expect(await countQueries(sql, datasetId, { filter, countCollapsedQueries: false })).toEqual(await countQueries(sql, datasetId, { filter: raw, countCollapsedQueries: false }));
  const m = await searchMetrics(sql, datasetId, filter);
  const e = await searchMetrics(sql, datasetId, raw);
  expect({ n: m.total_queries, pos: m.total_positive_ratings, neg: m.total_negative_ratings }).toEqual({ n: e.total_queries, pos: e.total_positive_ratings, neg: e.total_negative_ratings });
  expect(close(m.avg_latency, e.avg_latency)).toBe(true);
  for (const p of ['p50', 'p95', 'p99'] as const) {
    const allowed = LATENCY_RELATIVE_ERROR * Math.abs(e[p]) + 0.005 + 1e-9;
    expect(Math.abs(m[p] - e[p]), `${p}: ${m[p]} for ${e[p]} (${JSON.stringify(filter)})`).toBeLessThanOrEqual(allowed);
  }
}

describe.each(STORE_KINDS)('%s store: search rollups', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('stay the aggregate of the raw searches through redelivered batches and purges, and serve every report as the raw path does', async () => {
    const r = rng(15);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    let n = 0;
    const search = (): SearchRecord => ({
      id: `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
      datasetId: r() < 0.8 ? DATASETS[0]! : DATASETS[1]!,
      kind: pick(KINDS),
      searchMethod: pick(METHODS),
      // Texts whose UTF-8 order is not JS's UTF-16 order among them: ties rank by code point.
      query: r() < 0.06 ? pick(['\u{1F600}', '\uFFFF', 'é', 'E']) : `q${Math.floor(r() * 30)}`,
      requestParams: null,
      // Mostly 1-500 ms on a log scale, some zero, a few sub-0.01 ms.
      latencyMs: r() < 0.05 ? 0 : r() < 0.03 ? r() * 0.01 : Math.exp(r() * Math.log(500)),
      topScore: r(),
      results: [],
      resultCount: 1,
      userId: null,
      metadata: null,
      createdAt: START + Math.floor(r() * SPAN),
    });
    const batches: SearchRecord[][] = [];
    for (let b = 0; b < 12; b++) batches.push(Array.from({ length: 50 + Math.floor(r() * 150) }, search));
    let stored = 0;
    for (const batch of batches) stored += await store.analytics.insertSearches(batch);
    // Redelivered: whole batches, and a batch of old and new records mixed.
    expect(await store.analytics.insertSearches(batches[3]!)).toBe(0);
    const mixed = [...batches[5]!.slice(0, 40), ...Array.from({ length: 30 }, search)];
    expect(await store.analytics.insertSearches(mixed)).toBe(30);
    stored += 30;
    // Ratings: of stored searches (some rated again, some twice in one call), of a search not
    // stored yet, through another dataset or as a RAG answer's (neither counts), replaced.
    const rating = (s: SearchRecord, value: number, over: Partial<QueryRating> = {}): QueryRating => ({
      kind: 'search',
      datasetId: s.datasetId,
      queryId: s.id,
      rating: value,
      note: null,
      metadata: null,
      createdAt: s.createdAt,
      ...over,
    });
    const all = batches.flat();
    const rated = all.filter(() => r() < 0.15);
    await store.analytics.rate(rated.map((s) => rating(s, r() < 0.6 ? 1 : r() < 0.5 ? 0 : -1)));
    await store.analytics.rate([
      ...rated.slice(0, 20).map((s) => rating(s, 0)),
      rating(rated[20]!, 1),
      rating(rated[20]!, -1),
      rating(rated[21]!, 1, { kind: 'rag' }),
      rating(rated[22]!, 1, { datasetId: DATASETS[1] === rated[22]!.datasetId ? DATASETS[0]! : DATASETS[1]! }),
    ]);
    const later = Array.from({ length: 10 }, search);
    await store.analytics.rate(later.map((s) => rating(s, 1)));

    // User events: clicks and conversions of stored searches (several per search, in one batch
    // and across batches), of searches stored afterwards (`later`), of another dataset's search
    // and of unknown requests (neither counts), views (never count), a redelivered batch.
    let e = 0;
    const event = (type: UserEventType, requestId: string | null, datasetId: string, isConversion = false): UserEvent => ({
      id: `00000000-0000-4000-9000-${(e++).toString(16).padStart(12, '0')}`,
      datasetId,
      eventType: type,
      eventName: type,
      items: [],
      metadata: null,
      userId: null,
      isConversion,
      requestId,
      requestType: requestId === null ? null : 'search',
      location: null,
      position: type === 'click' && r() < 0.8 ? Math.floor(r() * 12) : null,
      clickedChunkId: null,
      revenue: 0,
      createdAt: START + SPAN,
      updatedAt: START + SPAN,
    });
    const linked = (s: SearchRecord): UserEvent[] => {
      const x = r();
      if (x < 0.15) return [event('click', s.id, s.datasetId)];
      if (x < 0.2) return [event('click', s.id, s.datasetId), event('click', s.id, s.datasetId), event('purchase', s.id, s.datasetId, true)];
      if (x < 0.25) return [event('add_to_cart', s.id, s.datasetId, true)];
      if (x < 0.3) return [event('view', s.id, s.datasetId)];
      if (x < 0.33) return [event('click', s.id, s.datasetId === DATASETS[0] ? DATASETS[1]! : DATASETS[0]!)];
      return [];
    };
    const eventBatches: UserEvent[][] = [[], [], []];
    for (const s of [...all, ...later]) eventBatches[Math.floor(r() * 3)]!.push(...linked(s));
    eventBatches[2]!.push(event('click', 'not-a-stored-search', DATASETS[0]!), event('purchase', null, DATASETS[0]!, true));
    for (const b of eventBatches) await store.userEvents.insertMany(b);
    expect(await store.userEvents.insertMany(eventBatches[1]!)).toBe(0);
    // Second clicks and conversions of searches that already have one.
    const again = all.filter(() => r() < 0.1).flatMap((s) => [event('click', s.id, s.datasetId), event('purchase', s.id, s.datasetId, true)]);
    await store.userEvents.insertMany(again);

    expect(await store.analytics.insertSearches(later)).toBe(10);
    stored += 10;
    if (kind === 'postgres') {
      // Statistics, as autovacuum would gather them: unanalyzed, the raw path's EXISTS per search
      // scans user_events instead of its request_id index (100-200 ms per report here).
      const c = new pg.Client({ connectionString: t.loc.databaseUrl! });
      await c.connect();
      await c.query('ANALYZE');
      await c.end();
    }

    const ranges = (): (RangeBounds | undefined)[] => {
      const lo = START + Math.floor(r() * SPAN * 0.4);
      const hi = lo + Math.floor(r() * SPAN * 0.6);
      const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
      return [
        undefined,
        { gte: START + DAY_MS, lt: START + 3 * DAY_MS },
        { gte: lo, lt: hi },
        { gt: lo, lte: hi },
        { gte: lo },
        { lte: hi },
        { gte: inHour, lt: inHour + 30 * 60_000 },
      ];
    };
    const check = async (step: string) => {
      expectSameRollups(await rollupRows(store), await expectedRollups(store));
      expectSameRollups(await backfilled(t), await rollupRows(store));
      expectSameRollups(await backfilled(t, true), await rollupRows(store));
      await expectTotalsMatch(t);
      await expectQueryPeriodsMatch(t, ranges());
      for (const dateRange of ranges()) {
        await expectReportsMatch(store, DATASETS[0]!, { dateRange });
        await expectReportsMatch(store, DATASETS[0]!, { dateRange, searchType: 'search' });
        await expectReportsMatch(store, DATASETS[0]!, { dateRange, searchType: 'autocomplete', searchMethod: 'hybrid' });
        await expectReportsMatch(store, DATASETS[1]!, { dateRange });
      }
      expect(step).toBeTruthy();
    };
    await check('inserted');
    expect(stored).toBeGreaterThan(1000);
    const links = (await rollupRows(store)).filter((row) => row.key.startsWith('search_rollup_daily')).map((row) => row.links);
    expect(links.reduce((a, l) => a + l[0], 0)).toBeGreaterThan(100);
    expect(links.reduce((a, l) => a + l[1], 0)).toBeGreaterThan(50);
    expect(links.reduce((a, l) => a + l[2], 0)).toBeGreaterThan(100);

    // Retention purges at cutoffs inside an hour, in small batches (several transactions each).
    const first = START + DAY_MS + 13 * 60_000 + 7;
    const purged = await store.analytics.purgeBefore(first, 37);
    expect(purged).toBeGreaterThan(100);
    await check('purged once');
    await store.analytics.purgeBefore(START + 2 * DAY_MS + 5 * HOUR_MS + 59 * 60_000, 1000);
    await check('purged twice');

    // A dataset purge (an unknown dataset is purgeable) takes its rollups with its searches.
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    await check('dataset purged');
    expect((await rollupRows(store)).length).toBeGreaterThan(0);
  }, 90_000);

  it('rank head queries of a date range past the first rows of every hour and day, as the raw path does', async () => {
    // A Zipf-like head over many texts: pages deeper than the first rows read of each list, whose
    // last counts bound the unseen queries.
    const r = rng(7);
    let n = 0;
    const searches: SearchRecord[] = Array.from({ length: 4000 }, () => ({
      id: `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
      datasetId: DATASETS[0]!,
      kind: 'search',
      searchMethod: 'hybrid',
      query: `z${Math.floor(Math.exp(r() * Math.log(600)))}`,
      requestParams: null,
      latencyMs: 10,
      topScore: 0.5,
      results: [],
      resultCount: 1,
      userId: null,
      metadata: null,
      createdAt: START + Math.floor(r() * 3 * DAY_MS),
    }));
    // In the other dataset, a query searched once an hour, ranked first over ten hours but in no
    // hour's first rows: every hour has 25 queries of its own searched twice.
    const spread = (query: string, hour: number): SearchRecord => ({ ...searches[0]!, id: `s${n++}`, datasetId: DATASETS[1]!, query, createdAt: START + hour * HOUR_MS + 60_000 });
    for (let hour = 0; hour < 10; hour++) {
      searches.push(spread('steady', hour), ...Array.from({ length: 25 }, (_, i) => [spread(`h${hour}-${i}`, hour), spread(`h${hour}-${i}`, hour)]).flat());
    }
    for (let i = 0; i < searches.length; i += 500) await store.analytics.insertSearches(searches.slice(i, i + 500));
    expect(await rangeHeadQueries(store.reports, DATASETS[1]!, { gte: START, lt: START + 10 * HOUR_MS }, { limit: 1, offset: 0 }, 0)).toEqual([{ query: 'steady', count: 10 }]);
    await expectQueryPeriodsMatch(t, [
      { gte: START, lt: START + 10 * HOUR_MS },
      { gte: START + 5 * HOUR_MS + 17, lt: START + 2 * DAY_MS + 3 * HOUR_MS - 5 },
      { gte: START + 90 * 60_000 },
      { lt: START + DAY_MS + 1 },
    ]);
  });
});
