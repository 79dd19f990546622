/**
 * Contract of the record rollups on both stores (store/record-rollup-batch.ts): after seeded random
 * RAG answers and recommendations (redelivered batches), ratings (before and after their answer,
 * replaced, of the wrong kind or dataset), user events naming them (before and after them, repeated,
 * from another dataset, naming unknown requests, redelivered), a retention purge cutting an hour and
 * a dataset purge, the rollup rows are the aggregate of the stored rows (computed here from the raw
 * tables, and by the migration's backfill), and every report they serve answers what this test
 * computes from the raw rows, for aligned and unaligned ranges at hour, day and month granularity.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecommendationRecord } from '../../core/domain/analytics.js';
import type { RagRecord, RagType } from '../../core/domain/rag.js';
import type { QueryRating, UserEvent, UserEventType } from '../../core/domain/user-events.js';
import {
  MESSAGE_TOTALS,
  MESSAGE_TOTALS_BACKFILL,
  RECORD_EVENT_ROLLUP_TABLES,
  RECORD_ROLLUP_TABLES,
  RECORD_SOURCES,
  RECORD_VALUE_COLUMNS,
  recordCounts,
  recordValues,
  recordDeltas,
  recordEventDeltas,
  recordRollupBackfillSql,
  type RecordChange,
  type RecordEventChange,
  type RecordKind,
} from '../../store/record-rollup-batch.js';
import {
  recommendationConversionRate,
  recommendationEventFunnel,
  recommendationsCtrRate,
  recommendationUsageGraph,
} from '../../store/reports/recommendation-reports.js';
import {
  chatAverageRating,
  chatConversionRate,
  popularChats,
  ragCtrOverTime,
  ragEventFunnel,
  ragQueryRatings,
  ragUsage,
  ragUsageGraph,
} from '../../store/reports/rag-reports.js';
import { ctrReport } from '../../store/reports/ctr-reports.js';
import { reportTimestamp, type Granularity, type RangeBounds, type ReportSql } from '../../store/reports/report-sql.js';
import type { Store } from '../../store/repository.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { ragRecord, recommendationRecord } from '../helpers/analytics-record.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';
import { bucketOf, inRange } from '../helpers/report-buckets.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const RAG_TYPES: RagType[] = ['chosen_chunks', 'all_chunks'];
const REC_TYPES = ['Chunk', 'Group'] as const;
/** User messages with ties whose code-point order is not JS's UTF-16 order (U+FFFD, U+1F600). */
const MESSAGES = ['how', 'How', 'why', 'what', '\u{1F600}', '\uFFFD', 'a longer question'];
const EVENT_NAMES = ['view', 'click', 'add to cart', 'checkout', 'Checkout', '\u{1F600}', '\uFFFD'];
/** Five days across a month's end, so that month buckets split the range. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;

/** A rollup row, comparable. */
type Row = { key: string; values: number[] };
const byKey = (a: Row, b: Row): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const recordRowOf = (table: string, column: string, r: Record<string, any>): Row => ({
  key: `${table}|${r.dataset_id}|${Number(r[column])}|${r.kind}|${r.subtype}${r.event_name === undefined ? '' : `|${r.event_name}`}`,
  values: r.event_name === undefined ? RECORD_VALUE_COLUMNS.map((c) => Number(r[c])) : [Number(r.events)],
});

const TABLES = [...RECORD_ROLLUP_TABLES, ...RECORD_EVENT_ROLLUP_TABLES];

async function rollupRows(store: Store): Promise<Row[]> {
  const out: Row[] = [];
  for (const t of TABLES) out.push(...(await store.reports.all(`SELECT * FROM ${t.table}`, [])).map((r) => recordRowOf(t.table, t.column, r)));
  return out.sort(byKey);
}

/** A stored record with what it counts, read from the raw tables. */
interface RawRecord {
  id: string;
  datasetId: string;
  createdAt: number;
  kind: RecordKind;
  subtype: string;
  rating: number | null;
  clicked: boolean;
  converted: boolean;
  /** Linked clicks with a position, and the sum of those positions. */
  positioned: number;
  positionSum: number;
  /** Names of the user events linked to it, one per event. */
  events: string[];
}

