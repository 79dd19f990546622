/**
 * Contract of the user event rollups on both stores (store/event-rollup-batch.ts): after seeded
 * random batches of user events (redelivered batches, ids repeated within a batch, purchases with
 * fractional revenue, names shared across types) and a dataset purge, the rollup rows are the
 * aggregate of the stored events (and what the migration's backfill computes from them), and the
 * reports they serve give the raw path's figures: `event_funnel` exactly, purchase revenue per
 * bucket up to floating-point order, for aligned and unaligned ranges and every granularity.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import type { UserEvent, UserEventType } from '../../core/domain/user-events.js';
import { EVENT_ROLLUP_TABLES, eventRollupBackfillSql, eventRollupDeltas, type RolledEvent } from '../../store/event-rollup-batch.js';
import { purchaseRevenue, rawPurchaseRevenue } from '../../store/reports/event-rollup.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { searchRevenue } from '../../store/reports/search-graphs.js';
import { eventFunnel } from '../../store/reports/search-reports.js';
import type { Store } from '../../store/repository.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const TYPES: UserEventType[] = ['view', 'click', 'add_to_cart', 'purchase', 'filter_clicked'];
const NAMES = ['view', 'click', 'add to cart', 'checkout', 'Checkout', 'filter'];
/** Five days across a month's end, so that month buckets split the range. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;

/** A rollup row, comparable. */
type Row = { key: string; events: number; revenue: number };

const byKey = (a: Row, b: Row): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const rowOf = (t: (typeof EVENT_ROLLUP_TABLES)[number], r: Record<string, any>): Row => ({
  key: `${t.table}|${r.dataset_id}|${Number(r[t.column])}|${r.event_type}|${r.event_name}`,
  events: Number(r.events),
  revenue: Number(r.revenue),
});

async function rollupRows(store: Store): Promise<Row[]> {
  const out: Row[] = [];
  for (const t of EVENT_ROLLUP_TABLES) out.push(...(await store.reports.all(`SELECT * FROM ${t.table}`, [])).map((r) => rowOf(t, r)));
  return out.sort(byKey);
}

/** The rollup rows the stored events call for, computed here. */
async function expectedRows(store: Store): Promise<Row[]> {
  const events: RolledEvent[] = (await store.reports.all('SELECT dataset_id, created_at, event_type, event_name, revenue FROM user_events', [])).map((r) => ({
    datasetId: String(r.dataset_id),
    createdAt: Number(r.created_at),
    eventType: String(r.event_type),
    eventName: String(r.event_name),
    revenue: Number(r.revenue),
  }));
  return EVENT_ROLLUP_TABLES.flatMap((t) =>
    eventRollupDeltas(events, t).map((d) => ({ key: `${t.table}|${d.datasetId}|${d.start}|${d.eventType}|${d.eventName}`, events: d.events, revenue: d.revenue })),
  ).sort(byKey);
}

/** What the migration's backfill computes from the stored events now, in a transaction rolled back. */
async function backfilled(t: TestStore): Promise<Row[]> {
  const rows = await readInRolledBackTx(
    t.loc,
    EVENT_ROLLUP_TABLES.flatMap((table) => [`DELETE FROM ${table.table}`, eventRollupBackfillSql(table)]),
    EVENT_ROLLUP_TABLES.map((table) => `SELECT * FROM ${table.table}`),
  );
  return EVENT_ROLLUP_TABLES.flatMap((table, i) => rows[i]!.map((r) => rowOf(table, r))).sort(byKey);
}

/** `a` equals `b` up to floating-point rounding of sums. */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function expectSameRows(actual: Row[], expected: Row[]): void {
  expect(actual.map((r) => [r.key, r.events])).toEqual(expected.map((r) => [r.key, r.events]));
  actual.forEach((a, i) => expect(close(a.revenue, expected[i]!.revenue), `${a.key}: ${a.revenue} for ${expected[i]!.revenue}`).toBe(true));
}

/** The funnel as the raw path computes it: every event of the range grouped by name. */
async function rawFunnel(store: Store, datasetId: string, range: RangeBounds | undefined) {
  const bounds: [string, number][] = [];
  if (range?.gte !== undefined) bounds.push(['created_at >= ?', range.gte]);
  if (range?.gt !== undefined) bounds.push(['created_at > ?', range.gt]);
  if (range?.lt !== undefined) bounds.push(['created_at < ?', range.lt]);
  if (range?.lte !== undefined) bounds.push(['created_at <= ?', range.lte]);
  const rows = await store.reports.all<{ event_name: string; n: number }>(
    `SELECT event_name, COUNT(*) AS n FROM user_events WHERE dataset_id = ? ${bounds.map(([c]) => `AND ${c}`).join(' ')} GROUP BY event_name ORDER BY n DESC, event_name`,
    [datasetId, ...bounds.map(([, v]) => v)],
  );
  return rows.map((r) => ({ event_name: r.event_name, event_count: Number(r.n) }));
}

