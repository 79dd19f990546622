/**
 * Contract of the user event rollups' links on both stores (store/event-rollup-batch.ts): the
 * events of each row linked to a stored search and to a stored RAG answer of their own dataset,
 * and their revenue, which `search_revenue` and `chat_revenue` with `direct` read. After seeded
 * random searches, answers and user events in every order (events before the record they name and
 * after it, redelivered records and events, an id repeated in a batch, events of another dataset
 * or naming unknown ids, a search and an answer sharing an id), a retention purge that cuts an
 * hour and a dataset purge, the rows are the aggregate computed here from the raw tables (and by
 * the migration's backfill), and both reports give the raw path's buckets and revenue for aligned
 * and unaligned ranges at hour, day and month granularity, reading no raw event on aligned ranges.
 * On PostgreSQL, searches, answers and the events naming them are also written concurrently.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { UserEvent, UserEventType } from '../../core/domain/user-events.js';
import {
  EVENT_LINK_TARGETS,
  EVENT_ROLLUP_TABLES,
  EVENT_VALUE_COLUMNS,
  eventLinkBackfillSql,
  eventRollupBackfillSql,
  eventRollupDeltas,
  eventValues,
  RAG_LINK,
  SEARCH_LINK,
  type EventLinkTarget,
  type RolledEvent,
} from '../../store/event-rollup-batch.js';
import { rawPurchaseRevenue } from '../../store/reports/event-rollup.js';
import { chatRevenue } from '../../store/reports/rag-reports.js';
import { reportTimestamp, type Granularity, type RangeBounds, type ReportSql } from '../../store/reports/report-sql.js';
import { searchRevenue } from '../../store/reports/search-graphs.js';
import type { Store } from '../../store/repository.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { ragRecord, searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';
import { userEvent } from '../helpers/user-event.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const NAMES = ['view', 'checkout', 'Checkout', 'add to cart'];
/** Five days across a month's end, so that month buckets split the range. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;
/** Which values of a row are counts (compared exactly) and which sums of reals (up to rounding). */
const COUNTS = EVENT_VALUE_COLUMNS.flatMap((c, i) => (c.endsWith('events') ? [i] : []));
const SUMS = EVENT_VALUE_COLUMNS.flatMap((c, i) => (c.endsWith('revenue') ? [i] : []));

/** A rollup row, comparable. */
type Row = { key: string; values: number[] };
const byKey = (a: Row, b: Row): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

async function rollupRows(store: Store): Promise<Row[]> {
  const out: Row[] = [];
  for (const t of EVENT_ROLLUP_TABLES) {
    for (const r of await store.reports.all(`SELECT * FROM ${t.table}`, [])) {
      out.push({ key: `${t.table}|${r.dataset_id}|${Number(r[t.column])}|${r.event_type}|${r.event_name}`, values: EVENT_VALUE_COLUMNS.map((c) => Number(r[c])) });
    }
  }
  return out.sort(byKey);
}

/** The rollup rows the stored events and records call for, computed here from the raw tables. */
async function expectedRows(store: Store): Promise<Row[]> {
  const stored = new Map<EventLinkTarget, Map<string, string>>();
  for (const target of EVENT_LINK_TARGETS) {
    stored.set(target, new Map((await store.reports.all(`SELECT id, dataset_id FROM ${target.table}`, [])).map((r) => [String(r.id), String(r.dataset_id)])));
  }
  const events: RolledEvent[] = (await store.reports.all('SELECT dataset_id, created_at, event_type, event_name, revenue, request_id FROM user_events', [])).map((r) => ({
    datasetId: String(r.dataset_id),
    createdAt: Number(r.created_at),
    eventType: String(r.event_type),
    eventName: String(r.event_name),
    revenue: Number(r.revenue),
    links: EVENT_LINK_TARGETS.filter((target) => r.request_id !== null && stored.get(target)!.get(String(r.request_id)) === r.dataset_id).map((t) => t.kind),
  }));
  return EVENT_ROLLUP_TABLES.flatMap((t) =>
    eventRollupDeltas(events, t).map((d) => ({ key: `${t.table}|${d.datasetId}|${d.start}|${d.eventType}|${d.eventName}`, values: eventValues(d) })),
  ).sort(byKey);
}

/** What the migrations' backfills (v11's events, then the links) compute from the stored rows now, in a transaction rolled back. */
async function backfilled(t: TestStore): Promise<Row[]> {
  const statements = EVENT_ROLLUP_TABLES.flatMap((table) => [
    `DELETE FROM ${table.table}`,
    eventRollupBackfillSql(table),
    ...EVENT_LINK_TARGETS.map((target) => eventLinkBackfillSql(table, target)),
  ]);
  const rows = await readInRolledBackTx(t.loc, statements, EVENT_ROLLUP_TABLES.map((table) => `SELECT * FROM ${table.table}`));
  return EVENT_ROLLUP_TABLES.flatMap((table, i) =>
    rows[i]!.map((r) => ({
      key: `${table.table}|${r.dataset_id}|${Number(r[table.column])}|${r.event_type}|${r.event_name}`,
      values: EVENT_VALUE_COLUMNS.map((c) => Number(r[c])),
    })),
  ).sort(byKey);
}