/** Every stored answer and recommendation with its counted rating and linked events, from the raw tables. */
async function rawRecords(store: Store): Promise<RawRecord[]> {
  const ratings = new Map((await store.reports.all('SELECT query_id, kind, dataset_id, rating FROM query_ratings', [])).map((r) => [String(r.query_id), r]));
  const events = await store.reports.all('SELECT request_id, dataset_id, event_type, event_name, is_conversion, position FROM user_events WHERE request_id IS NOT NULL', []);
  const out: RawRecord[] = [];
  for (const source of RECORD_SOURCES) {
    for (const q of await store.reports.all(`SELECT id, dataset_id, created_at, ${source.subtypeColumn} AS subtype FROM ${source.table}`, [])) {
      const rating = ratings.get(String(q.id));
      const linked = events.filter((e) => e.request_id === q.id && e.dataset_id === q.dataset_id);
      out.push({
        id: String(q.id),
        datasetId: String(q.dataset_id),
        createdAt: Number(q.created_at),
        kind: source.kind,
        subtype: String(q.subtype),
        rating: source.ratingKind !== null && rating && rating.kind === source.ratingKind && rating.dataset_id === q.dataset_id ? Number(rating.rating) : null,
        clicked: linked.some((e) => e.event_type === 'click'),
        converted: linked.some((e) => Number(e.is_conversion) === 1),
        positioned: linked.filter((e) => e.event_type === 'click' && e.position !== null).length,
        positionSum: linked.filter((e) => e.event_type === 'click' && e.position !== null).reduce((sum, e) => sum + Number(e.position), 0),
        events: linked.map((e) => String(e.event_name)),
      });
    }
  }
  return out;
}

/** The rollup rows the stored rows call for. */
async function expectedRows(store: Store): Promise<Row[]> {
  const records = await rawRecords(store);
  const changes: RecordChange[] = records.map((q) => ({ record: q, counts: recordCounts(q.rating, q, q, 1) }));
  const named: RecordEventChange[] = records.flatMap((q) => q.events.map((eventName) => ({ record: q, eventName, events: 1 })));
  return [
    ...RECORD_ROLLUP_TABLES.flatMap((t) => recordDeltas(changes, t).map((d) => ({ key: `${t.table}|${d.datasetId}|${d.start}|${d.kind}|${d.subtype}`, values: recordValues(d.counts) }))),
    ...RECORD_EVENT_ROLLUP_TABLES.flatMap((t) =>
      recordEventDeltas(named, t).map((d) => ({ key: `${t.table}|${d.datasetId}|${d.start}|${d.kind}|${d.subtype}|${d.eventName}`, values: [d.events] })),
    ),
  ].sort(byKey);
}

/** What the migration's backfill computes from the stored rows now, in a transaction rolled back. */
async function backfilled(t: TestStore): Promise<Row[]> {
  const rows = await readInRolledBackTx(
    t.loc,
    [...TABLES.map((table) => `DELETE FROM ${table.table}`), ...RECORD_SOURCES.map(recordRollupBackfillSql)],
    TABLES.map((table) => `SELECT * FROM ${table.table}`),
  );
  return TABLES.flatMap((table, i) => rows[i]!.map((r) => recordRowOf(table.table, table.column, r))).sort(byKey);
}

/**
 * The message totals are the stored answers counted per (dataset, user message), as the backfill
 * counts them too, and `popular_chats` over everything (served by them) pages as the raw path does.
 */
