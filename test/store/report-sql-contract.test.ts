/**
 * The report SQL surface gives the same answers on both stores: `?` parameters in order, the
 * string at a JSON key and the object at one (only strings, only objects: numbers, booleans, null, absent keys and non-objects give
 * null on both; the `\u0000` escape PostgreSQL's jsonb refuses does not fail the query), and the
 * start of the UTC bucket of each granularity, months by the calendar; and listings filtered by a
 * linked click page their records right whatever index sorts them.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { bucketStart, jsonObjectText, jsonText, reportTimestamp, type Granularity } from '../../store/reports/report-sql.js';
import { recommendationQueries } from '../../store/reports/recommendation-reports.js';
import { searchQueries } from '../../store/reports/search-events.js';
import { recommendationRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';
import { userEvent } from '../helpers/user-event.js';

const METADATA = [
  '{"component_name":"bar"}',
  '{"component_name":1}',
  '{"component_name":true}',
  '{"component_name":null}',
  '{"other":"bar"}',
  '[1]',
  null,
  '{"x":"\\u0000","component_name":"kept"}',
  '{"component_name":{"b":[1,"x"],"a":null}}',
];
const EXPECTED = ['bar', null, null, null, null, null, null, 'kept', null];
/** What jsonObjectText gives, parsed (the engines space JSON text differently). */
const EXPECTED_OBJECTS = [null, null, null, null, null, null, null, null, { b: [1, 'x'], a: null }];

describe.each(STORE_KINDS)('report SQL on %s', (kind) => {
  let t: TestStore;
  afterEach(async () => {
    await t?.dispose();
  });

  it('reads the string at a JSON key alike, and buckets times by the UTC calendar', async () => {
    t = await openTestStore(kind);
    const datasetId = randomUUID();
    const times = [Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2024, 11, 31, 12, 30, 5, 250), Date.UTC(1999, 0, 1, 0, 0, 0, 0)];
    await t.store.analytics.insertSearches(
      METADATA.map((metadata, i) => ({
        id: randomUUID(),
        datasetId,
        kind: 'search' as const,
        searchMethod: 'bm25',
        query: `q${i}`,
        requestParams: {},
        latencyMs: i,
        topScore: 0,
        results: [],
        resultCount: 0,
        userId: null,
        metadata: metadata === null ? null : JSON.parse(metadata),
        createdAt: times[i % times.length]!,
      })),
    );
    const sql = t.store.reports;
    const strings = await sql.all<{ v: string | null }>(
      `SELECT ${jsonText(sql.dialect, 'metadata', 'component_name')} AS v FROM search_queries WHERE dataset_id = ? ORDER BY latency`,
      [datasetId],
    );
    expect(strings.map((r) => r.v)).toEqual(EXPECTED);
    const objects = await sql.all<{ v: string | null }>(
      `SELECT ${jsonObjectText(sql.dialect, 'metadata', 'component_name')} AS v FROM search_queries WHERE dataset_id = ? ORDER BY latency`,
      [datasetId],
    );
    expect(objects.map((r) => (r.v === null ? null : JSON.parse(r.v)))).toEqual(EXPECTED_OBJECTS);

    for (const granularity of ['second', 'minute', 'hour', 'day', 'month'] as Granularity[]) {
      const rows = await sql.all<{ b: number | string }>(
        `SELECT DISTINCT ${bucketStart(sql.dialect, granularity, 'created_at')} AS b FROM search_queries WHERE dataset_id = ? ORDER BY b`,
        [datasetId],
      );
      const expected = [...new Set(times.map((ms) => truncate(ms, granularity)))].sort((a, b) => a - b);
      expect(rows.map((r) => reportTimestamp(Number(r.b))), granularity).toEqual(expected.map(reportTimestamp));
    }
  });
});

describe.each(STORE_KINDS)('listings with linked clicks on %s', (kind) => {
  let t: TestStore;
  afterEach(async () => {
    await t?.dispose();
  });

  // SQLite 3.51 ran a plain EXISTS as a join: where the rows came sorted from an index (latency,
  // top score) with an OFFSET, each extra click of a record counted against the OFFSET, and a
  // second page started early (store/reports/linked-events.ts).
  it('page records with several clicks each as one record, sorted by an indexed column', async () => {
    t = await openTestStore(kind);
    const datasetId = randomUUID();
    const r = rng(5);
    const at = Date.UTC(2024, 5, 1);
    const ids = Array.from({ length: 45 }, () => randomUUID());
    const scores = ids.map(() => Math.round(r() * 20) / 20);
    const clicks = ids.map(() => (r() < 0.6 ? 1 + Math.floor(r() * 4) : 0));
    await t.store.analytics.insertSearches(
      ids.map((id, i) => ({
        id,
        datasetId,
        kind: 'search' as const,
        searchMethod: 'bm25',
        query: 'q',
        requestParams: {},
        latencyMs: scores[i]! * 100,
        topScore: scores[i]!,
        results: [],
        resultCount: 1,
        userId: null,
        metadata: null,
        createdAt: at + i * 60_000,
      })),
    );
    await t.store.analytics.insertRecommendations(
      ids.map((id, i) => recommendationRecord({ id, datasetId, topScore: scores[i]!, createdAt: at + i * 60_000 })),
    );
    await t.store.userEvents.insertMany(
      ids.flatMap((id, i) => Array.from({ length: clicks[i]! }, () => userEvent({ datasetId, eventType: 'click', requestId: id, createdAt: at + i * 60_000 }))),
    );
    const sql = t.store.reports;
    const range = { gte: at + 2 * 60_000, lt: at + 43 * 60_000 };
    for (const hasClicks of [true, false]) {
      for (const order of ['asc', 'desc'] as const) {
        const expected = ids
          .map((id, i) => ({ id, score: scores[i]!, i }))
          .filter(({ i }) => i >= 2 && i < 43 && clicks[i]! > 0 === hasClicks)
          .sort((a, b) => (order === 'asc' ? a.score - b.score : b.score - a.score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map(({ id }) => id);
        for (const offset of [0, 10, 20]) {
          const page = { limit: 10, offset };
          const want = expected.slice(offset, offset + 10);
          for (const sortBy of ['top_score', 'latency'] as const) {
            const searches = await searchQueries(sql, datasetId, { filter: { dateRange: range }, page, hasClicks, sortBy, sortOrder: order });
            expect(searches.map((s) => s.search.id), `searches ${sortBy} ${order} ${hasClicks} ${offset}`).toEqual(want);
          }
          const recs = await recommendationQueries(sql, datasetId, { filter: { dateRange: range }, page, hasClicks, sortBy: 'top_score', sortOrder: order });
          expect(recs.map((q) => q.id), `recommendations ${order} ${hasClicks} ${offset}`).toEqual(want);
        }
      }
    }
  });
});

/** The bucket start computed with Date: what the SQL must agree with. */
function truncate(ms: number, granularity: Granularity): number {
  const d = new Date(ms);
  if (granularity === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const size = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }[granularity];
  return Math.floor(ms / size) * size;
}