/** `a` equals `b` up to floating-point rounding of sums. */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function expectSameRows(actual: Row[], expected: Row[], what: string): void {
  expect(
    actual.map((r) => [r.key, ...COUNTS.map((i) => r.values[i])]),
    what,
  ).toEqual(expected.map((r) => [r.key, ...COUNTS.map((i) => r.values[i])]));
  actual.forEach((a, n) => {
    for (const i of SUMS) expect(close(a.values[i]!, expected[n]!.values[i]!), `${what} ${a.key} ${EVENT_VALUE_COLUMNS[i]}: ${a.values[i]} for ${expected[n]!.values[i]}`).toBe(true);
  });
}

/** Both direct revenue reports as served, against the raw path's purchases. */
async function expectReportsMatch(sql: ReportSql, datasetId: string, range: RangeBounds | undefined): Promise<void> {
  for (const granularity of ['hour', 'day', 'month'] as Granularity[]) {
    const served = [
      { target: SEARCH_LINK, report: await searchRevenue(sql, datasetId, { filter: { dateRange: range }, granularity, direct: true }) },
      { target: RAG_LINK, report: await chatRevenue(sql, datasetId, { filter: { dateRange: range }, granularity, direct: true }) },
    ];
    for (const { target, report } of served) {
      const raw = await rawPurchaseRevenue(sql, datasetId, range, granularity, target);
      const what = `${target.kind} ${granularity} ${JSON.stringify(range)}`;
      expect(
        report.points.map((p) => p.time_stamp),
        what,
      ).toEqual(raw.map((b) => reportTimestamp(b.bucket)));
      report.points.forEach((p, i) => expect(close(p.point, raw[i]!.revenue), `${what} ${p.time_stamp}`).toBe(true));
    }
  }
}

/** The records and events of a test, seeded. */
function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const at = (): number => START + Math.floor(r() * SPAN);
  let n = 0;
  const id = (prefix: string): string => `00000000-0000-4000-${prefix}-${(n++).toString(16).padStart(12, '0')}`;
  const dataset = (): string => (r() < 0.8 ? DATASETS[0]! : DATASETS[1]!);
  const search = (): SearchRecord => searchRecord({ id: id('8000'), datasetId: dataset(), createdAt: at() });
  const answer = (): RagRecord => ragRecord({ id: id('a000'), datasetId: dataset(), createdAt: at() });
  const event = (type: UserEventType, requestId: string | null, datasetId: string): UserEvent =>
    userEvent({
      id: id('9000'),
      datasetId,
      eventType: type,
      eventName: type === 'purchase' ? pick(NAMES.slice(1, 3)) : pick(NAMES),
      isConversion: type === 'purchase',
      requestId,
      revenue: type === 'purchase' ? Math.round(r() * 100_000) / 100 + r() * 1e-3 : r() < 0.1 ? 1.5 : 0,
      createdAt: at(),
    });
  /** One to three events naming `q`, mostly purchases, in its dataset. */
  const linkedTo = (q: { id: string; datasetId: string }): UserEvent[] =>
    Array.from({ length: 1 + Math.floor(r() * 3) }, () => event(r() < 0.7 ? 'purchase' : pick<UserEventType>(['view', 'click', 'add_to_cart']), q.id, q.datasetId));
  return { r, search, answer, event, linkedTo };
}