async function expectMessageTotalsMatch(t: TestStore): Promise<void> {
  const counted = 'SELECT dataset_id, user_message, COUNT(*) AS answers FROM rag_queries GROUP BY dataset_id, user_message ORDER BY dataset_id, user_message';
  const totals = `SELECT dataset_id, user_message, answers FROM ${MESSAGE_TOTALS} ORDER BY dataset_id, user_message`;
  const normal = (rows: Record<string, any>[]) => rows.map((r) => [r.dataset_id, r.user_message, Number(r.answers)]);
  const stored = normal(await t.store.reports.all(totals, []));
  expect(stored.length).toBeGreaterThan(0);
  expect(stored).toEqual(normal(await t.store.reports.all(counted, [])));
  const [filled] = await readInRolledBackTx(t.loc, [`DELETE FROM ${MESSAGE_TOTALS}`, MESSAGE_TOTALS_BACKFILL], [totals]);
  expect(normal(filled!)).toEqual(stored);
  for (const datasetId of DATASETS) {
    for (const page of [{ limit: 10, offset: 0 }, { limit: 3, offset: 2 }, { limit: 1000, offset: 0 }]) {
      // A date range holding every answer forces the raw path.
      const raw = await popularChats(t.store.reports, datasetId, { filter: { dateRange: { gte: 0 } }, page });
      expect(await popularChats(t.store.reports, datasetId, { filter: {}, page }), `popular_chats ${JSON.stringify(page)}`).toEqual(raw);
    }
  }
}

/** `a` equals `b` up to floating-point rounding of sums. */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

const share = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);

/** The points of `records` per bucket, oldest first, for buckets `keep` accepts, valued by `value`. */
function points(records: readonly RawRecord[], g: Granularity, value: (rs: RawRecord[]) => number, keep: (rs: RawRecord[]) => boolean = () => true) {
  const by = new Map<number, RawRecord[]>();
  for (const q of records) by.set(bucketOf(q.createdAt, g), [...(by.get(bucketOf(q.createdAt, g)) ?? []), q]);
  return [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .filter(([, rs]) => keep(rs))
    .map(([at, rs]) => ({ time_stamp: reportTimestamp(at), point: value(rs) }));
}

/** The linked events of `records` by name, most first, ties by code point. */
function funnel(records: readonly RawRecord[]) {
  const counts = new Map<string, number>();
  for (const q of records) for (const name of q.events) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])))
    .map(([event_name, event_count]) => ({ event_name, event_count }));
}

function expectPoints(actual: { time_stamp: string; point: number }[], expected: { time_stamp: string; point: number }[], what: string): void {
  expect(
    actual.map((p) => p.time_stamp),
    what,
  ).toEqual(expected.map((p) => p.time_stamp));
  actual.forEach((p, i) => expect(close(p.point, expected[i]!.point), `${what} ${p.time_stamp}: ${p.point} for ${expected[i]!.point}`).toBe(true));
}

