/**
 * Search and recommendation listings on both stores (store/reports/tie-pages.ts): the page's last
 * value is found first and the records tied at it are taken by id, so pages must be exactly those
 * of a sort of every matching record by (column, id ascending), however large the blocks of ties:
 * top scores and latencies drawn from a few values, times with ties, both orders, pages across
 * the tie blocks and past the end, with and without filters (a date range lets SQLite pick the
 * sort index or the date index: both must give the same pages).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import { lowConfidenceRecommendations, RECOMMENDATION_SORT_COLUMNS, recommendationQueries } from '../../store/reports/recommendation-reports.js';
import { lowConfidenceQueries, noResultQueries, SEARCH_SORT_COLUMNS, searchQueries } from '../../store/reports/search-events.js';
import { recommendationRecord, searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const T0 = 1_700_000_000_000;
const N = 150;

/** Ids out of insertion order, so that id order is neither time nor score order. */
const idOf = (i: number): string => `00000000-0000-4000-8000-${((i * 37) % N).toString(16).padStart(12, '0')}`;

const r = rng(43);
const searches: SearchRecord[] = Array.from({ length: N }, (_, i) =>
  searchRecord({
    id: idOf(i),
    datasetId: r() < 0.85 ? DATASET : OTHER,
    searchMethod: r() < 0.5 ? 'bm25' : 'hybrid',
    topScore: [0, 0.25, 0.5][Math.floor(r() * 3)]!,
    latencyMs: [1, 2][Math.floor(r() * 2)]!,
    resultCount: r() < 0.4 ? 0 : 3,
    createdAt: T0 + Math.floor(r() * 10) * 60_000,
  }),
);
const recommendations: RecommendationRecord[] = Array.from({ length: N }, (_, i) =>
  recommendationRecord({
    id: idOf(i),
    datasetId: r() < 0.85 ? DATASET : OTHER,
    recommendationType: r() < 0.5 ? 'Chunk' : 'Group',
    topScore: [0, 0.25, 0.5][Math.floor(r() * 3)]!,
    createdAt: T0 + Math.floor(r() * 10) * 60_000,
  }),
);

const COLUMN_OF = { created_at: 'createdAt', latency: 'latencyMs', top_score: 'topScore' } as const;

/** `records` sorted by (column, id ascending), the oracle of every page. */
function sorted<R extends { id: string }>(records: readonly R[], value: (x: R) => number, order: 'asc' | 'desc'): R[] {
  return [...records].sort((a, b) => (order === 'asc' ? 1 : -1) * (value(a) - value(b)) || (a.id < b.id ? -1 : 1));
}

const pagesOf = (n: number) => [
  { limit: 10, offset: 0 },
  { limit: 10, offset: 20 },
  { limit: 7, offset: 33 },
  { limit: 25, offset: 50 },
  { limit: 10, offset: n - 3 },
  { limit: 10, offset: n + 5 },
];

describe.each(STORE_KINDS)('%s store: search and recommendation listings across ties', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
    await t.store.analytics.insertSearches(searches);
    await t.store.analytics.insertRecommendations(recommendations);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('search_queries pages are those of a full sort by (column, id)', async () => {
    type Filter = { searchMethod?: 'bm25'; dateRange?: { gte: number; lte: number } };
    const filters: Filter[] = [{}, { searchMethod: 'bm25' }, { dateRange: { gte: T0 + 2 * 60_000, lte: T0 + 7 * 60_000 } }];
    const matches = (s: SearchRecord, f: Filter): boolean =>
      s.datasetId === DATASET &&
      (f.searchMethod === undefined || s.searchMethod === f.searchMethod) &&
      (f.dateRange === undefined || (s.createdAt >= f.dateRange.gte && s.createdAt <= f.dateRange.lte));
    for (const filter of filters) {
      const mine = searches.filter((s) => matches(s, filter));
      for (const sortBy of SEARCH_SORT_COLUMNS) {
        for (const sortOrder of ['asc', 'desc'] as const) {
          const want = sorted(mine, (s) => s[COLUMN_OF[sortBy]], sortOrder);
          for (const page of pagesOf(mine.length)) {
            const got = await searchQueries(t.store.reports, DATASET, { filter, page, sortBy, sortOrder });
            expect(
              got.map((s) => s.search.id),
              `${sortBy} ${sortOrder} ${JSON.stringify(filter)} ${JSON.stringify(page)}`,
            ).toEqual(want.slice(page.offset, page.offset + page.limit).map((s) => s.id));
          }
        }
      }
    }
  });

  it('low-confidence and no-result pages are those of a full sort too', async () => {
    const mine = searches.filter((s) => s.datasetId === DATASET);
    const low = sorted(
      mine.filter((s) => s.topScore < 0.5),
      (s) => s.topScore,
      'asc',
    );
    const none = sorted(
      mine.filter((s) => s.resultCount === 0),
      (s) => s.createdAt,
      'desc',
    );
    for (const page of pagesOf(mine.length)) {
      const gotLow = await lowConfidenceQueries(t.store.reports, DATASET, { filter: {}, page, threshold: 0.5 });
      expect(gotLow.map((s) => s.search.id)).toEqual(low.slice(page.offset, page.offset + page.limit).map((s) => s.id));
      const gotNone = await noResultQueries(t.store.reports, DATASET, { filter: {}, page });
      expect(gotNone.map((s) => s.search.id)).toEqual(none.slice(page.offset, page.offset + page.limit).map((s) => s.id));
    }
  });

  it('recommendation pages are those of a full sort by (column, id)', async () => {
    for (const recommendationType of [undefined, 'Group'] as const) {
      const mine = recommendations.filter((x) => x.datasetId === DATASET && (recommendationType === undefined || x.recommendationType === recommendationType));
      for (const sortBy of RECOMMENDATION_SORT_COLUMNS) {
        for (const sortOrder of ['asc', 'desc'] as const) {
          const want = sorted(mine, (x) => (sortBy === 'top_score' ? x.topScore : x.createdAt), sortOrder);
          for (const page of pagesOf(mine.length)) {
            const got = await recommendationQueries(t.store.reports, DATASET, { filter: { recommendationType }, page, sortBy, sortOrder });
            expect(
              got.map((x) => x.id),
              `${sortBy} ${sortOrder} ${recommendationType} ${JSON.stringify(page)}`,
            ).toEqual(want.slice(page.offset, page.offset + page.limit).map((x) => x.id));
          }
        }
      }
      const low = sorted(
        mine.filter((x) => x.topScore < 0.25),
        (x) => x.topScore,
        'asc',
      );
      for (const page of pagesOf(mine.length)) {
        const got = await lowConfidenceRecommendations(t.store.reports, DATASET, { filter: { recommendationType }, page, threshold: 0.25 });
        expect(got.map((x) => x.id)).toEqual(low.slice(page.offset, page.offset + page.limit).map((x) => x.id));
      }
    }
  });
});
