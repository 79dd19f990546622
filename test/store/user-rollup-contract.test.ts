/**
 * Contract of the per-user rollups on both stores (store/user-rollup-batch.ts): after seeded random
 * searches, RAG answers and recommendations with and without users (batches out of time order,
 * redelivered), a retention purge cutting an hour and a dataset purge, every rollup row holds
 * exactly the records with a user of its key and the set of those users (computed here from the raw
 * tables, and by the migration's fill), and `searches_per_user`, `messages_per_user` and
 * `recommendations_per_user` answer what this test computes from the raw rows, for every filter
 * the rollups serve, aligned and unaligned ranges, at hour, day and month granularity.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecommendationRecord, SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord, RagType } from '../../core/domain/rag.js';
import { searchesPerUser } from '../../store/reports/search-graphs.js';
import { messagesPerUser } from '../../store/reports/rag-reports.js';
import { recommendationsPerUser } from '../../store/reports/recommendation-reports.js';
import { reportTimestamp, type Granularity, type RangeBounds, type ReportSql } from '../../store/reports/report-sql.js';
import type { Store } from '../../store/repository.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { clientSql } from '../../store/postgres/database.js';
import { fillUserRollups as fillPg } from '../../store/postgres/user-rollup.js';
import { fillUserRollups as fillSqlite } from '../../store/sqlite/user-rollup.js';
import { ANY, USER_ORDINALS, USER_ROLLUP_TABLES, USER_SOURCES, type UserSource } from '../../store/user-rollup-batch.js';
import { decodeUserSet } from '../../store/user-set.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { ragRecord, recommendationRecord, searchRecord } from '../helpers/analytics-record.js';
import { rng } from '../helpers/random-corpus.js';
import { bucketOf, inRange } from '../helpers/report-buckets.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const KINDS: SearchKind[] = ['search', 'autocomplete', 'rag'];
const METHODS = ['bm25', 'hybrid', 'semantic'];
const RAG_TYPES: RagType[] = ['chosen_chunks', 'all_chunks'];
const REC_TYPES = ['Chunk', 'Group'] as const;
/** Users, some of whose ids differ only by case or are not ASCII. */
const USERS = ['u1', 'U1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9', '\u{1F600}', 'a b', 'x'.repeat(200)];
/** Five days across a month's end, so that month buckets split the range. */
const START = Date.UTC(2024, 0, 29, 0, 0, 0);
const SPAN = 5 * DAY_MS;

/** A rollup row as user ids, comparable: key, records, users, and the user ids of its set. */
type Row = { key: string; records: number; users: number; members: string[] };
const byKey = (a: Row, b: Row): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The rollup rows of `tables` (rows of each table, then the ordinals), with their sets as user ids. */
function asRows(tables: readonly Record<string, any>[][], ordinals: readonly Record<string, any>[]): Row[] {
  const userOf = new Map(ordinals.map((o) => [`${o.dataset_id}|${Number(o.ordinal)}`, String(o.user_id)]));
  expect(userOf.size, 'ordinals are unique per dataset').toBe(ordinals.length);
  return USER_ROLLUP_TABLES.flatMap((t, i) =>
    tables[i]!.map((r) => {
      const members = decodeUserSet(new Uint8Array(r.members)).map((o) => userOf.get(`${r.dataset_id}|${o}`)!);
      expect(members.every((m) => m !== undefined), 'every member has an ordinal').toBe(true);
      return { key: `${t.table}|${r.dataset_id}|${Number(r[t.column])}|${r.source}|${r.type}|${r.method}`, records: Number(r.records), users: Number(r.users), members: members.sort() };
    }),
  ).sort(byKey);
}

const ROLLUP_READS = [...USER_ROLLUP_TABLES.map((t) => `SELECT * FROM ${t.table}`), `SELECT * FROM ${USER_ORDINALS}`];

async function rollupRows(store: Store): Promise<Row[]> {
  const read = await Promise.all(ROLLUP_READS.map((text) => store.reports.all(text, [])));
  return asRows(read.slice(0, -1), read.at(-1)!);
}

/** A stored record with a user, from the raw tables. */
interface RawRecord {
  datasetId: string;
  createdAt: number;
  source: UserSource;
  type: string;
  method: string;
  userId: string;
}

async function rawRecords(store: Store): Promise<RawRecord[]> {
  const out: RawRecord[] = [];
  for (const src of USER_SOURCES) {
    const rows = await store.reports.all(`SELECT dataset_id, created_at, ${src.typeColumn} AS type, ${src.methodColumn ?? "''"} AS method, user_id FROM ${src.table} WHERE user_id IS NOT NULL`, []);
    for (const q of rows) out.push({ datasetId: String(q.dataset_id), createdAt: Number(q.created_at), source: src.source, type: String(q.type), method: String(q.method), userId: String(q.user_id) });
  }
  return out;
}