async function expectReportsMatch(store: Store, datasetId: string, range: RangeBounds | undefined): Promise<void> {
  const sql = store.reports;
  const all = (await rawRecords(store)).filter((q) => q.datasetId === datasetId && inRange(q.createdAt, range));
  const what = (name: string) => `${name} ${datasetId.slice(0, 2)} ${JSON.stringify(range)}`;
  for (const ragType of [undefined, ...RAG_TYPES]) {
    const answers = all.filter((q) => q.kind === 'rag' && (ragType === undefined || q.subtype === ragType));
    const filter = { dateRange: range, ragType };
    const rated = answers.filter((q) => q.rating !== null);
    expect((await ragUsage(sql, datasetId, filter)).total_queries, what('rag_usage')).toBe(answers.length);
    expect(await ragQueryRatings(sql, datasetId, filter), what('rag_query_ratings')).toEqual({
      total_positive_ratings: rated.filter((q) => q.rating! >= 1).length,
      total_negative_ratings: rated.filter((q) => q.rating! <= 0).length,
    });
    expect((await ragEventFunnel(sql, datasetId, filter)).event_names, what('rag event_funnel')).toEqual(funnel(answers));
    for (const granularity of ['hour', 'day', 'month'] as const) {
      const req = { filter, granularity };
      expectPoints((await ragUsageGraph(sql, datasetId, req)).points, points(answers, granularity, (rs) => rs.length), what(`rag_usage_graph ${granularity}`));
      const ctr = await ragCtrOverTime(sql, datasetId, req);
      expect(close(ctr.total_ctr, share(answers.filter((q) => q.clicked).length, answers.length)), what('rag ctr')).toBe(true);
      expectPoints(ctr.points, points(answers, granularity, (rs) => share(rs.filter((q) => q.clicked).length, rs.length)), what(`rag ctr ${granularity}`));
      const conversion = await chatConversionRate(sql, datasetId, req);
      expect(close(conversion.conversion_rate, share(answers.filter((q) => q.converted).length, answers.length)), what('chat conversion')).toBe(true);
      expectPoints(conversion.points, points(answers, granularity, (rs) => share(rs.filter((q) => q.converted).length, rs.length)), what(`conversion ${granularity}`));
      const average = await chatAverageRating(sql, datasetId, req);
      const sum = (rs: RawRecord[]) => rs.reduce((s, q) => s + (q.rating ?? 0), 0);
      const ratedIn = (rs: RawRecord[]) => rs.filter((q) => q.rating !== null);
      expect(close(average.avg_chat_rating, share(sum(rated), rated.length)), what('chat_average_rating')).toBe(true);
      expectPoints(
        average.points,
        points(
          answers,
          granularity,
          (rs) => share(sum(ratedIn(rs)), ratedIn(rs).length),
          (rs) => ratedIn(rs).length > 0,
        ),
        what(`chat_average_rating ${granularity}`),
      );
    }
  }
  for (const recommendationType of [undefined, ...REC_TYPES]) {
    const recs = all.filter((q) => q.kind === 'recommendation' && (recommendationType === undefined || q.subtype === recommendationType));
    const filter = { dateRange: range, recommendationType };
    expect((await recommendationEventFunnel(sql, datasetId, filter)).event_names, what('recommendation event_funnel')).toEqual(funnel(recs));
    for (const granularity of ['hour', 'day', 'month'] as const) {
      const req = { filter, granularity };
      const usage = await recommendationUsageGraph(sql, datasetId, req);
      expect(usage.total_requests, what('recommendation usage')).toBe(recs.length);
      expectPoints(usage.points, points(recs, granularity, (rs) => rs.length), what(`recommendation usage ${granularity}`));
      const ctr = await recommendationsCtrRate(sql, datasetId, req);
      expect(close(ctr.total_ctr, share(recs.filter((q) => q.clicked).length, recs.length)), what('recommendation ctr')).toBe(true);
      expectPoints(ctr.points, points(recs, granularity, (rs) => share(rs.filter((q) => q.clicked).length, rs.length)), what(`recommendation ctr ${granularity}`));
      const conversion = await recommendationConversionRate(sql, datasetId, req);
      expect(close(conversion.conversion_rate, share(recs.filter((q) => q.converted).length, recs.length)), what('recommendation conversion')).toBe(true);
    }
    const clicked = recs.filter((q) => q.clicked).length;
    const positioned = recs.reduce((sum, q) => sum + q.positioned, 0);
    const metrics = await ctrReport(sql, datasetId, { type: 'recommendation_ctr_metrics', filter });
    expect(metrics.recommendations_with_clicks, what('recommendation_ctr_metrics')).toBe(clicked);
    expect(close(Number(metrics.percent_recommendations_with_clicks), share(clicked * 100, recs.length)), what('ctr percent')).toBe(true);
    expect(close(Number(metrics.avg_position_of_click), share(recs.reduce((sum, q) => sum + q.positionSum, 0), positioned)), what('ctr position')).toBe(true);
  }
}