async function expectReportsMatch(store: Store, datasetId: string, range: RangeBounds | undefined): Promise<void> {
  const sql = store.reports;
  expect((await eventFunnel(sql, datasetId, range)).event_names, `funnel ${JSON.stringify(range)}`).toEqual(await rawFunnel(store, datasetId, range));
  for (const granularity of ['hour', 'day', 'month'] as const) {
    const rolled = await purchaseRevenue(sql, datasetId, range, granularity);
    const raw = await rawPurchaseRevenue(sql, datasetId, range, granularity);
    expect(rolled.map((b) => b.bucket), `revenue buckets ${granularity} ${JSON.stringify(range)}`).toEqual(raw.map((b) => b.bucket));
    rolled.forEach((b, i) => expect(close(b.revenue, raw[i]!.revenue), `revenue ${granularity} ${b.bucket}`).toBe(true));
    // search_revenue: the rollups' search count against the raw one (a top score bound forces it).
    const a = await searchRevenue(sql, datasetId, { filter: { dateRange: range }, granularity, direct: false });
    const b = await searchRevenue(sql, datasetId, { filter: { dateRange: range, topScore: { gte: -1e300 } }, granularity, direct: false });
    expect(close(a.avg_revenue, b.avg_revenue), `avg revenue ${granularity}`).toBe(true);
  }
}

describe.each(STORE_KINDS)('%s store: user event rollups', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('stay the aggregate of the stored events through redelivered batches and a dataset purge, and serve the funnel and revenue as the raw path does', async () => {
    const r = rng(16);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    let n = 0;
    const event = (): UserEvent => {
      const type = pick(TYPES);
      const at = START + Math.floor(r() * SPAN);
      return {
        id: `00000000-0000-4000-9000-${(n++).toString(16).padStart(12, '0')}`,
        datasetId: r() < 0.8 ? DATASETS[0]! : DATASETS[1]!,
        eventType: type,
        eventName: pick(NAMES),
        items: [],
        metadata: null,
        userId: null,
        isConversion: type === 'purchase',
        requestId: null,
        requestType: null,
        location: null,
        position: null,
        clickedChunkId: null,
        revenue: type === 'purchase' ? Math.round(r() * 100_000) / 100 + r() * 1e-3 : 0,
        createdAt: at,
        updatedAt: at,
      };
    };
    const batches = Array.from({ length: 8 }, () => Array.from({ length: 40 + Math.floor(r() * 120) }, event));
    let stored = 0;
    for (const b of batches) stored += await store.userEvents.insertMany(b);
    // Redelivered: a whole batch, a batch mixing old and new events, an id twice in one batch.
    expect(await store.userEvents.insertMany(batches[2]!)).toBe(0);
    const fresh = Array.from({ length: 25 }, event);
    expect(await store.userEvents.insertMany([...batches[4]!.slice(0, 30), ...fresh, { ...fresh[3]!, eventName: 'not stored' }])).toBe(25);
    stored += 25;
    expect(stored).toBeGreaterThan(500);
    // Two names tied on count whose code-point order (the engines' ORDER BY) is not JS's UTF-16
    // order: U+FFFD sorts before U+1F600 by code point, after its surrogates by UTF-16 unit.
    const tied = ['\u{1F600}', '\uFFFD', '\u{1F600}', '\uFFFD'].map((eventName) => ({ ...event(), datasetId: DATASETS[0]!, eventName }));
    expect(await store.userEvents.insertMany(tied)).toBe(4);
    // A few searches, for search_revenue's count.
    const searches: SearchRecord[] = Array.from({ length: 60 }, (_, i) =>
      searchRecord({ id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, datasetId: DATASETS[i % 2]!, searchMethod: 'bm25', createdAt: START + Math.floor(r() * SPAN) }),
    );
    await store.analytics.insertSearches(searches);

    const check = async () => {
      expectSameRows(await rollupRows(store), await expectedRows(store));
      expectSameRows(await backfilled(t), await rollupRows(store));
      const lo = START + Math.floor(r() * SPAN * 0.4);
      const hi = lo + Math.floor(r() * SPAN * 0.6);
      const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
      for (const range of [undefined, { gte: START + DAY_MS, lt: START + 3 * DAY_MS }, { gte: lo, lt: hi }, { gt: lo, lte: hi }, { gte: lo }, { lte: hi }, { gte: inHour, lt: inHour + 1_800_000 }]) {
        await expectReportsMatch(store, DATASETS[0]!, range);
        await expectReportsMatch(store, DATASETS[1]!, range);
      }
    };
    await check();
    expect((await rollupRows(store)).filter((row) => row.key.includes('|purchase|')).length).toBeGreaterThan(10);

    // A dataset purge (an unknown dataset is purgeable) takes its rollups with its events.
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    await check();
    expect((await rollupRows(store)).length).toBeGreaterThan(0);
  }, 90_000);
});