/** The rows the stored records call for. */
async function expectedRows(store: Store): Promise<Row[]> {
  const rows = new Map<string, { records: number; users: Set<string> }>();
  for (const q of await rawRecords(store)) {
    for (const t of USER_ROLLUP_TABLES) {
      const start = Math.trunc(q.createdAt / t.periodMs) * t.periodMs;
      for (const [type, method] of [
        [q.type, q.method],
        [ANY, ANY],
      ]) {
        const key = `${t.table}|${q.datasetId}|${start}|${q.source}|${type}|${method}`;
        const row = rows.get(key) ?? rows.set(key, { records: 0, users: new Set() }).get(key)!;
        row.records++;
        row.users.add(q.userId);
      }
    }
  }
  return [...rows].map(([key, r]) => ({ key, records: r.records, users: r.users.size, members: [...r.users].sort() })).sort(byKey);
}

/** What the migration's fill computes from the stored records now (ordinals assigned afresh), in a transaction rolled back. */
async function filled(t: TestStore): Promise<Row[]> {
  const wipe = [...USER_ROLLUP_TABLES.map((table) => `DELETE FROM ${table.table}`), `DELETE FROM ${USER_ORDINALS}`];
  const fill = {
    sqlite: fillSqlite,
    postgres: (c: import('pg').Client) => fillPg(clientSql(c)),
  };
  const read = await readInRolledBackTx(t.loc, [...wipe, fill], ROLLUP_READS);
  return asRows(read.slice(0, -1), read.at(-1)!);
}

