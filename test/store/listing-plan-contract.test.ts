/**
 * Contract of the sorted listings of searches over a date range (store/reports/listing-plan.ts) on
 * both stores: SQLite walks the sort index when the range holds a large share of the dataset's
 * searches and reads the range when it holds a small one, as the rollups count them; and whatever
 * the plan, every page is the searches of the range in the asked order, ties by id.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import { listingIndex } from '../../store/reports/listing-plan.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { lowConfidenceQueries, searchQueries } from '../../store/reports/search-events.js';
import { DAY_MS, HOUR_MS } from '../../store/search-rollup-batch.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const START = Date.UTC(2024, 2, 1);
const DAYS = 30;

describe.each(STORE_KINDS)('%s store: sorted listings over a date range', (kind) => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(kind);
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('walk the sort index for a large share of the searches, read the range for a small one, and page as sorted', async () => {
    const r = rng(3);
    let n = 0;
    const searches: SearchRecord[] = Array.from({ length: 3000 }, () => ({
      id: `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
      datasetId: DATASET,
      kind: r() < 0.8 ? 'search' : 'autocomplete',
      searchMethod: 'hybrid',
      query: 'q',
      requestParams: null,
      // Few distinct values: ties broken by id.
      latencyMs: Math.floor(r() * 50),
      topScore: Math.floor(r() * 20) / 20,
      results: [],
      resultCount: 1,
      userId: null,
      metadata: null,
      createdAt: START + Math.floor(r() * DAYS * DAY_MS),
    }));
    for (let i = 0; i < searches.length; i += 500) await t.store.analytics.insertSearches(searches.slice(i, i + 500));
    const week: RangeBounds = { gte: START + 20 * DAY_MS + 5 * HOUR_MS + 17 };
    const hour: RangeBounds = { gte: START + 3 * DAY_MS + HOUR_MS, lt: START + 3 * DAY_MS + 2 * HOUR_MS };
    const page = { limit: 10, offset: 0 };
    const sql = t.store.reports;
    if (kind === 'sqlite') {
      expect(await listingIndex(sql, DATASET, { dateRange: week }, 'latency', page)).toBe('search_queries_latency');
      expect(await listingIndex(sql, DATASET, { dateRange: week, searchType: 'search' }, 'top_score', page)).toBe('search_queries_top_score');
      expect(await listingIndex(sql, DATASET, { dateRange: hour }, 'latency', page)).toBe('search_queries_dataset');
      // Deep pages walk further: past the range's size, the range read.
      expect(await listingIndex(sql, DATASET, { dateRange: week }, 'latency', { limit: 10, offset: 500 })).toBe('search_queries_dataset');
      // Conditions the rollups cannot count leave the planner its choice.
      expect(await listingIndex(sql, DATASET, { dateRange: week, query: 'q' }, 'latency', page)).toBeUndefined();
    } else {
      expect(await listingIndex(sql, DATASET, { dateRange: week }, 'latency', page)).toBeUndefined();
    }
    const inRange = (range: RangeBounds) => searches.filter((s) => s.createdAt >= (range.gte ?? -Infinity) && s.createdAt < (range.lt ?? Infinity));
    const byId = (a: SearchRecord, b: SearchRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    for (const range of [week, hour]) {
      for (const p of [page, { limit: 25, offset: 40 }]) {
        const listed = await searchQueries(sql, DATASET, { filter: { dateRange: range }, page: p, sortBy: 'latency', sortOrder: 'desc' });
        const latencyDesc = inRange(range).sort((a, b) => b.latencyMs - a.latencyMs || byId(a, b));
        expect(listed.map((x) => x.search.id), `latency ${JSON.stringify(range)} ${JSON.stringify(p)}`).toEqual(latencyDesc.slice(p.offset, p.offset + p.limit).map((s) => s.id));
        const low = await lowConfidenceQueries(sql, DATASET, { filter: { dateRange: range }, page: p, threshold: 0.5 });
        const lowest = inRange(range)
          .filter((s) => s.topScore < 0.5)
          .sort((a, b) => a.topScore - b.topScore || byId(a, b));
        expect(low.map((x) => x.search.id), `low confidence ${JSON.stringify(range)} ${JSON.stringify(p)}`).toEqual(lowest.slice(p.offset, p.offset + p.limit).map((s) => s.id));
      }
    }
  });
});