describe.each(STORE_KINDS)('%s store: user event rollups, links to searches and answers', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  const check = async (r: () => number): Promise<void> => {
    expectSameRows(await rollupRows(store), await expectedRows(store), 'rows');
    expectSameRows(await backfilled(t), await rollupRows(store), 'backfill');
    const lo = START + Math.floor(r() * SPAN * 0.4);
    const hi = lo + Math.floor(r() * SPAN * 0.6);
    const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
    for (const range of [undefined, { gte: START + DAY_MS, lt: START + 3 * DAY_MS }, { gt: lo, lte: hi }, { gte: lo }, { gte: inHour, lt: inHour + 1_800_000 }]) {
      await expectReportsMatch(store.reports, DATASETS[0]!, range);
      await expectReportsMatch(store.reports, DATASETS[1]!, range);
    }
  };

  it('count each link once, whichever of the event and its record is stored second, and serve direct revenue as the raw path does', async () => {
    const g = generator(17);
    const { r } = g;
    const other = (q: { datasetId: string }): string => (q.datasetId === DATASETS[0] ? DATASETS[1]! : DATASETS[0]!);

    // Records that come later: events naming them arrive first.
    const laterSearches = Array.from({ length: 50 }, g.search);
    const laterAnswers = Array.from({ length: 30 }, g.answer);
    const early = [...laterSearches, ...laterAnswers].filter(() => r() < 0.7).flatMap(g.linkedTo);
    expect(await store.userEvents.insertMany(early)).toBe(early.length);

    const searchBatches = Array.from({ length: 4 }, () => Array.from({ length: 40 + Math.floor(r() * 40) }, g.search));
    const answerBatches = Array.from({ length: 3 }, () => Array.from({ length: 20 + Math.floor(r() * 30) }, g.answer));
    for (const b of searchBatches) await store.analytics.insertSearches(b);
    for (const b of answerBatches) await store.analytics.insertRags(b);
    // Redelivered records count nothing twice.
    expect(await store.analytics.insertSearches(searchBatches[1]!)).toBe(0);
    expect(await store.analytics.insertRags(answerBatches[0]!)).toBe(0);
    const searches = searchBatches.flat();
    const answers = answerBatches.flat();

    // Events after their records: several per record across batches, an id twice in a batch, a
    // redelivered batch, another dataset's events, unknown request ids, no request id.
    const batch = [...searches, ...answers].filter(() => r() < 0.6).flatMap(g.linkedTo);
    expect(await store.userEvents.insertMany([...batch, { ...batch[0]!, revenue: 1e6 }])).toBe(batch.length);
    expect(await store.userEvents.insertMany(batch.slice(0, 40))).toBe(0);
    const more = [
      ...searches.slice(0, 30).flatMap(g.linkedTo),
      ...[...searches.slice(30, 45), ...answers.slice(0, 15)].map((q) => g.event('purchase', q.id, other(q))),
      ...Array.from({ length: 10 }, () => g.event('purchase', '00000000-0000-4000-b000-000000000001', DATASETS[0]!)),
      ...Array.from({ length: 10 }, () => g.event('purchase', null, DATASETS[0]!)),
    ];
    expect(await store.userEvents.insertMany(more)).toBe(more.length);

    // The later records arrive, one answer under a stored search's id (both link its events), and
    // a search whose id the events of another dataset named.
    await store.analytics.insertSearches(laterSearches);
    await store.analytics.insertRags([...laterAnswers, { ...g.answer(), id: searches[0]!.id, datasetId: searches[0]!.datasetId }]);
    await check(r);

    const rows = await rollupRows(store);
    // Guards against a vacuous pass: links of both kinds, and purchases linked to none.
    expect(rows.filter((row) => row.values[2]! > 0 && row.key.includes('|purchase|')).length).toBeGreaterThan(20);
    expect(rows.filter((row) => row.values[4]! > 0 && row.key.includes('|purchase|')).length).toBeGreaterThan(10);
    expect(rows.some((row) => row.values[0]! > row.values[2]! + row.values[4]!)).toBe(true);
    // The served reports read the rollups alone when the range has no partial hour.
    const seen: string[] = [];
    const recording: ReportSql = { dialect: store.reports.dialect, all: (text, params) => (seen.push(text), store.reports.all(text, params)) };
    const whole = { filter: { dateRange: { gte: START, lt: START + 3 * DAY_MS + 5 * HOUR_MS } }, granularity: 'day' as const, direct: true };
    await searchRevenue(recording, DATASETS[0]!, whole);
    await chatRevenue(recording, DATASETS[0]!, whole);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.filter((text) => /user_events|search_queries|rag_queries/.test(text))).toEqual([]);

    // A retention purge whose cutoff cuts an hour takes the links of what it deletes, then a dataset purge.
    await store.analytics.purgeBefore(START + DAY_MS + 5 * HOUR_MS + 17 * 60_000, 37);
    await check(r);
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    await check(r);
    expect((await rollupRows(store)).some((row) => row.values[2]! > 0)).toBe(true);
  }, 120_000);

  it('count each link once when records and the events naming them are written concurrently', async () => {
    const g = generator(18);
    const searches = Array.from({ length: 120 }, g.search);
    const answers = Array.from({ length: 60 }, g.answer);
    const events = [...searches, ...answers].flatMap(g.linkedTo);
    const chunks = <T>(xs: readonly T[], size: number): T[][] => Array.from({ length: Math.ceil(xs.length / size) }, (_, i) => xs.slice(i * size, (i + 1) * size));
    // Each record's batch races the batches of the events naming it (and a redelivery of itself),
    // started in a seeded random order.
    const writes: (() => Promise<number>)[] = [
      ...chunks(searches, 10).flatMap((b) => [() => store.analytics.insertSearches(b), () => store.analytics.insertSearches(b)]),
      ...chunks(answers, 10).map((b) => () => store.analytics.insertRags(b)),
      ...chunks(events, 15).map((b) => () => store.userEvents.insertMany(b)),
    ];
    const order = writes.map((write) => ({ write, at: g.r() })).sort((a, b) => a.at - b.at);
    await Promise.all(order.map(({ write }) => write()));
    expectSameRows(await rollupRows(store), await expectedRows(store), 'rows');
    expect((await rollupRows(store)).filter((row) => row.values[2]! > 0).length).toBeGreaterThan(20);
  }, 120_000);
});