/** Records per distinct user, over `records` and per bucket: what the three reports answer. */
function perUser(records: readonly RawRecord[], g: Granularity): { total: number; points: { time_stamp: string; point: number }[] } {
  const ratio = (rs: readonly RawRecord[]): number => (rs.length === 0 ? 0 : rs.length / new Set(rs.map((q) => q.userId)).size);
  const by = new Map<number, RawRecord[]>();
  for (const q of records) by.set(bucketOf(q.createdAt, g), [...(by.get(bucketOf(q.createdAt, g)) ?? []), q]);
  return {
    total: ratio(records),
    points: [...by.entries()].sort((a, b) => a[0] - b[0]).map(([at, rs]) => ({ time_stamp: reportTimestamp(at), point: ratio(rs) })),
  };
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function expectSame(actual: { total: number; points: { time_stamp: string; point: number }[] }, expected: ReturnType<typeof perUser>, what: string): void {
  expect(close(actual.total, expected.total), `${what} total ${actual.total} for ${expected.total}`).toBe(true);
  expect(
    actual.points.map((p) => p.time_stamp),
    what,
  ).toEqual(expected.points.map((p) => p.time_stamp));
  actual.points.forEach((p, i) => expect(close(p.point, expected.points[i]!.point), `${what} ${p.time_stamp}: ${p.point} for ${expected.points[i]!.point}`).toBe(true));
}

async function expectReportsMatch(sql: ReportSql, all: readonly RawRecord[], datasetId: string, range: RangeBounds | undefined): Promise<void> {
  const mine = all.filter((q) => q.datasetId === datasetId && inRange(q.createdAt, range));
  const what = (name: string) => `${name} ${datasetId.slice(0, 2)} ${JSON.stringify(range)}`;
  for (const granularity of ['hour', 'day', 'month'] as const) {
    for (const [searchType, searchMethod] of [[undefined, undefined], ['search', undefined], [undefined, 'hybrid'], ['autocomplete', 'bm25']] as const) {
      const searches = mine.filter((q) => q.source === 'search' && (searchType === undefined || q.type === searchType) && (searchMethod === undefined || q.method === searchMethod));
      const got = await searchesPerUser(sql, datasetId, { filter: { dateRange: range, searchType, searchMethod }, granularity });
      expectSame({ total: got.avg_searches_per_user, points: got.points }, perUser(searches, granularity), what(`searches_per_user ${searchType}/${searchMethod} ${granularity}`));
    }
    for (const ragType of [undefined, ...RAG_TYPES]) {
      const answers = mine.filter((q) => q.source === 'rag' && (ragType === undefined || q.type === ragType));
      const got = await messagesPerUser(sql, datasetId, { filter: { dateRange: range, ragType }, granularity });
      expectSame({ total: got.avg_messages_per_user, points: got.points }, perUser(answers, granularity), what(`messages_per_user ${ragType} ${granularity}`));
    }
    for (const recommendationType of [undefined, ...REC_TYPES]) {
      const recs = mine.filter((q) => q.source === 'recommendation' && (recommendationType === undefined || q.type === recommendationType));
      const got = await recommendationsPerUser(sql, datasetId, { filter: { dateRange: range, recommendationType }, granularity });
      expectSame({ total: got.avg_recommendations_per_user, points: got.points }, perUser(recs, granularity), what(`recommendations_per_user ${recommendationType} ${granularity}`));
    }
  }
}

describe.each(STORE_KINDS)('%s store: per-user rollups', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('hold exactly the users of their records through redelivered batches and purges, and serve the per-user reports as the raw rows say', async () => {
    const r = rng(31);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const at = (): number => START + Math.floor(r() * SPAN);
    let n = 0;
    const id = (prefix: string): string => `00000000-0000-4000-${prefix}-${(n++).toString(16).padStart(12, '0')}`;
    const dataset = (): string => (r() < 0.8 ? DATASETS[0]! : DATASETS[1]!);
    const user = (): string | null => (r() < 0.15 ? null : pick(USERS));
    const search = (): SearchRecord =>
      searchRecord({ id: id('8000'), datasetId: dataset(), kind: pick(KINDS), searchMethod: pick(METHODS), userId: user(), createdAt: at() });
    const answer = (): RagRecord => ragRecord({ id: id('9000'), datasetId: dataset(), ragType: pick(RAG_TYPES), userId: user(), createdAt: at() });
    const recommendation = (): RecommendationRecord =>
      recommendationRecord({ id: id('a000'), datasetId: dataset(), recommendationType: pick(REC_TYPES), topScore: 0.5, userId: user(), createdAt: at() });

    // Each batch spans the whole range (records arrive out of time order across batches).
    const searchBatches = Array.from({ length: 8 }, () => Array.from({ length: 40 + Math.floor(r() * 100) }, search));
    const answerBatches = Array.from({ length: 4 }, () => Array.from({ length: 30 + Math.floor(r() * 60) }, answer));
    const recBatches = Array.from({ length: 4 }, () => Array.from({ length: 30 + Math.floor(r() * 60) }, recommendation));
    for (let i = 0; i < 8; i++) {
      await store.analytics.insertSearches(searchBatches[i]!);
      if (i < 4) await store.analytics.insertRags(answerBatches[i]!);
      if (i < 4) await store.analytics.insertRecommendations(recBatches[i]!);
    }
    // Redelivered batches count nothing twice; a mixed one counts its new records.
    expect(await store.analytics.insertSearches(searchBatches[2]!)).toBe(0);
    expect(await store.analytics.insertRags([...answerBatches[1]!.slice(0, 10), ...Array.from({ length: 7 }, answer)])).toBe(7);
    expect(await store.analytics.insertRecommendations(recBatches[3]!)).toBe(0);

    const check = async () => {
      const rows = await rollupRows(store);
      expect(rows).toEqual(await expectedRows(store));
      expect(await filled(t)).toEqual(rows);
      const all = await rawRecords(store);
      const lo = START + Math.floor(r() * SPAN * 0.4);
      const hi = lo + Math.floor(r() * SPAN * 0.6);
      const inHour = START + 2 * DAY_MS + 7 * HOUR_MS + 1000;
      for (const range of [undefined, { gte: START + DAY_MS, lt: START + 3 * DAY_MS }, { gt: lo, lte: hi }, { gte: lo }, { gte: inHour, lt: inHour + 1_800_000 }]) {
        for (const datasetId of DATASETS) await expectReportsMatch(store.reports, all, datasetId, range);
      }
    };
    await check();
    const rows = await rollupRows(store);
    // Guards against a vacuous pass: sets of several users, rows of every source, records without a user left out.
    expect(rows.filter((row) => row.users >= 3).length).toBeGreaterThan(50);
    for (const src of USER_SOURCES) expect(rows.some((row) => row.key.includes(`|${src.source}|`))).toBe(true);
    expect(await store.reports.all('SELECT id FROM search_queries WHERE user_id IS NULL', [])).not.toEqual([]);

    // The served reports read the rollups alone when the range has no partial hour (were they on
    // the raw path, the comparisons above would hold vacuously for the rollups).
    const seen: string[] = [];
    const recording: ReportSql = { dialect: store.reports.dialect, all: (text, params) => (seen.push(text), store.reports.all(text, params)) };
    const whole = { dateRange: { gte: START, lt: START + 3 * DAY_MS + 5 * HOUR_MS } };
    for (const granularity of ['hour', 'day', 'month'] as const) {
      await searchesPerUser(recording, DATASETS[0]!, { filter: whole, granularity });
      await searchesPerUser(recording, DATASETS[0]!, { filter: { ...whole, searchType: 'search' }, granularity });
      await messagesPerUser(recording, DATASETS[0]!, { filter: whole, granularity });
      await recommendationsPerUser(recording, DATASETS[0]!, { filter: whole, granularity });
    }
    expect(seen.length).toBeGreaterThanOrEqual(24);
    expect(seen.filter((text) => /search_queries|rag_queries|recommendation_queries/.test(text))).toEqual([]);

    // A retention purge whose cutoff cuts an hour (in slices that cut hours too), then a dataset purge.
    await store.analytics.purgeBefore(START + DAY_MS + 5 * HOUR_MS + 17 * 60_000, 37);
    await check();
    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    expect((await rollupRows(store)).filter((row) => row.key.includes(DATASETS[1]!))).toEqual([]);
    expect(await store.reports.all(`SELECT * FROM ${USER_ORDINALS} WHERE dataset_id = ?`, [DATASETS[1]!])).toEqual([]);
    await check();
    expect((await rollupRows(store)).length).toBeGreaterThan(0);
  }, 180_000);
});
