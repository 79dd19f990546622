/**
 * The report SQL surface gives the same answers on both stores: `?` parameters in order, the
 * string at a JSON key and the object at one (only strings, only objects: numbers, booleans, null, absent keys and non-objects give
 * null on both; the `\u0000` escape PostgreSQL's jsonb refuses does not fail the query), and the
 * start of the UTC bucket of each granularity, months by the calendar.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { bucketStart, jsonObjectText, jsonText, reportTimestamp, type Granularity } from '../../store/reports/report-sql.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';

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

/** The bucket start computed with Date: what the SQL must agree with. */
function truncate(ms: number, granularity: Granularity): number {
  const d = new Date(ms);
  if (granularity === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const size = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }[granularity];
  return Math.floor(ms / size) * size;
}