describe.each(STORE_KINDS)('%s store: record rollups', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('stay the aggregate of the stored answers, recommendations, ratings and linked events, and serve the reports as the raw rows say', async () => {
    const r = rng(23);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const at = (): number => START + Math.floor(r() * SPAN);
    let n = 0;
    const id = (prefix: string): string => `00000000-0000-4000-${prefix}-${(n++).toString(16).padStart(12, '0')}`;
    const dataset = (): string => (r() < 0.8 ? DATASETS[0]! : DATASETS[1]!);
    const answer = (): RagRecord => ragRecord({ id: id('8000'), datasetId: dataset(), ragType: pick(RAG_TYPES), userMessage: pick(MESSAGES), createdAt: at() });
    const recommendation = (): RecommendationRecord =>
      recommendationRecord({ id: id('a000'), datasetId: dataset(), recommendationType: pick(REC_TYPES), topScore: 0.5, createdAt: at() });
    const rating = (q: RagRecord, value: number, over: Partial<QueryRating> = {}): QueryRating => ({
      kind: 'rag',
      datasetId: q.datasetId,
      queryId: q.id,
      rating: value,
      note: null,
      metadata: null,
      createdAt: q.createdAt,
      ...over,
    });
    const event = (type: UserEventType, requestId: string | null, datasetId: string, isConversion = type === 'purchase'): UserEvent => {
      const createdAt = at();
      return {
        id: id('9000'),
        datasetId,
        eventType: type,
        eventName: pick(EVENT_NAMES),
        items: [],
        metadata: null,
        userId: null,
        isConversion,
        requestId,
        requestType: null,
        location: null,
        position: type === 'click' && r() < 0.8 ? 1 + Math.floor(r() * 10) : null,
        clickedChunkId: null,
        revenue: type === 'purchase' ? 5 : 0,
        createdAt,
        updatedAt: createdAt,
      };
    };
    const linkedTo = (q: { id: string; datasetId: string }): UserEvent[] => {
      const type = pick<UserEventType>(['click', 'click', 'view', 'add_to_cart', 'purchase']);
      return Array.from({ length: 1 + Math.floor(r() * 3) }, () => event(type, q.id, q.datasetId, type === 'purchase' || r() < 0.1));
    };

    // Records that will come later: ratings and events naming them arrive first.
    const laterAnswers = Array.from({ length: 40 }, answer);
    const laterRecs = Array.from({ length: 30 }, recommendation);
    await store.analytics.rate(laterAnswers.filter(() => r() < 0.5).map((q) => rating(q, Math.floor(r() * 6) - 1)));
    expect(await store.userEvents.insertMany([...laterAnswers, ...laterRecs].filter(() => r() < 0.6).flatMap(linkedTo))).toBeGreaterThan(10);

    const answerBatches = Array.from({ length: 5 }, () => Array.from({ length: 40 + Math.floor(r() * 60) }, answer));
    const recBatches = Array.from({ length: 4 }, () => Array.from({ length: 30 + Math.floor(r() * 60) }, recommendation));
    for (const b of answerBatches) await store.analytics.insertRags(b);
    for (const b of recBatches) await store.analytics.insertRecommendations(b);
    // Redelivered batches count nothing twice.
    expect(await store.analytics.insertRags(answerBatches[1]!)).toBe(0);
    expect(await store.analytics.insertRecommendations([...recBatches[2]!.slice(0, 10), ...laterRecs.slice(0, 10)])).toBe(10);
    const answers = answerBatches.flat();
    const recs = [...recBatches.flat(), ...laterRecs.slice(0, 10)];

    // Ratings: of stored answers, replaced (some twice in one call), of the search kind or
    // through another dataset (neither counts).
    const rated = answers.filter(() => r() < 0.3);
    await store.analytics.rate(rated.map((q) => rating(q, Math.floor(r() * 6) - 1)));
    const other = (q: { datasetId: string }) => (q.datasetId === DATASETS[0] ? DATASETS[1]! : DATASETS[0]!);
    await store.analytics.rate([
      ...rated.slice(0, 15).map((q) => rating(q, 4)),
      rating(rated[15]!, 2),
      rating(rated[15]!, 0),
      rating(rated[16]!, 1, { kind: 'search' }),
      rating(rated[17]!, 1, { datasetId: other(rated[17]!) }),
    ]);

    // Events: several per record in one batch and across batches, another dataset's (not
    // counted), unknown requests, events without a request, a redelivered batch.
    const batch = [...answers, ...recs].filter(() => r() < 0.4).flatMap(linkedTo);
    expect(await store.userEvents.insertMany(batch)).toBe(batch.length);
    expect(await store.userEvents.insertMany(batch.slice(0, 50))).toBe(0);
    const more = [
      ...answers.slice(0, 30).flatMap(linkedTo),
      ...recs.slice(0, 20).map((q) => event('click', q.id, other(q))),
      ...Array.from({ length: 10 }, () => event('click', id('b000'), DATASETS[0]!)),
      ...Array.from({ length: 10 }, () => event('purchase', null, DATASETS[0]!)),
    ];
    expect(await store.userEvents.insertMany(more)).toBe(more.length);

    // The later records arrive, with what was stored for them.
    await store.analytics.insertRags(laterAnswers);
    await store.analytics.insertRecommendations(laterRecs);

    const check = async () => {
      expect(await rollupRows(store)).toEqual(await expectedRows(store));
      expect(await backfilled(t)).toEqual(await rollupRows(store));
      await expectMessageTotalsMatch(t);
      const lo = START + Math.floor(r() * SPAN * 0.4);
      const hi = lo + Math.floor(r() * SPAN * 0.6);
      const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
      for (const range of [undefined, { gte: START + DAY_MS, lt: START + 3 * DAY_MS }, { gt: lo, lte: hi }, { gte: lo }, { gte: inHour, lt: inHour + 1_800_000 }]) {
        await expectReportsMatch(store, DATASETS[0]!, range);
        await expectReportsMatch(store, DATASETS[1]!, range);
      }
    };
    await check();
    // The served reports read the rollups alone when the range has no partial hour (were they on
    // the raw path, the comparisons above would hold vacuously for the rollups).
    const seen: string[] = [];
    const recording: ReportSql = { dialect: store.reports.dialect, all: (text, params) => (seen.push(text), store.reports.all(text, params)) };
    const whole = { dateRange: { gte: START, lt: START + 3 * DAY_MS + 5 * HOUR_MS } };
    const graph = { filter: whole, granularity: 'day' as const };
    await Promise.all([
      ragUsage(recording, DATASETS[0]!, whole),
      ragQueryRatings(recording, DATASETS[0]!, whole),
      ragEventFunnel(recording, DATASETS[0]!, whole),
      ragUsageGraph(recording, DATASETS[0]!, graph),
      ragCtrOverTime(recording, DATASETS[0]!, graph),
      chatConversionRate(recording, DATASETS[0]!, graph),
      chatAverageRating(recording, DATASETS[0]!, graph),
      recommendationEventFunnel(recording, DATASETS[0]!, whole),
      recommendationUsageGraph(recording, DATASETS[0]!, graph),
      recommendationsCtrRate(recording, DATASETS[0]!, graph),
      recommendationConversionRate(recording, DATASETS[0]!, graph),
      ctrReport(recording, DATASETS[0]!, { type: 'recommendation_ctr_metrics', filter: whole }),
    ]);
    expect(seen.length).toBeGreaterThanOrEqual(12);
    expect(seen.filter((text) => /rag_queries|recommendation_queries|user_events/.test(text))).toEqual([]);

    const rows = await rollupRows(store);
    // Guards against a vacuous pass: every measure is non-zero somewhere.
    for (const col of [0, 1, 2, 3, 5, 6, 7, 8]) expect(rows.some((row) => row.key.startsWith('record_rollup') && row.values[col]! > 0), `column ${col}`).toBe(true);
    expect(rows.filter((row) => row.key.startsWith('record_event_rollup')).length).toBeGreaterThan(20);

    // A retention purge whose cutoff cuts an hour, then a dataset purge.
    await store.analytics.purgeBefore(START + DAY_MS + 5 * HOUR_MS + 17 * 60_000, 37);
    await check();
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    await check();
    expect((await rollupRows(store)).length).toBeGreaterThan(0);
  }, 120_000);
});
