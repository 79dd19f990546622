/**
 * Contract of the analytics repository on both stores: inserts keep one record per id (across
 * calls and within a batch, the first one winning) and say how many were new, a record reads back
 * as it was written, the list is newest first (ties by id) by page, and purgeBefore deletes
 * exactly the records older than the cutoff, in batches, from both tables.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { Store } from '../../store/repository.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';

/** A search record; `over` replaces fields. */
const search = (over: Partial<SearchRecord> = {}): SearchRecord => ({
  id: randomUUID(),
  datasetId: DATASET,
  kind: 'search',
  searchMethod: 'hybrid',
  query: 'red shoes',
  requestParams: { query: 'red shoes', page_size: 10, filters: { must: [{ field: 'tag_set', match_any: ['x'] }] } },
  latencyMs: 12.5,
  topScore: 0.875,
  results: [
    { id: 'a', score: 0.875 },
    { id: 'b', score: 0.5 },
  ],
  resultCount: 2,
  userId: 'user-1',
  metadata: { source: 'test', n: [1, 2] },
  createdAt: 1_700_000_000_000,
  ...over,
});

/** A recommendation record; `over` replaces fields. */
const recommendation = (over: Partial<RecommendationRecord> = {}): RecommendationRecord => ({
  id: randomUUID(),
  datasetId: DATASET,
  recommendationType: 'Chunk',
  positiveIds: ['p1'],
  negativeIds: [],
  positiveTrackingIds: [],
  negativeTrackingIds: ['n1'],
  requestParams: { positive_chunk_ids: ['p1'] },
  results: [{ id: 'r', score: 0.25 }],
  topScore: 0.25,
  userId: null,
  metadata: null,
  createdAt: 1_700_000_000_000,
  ...over,
});

describe.each(STORE_KINDS)('%s store: analytics', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('reads a search record back as it was written', async () => {
    const full = search();
    const bare = search({ userId: null, metadata: null, results: [], resultCount: 0, topScore: 0, requestParams: null, kind: 'rag', searchMethod: 'semantic' });
    expect(await store.analytics.insertSearches([full, bare])).toBe(2);
    expect(await store.analytics.getSearch(DATASET, full.id)).toEqual(full);
    expect(await store.analytics.getSearch(DATASET, bare.id)).toEqual(bare);
    // Another dataset's id, or an unknown one.
    expect(await store.analytics.getSearch(OTHER, full.id)).toBeUndefined();
    expect(await store.analytics.getSearch(DATASET, randomUUID())).toBeUndefined();
  });

  it('stores what JSON could not carry as the columns allow: NaN and Infinity scores as 0, absent JSON as null', async () => {
    const odd = search({ latencyMs: Number.NaN, topScore: Number.POSITIVE_INFINITY, requestParams: undefined, metadata: undefined });
    expect(await store.analytics.insertSearches([odd])).toBe(1);
    expect(await store.analytics.getSearch(DATASET, odd.id)).toEqual({ ...odd, latencyMs: 0, topScore: 0, requestParams: null, metadata: null });
  });

  it('skips a record missing a required field, as SQLite\'s INSERT OR IGNORE does, and keeps the rest of its batch', async () => {
    const good = search();
    const noQuery = search({ query: null as unknown as string });
    const noCount = search({ resultCount: undefined as unknown as number });
    expect(await store.analytics.insertSearches([noQuery, good, noCount])).toBe(1);
    expect(await store.analytics.getSearch(DATASET, good.id)).toEqual(good);
    expect(await store.analytics.getSearch(DATASET, noQuery.id)).toBeUndefined();
    expect(await store.analytics.getSearch(DATASET, noCount.id)).toBeUndefined();
    const noType = recommendation({ recommendationType: undefined as unknown as 'Chunk' });
    expect(await store.analytics.insertRecommendations([noType, recommendation()])).toBe(1);
  });

  it('keeps a query holding the NUL character (replaced on PostgreSQL, which cannot store it)', async () => {
    const nul = search({ query: 'a\u0000b', userId: '\u0000' });
    expect(await store.analytics.insertSearches([nul, search()])).toBe(2);
    const stored = await store.analytics.getSearch(DATASET, nul.id);
    expect(stored).toEqual(kind === 'sqlite' ? nul : { ...nul, query: 'a\uFFFDb', userId: '\uFFFD' });
  });

  it('ignores ids already stored, across calls and within a batch (the first record wins)', async () => {
    const a = search({ query: 'first' });
    const b = search();
    expect(await store.analytics.insertSearches([])).toBe(0);
    expect(await store.analytics.insertSearches([a, { ...a, query: 'second' }, b])).toBe(2);
    expect((await store.analytics.getSearch(DATASET, a.id))!.query).toBe('first');
    expect(await store.analytics.insertSearches([{ ...b, query: 'again' }, a])).toBe(0);
    const c = search();
    expect(await store.analytics.insertSearches([a, c, b])).toBe(1);
    expect((await store.analytics.getSearch(DATASET, b.id))!.query).toBe('red shoes');
    expect(await store.analytics.listSearches(DATASET, { limit: 100, offset: 0 })).toHaveLength(3);

    const r = recommendation();
    expect(await store.analytics.insertRecommendations([])).toBe(0);
    expect(await store.analytics.insertRecommendations([r, r, recommendation()])).toBe(2);
    expect(await store.analytics.insertRecommendations([r])).toBe(0);
  });

  it('stores a large batch in one call', async () => {
    const batch = Array.from({ length: 3000 }, (_, i) => search({ createdAt: 1_700_000_000_000 + i, query: `q${i}` }));
    expect(await store.analytics.insertSearches(batch)).toBe(3000);
    const newest = await store.analytics.listSearches(DATASET, { limit: 2, offset: 0 });
    expect(newest).toEqual([batch[2999], batch[2998]]);
  });

  it('lists a dataset\'s searches newest first, ties by id, by page', async () => {
    const ids = Array.from({ length: 6 }, () => randomUUID());
    const records = [
      search({ id: ids[0], createdAt: 1000 }),
      search({ id: ids[1], createdAt: 3000 }),
      search({ id: ids[2], createdAt: 2000 }),
      search({ id: ids[3], createdAt: 3000 }),
      search({ id: ids[4], createdAt: 2000 }),
      search({ id: ids[5], createdAt: 2000 }),
    ];
    await store.analytics.insertSearches(records);
    await store.analytics.insertSearches([search({ datasetId: OTHER, createdAt: 5000 })]);
    const expected = [...records].sort((x, y) => y.createdAt - x.createdAt || Buffer.compare(Buffer.from(x.id), Buffer.from(y.id)));
    expect(await store.analytics.listSearches(DATASET, { limit: 10, offset: 0 })).toEqual(expected);
    expect(await store.analytics.listSearches(DATASET, { limit: 4, offset: 0 })).toEqual(expected.slice(0, 4));
    expect(await store.analytics.listSearches(DATASET, { limit: 4, offset: 4 })).toEqual(expected.slice(4));
    expect(await store.analytics.listSearches(DATASET, { limit: 4, offset: 8 })).toEqual([]);
    expect(await store.analytics.listSearches(DATASET, { limit: 0, offset: 0 })).toEqual([]);
    expect(await store.analytics.listSearches(randomUUID(), { limit: 10, offset: 0 })).toEqual([]);
  });

  it('purges the records older than the cutoff from both tables, in batches', async () => {
    const cutoff = 1_700_000_010_000;
    const oldSearches = Array.from({ length: 11 }, (_, i) => search({ createdAt: cutoff - 1 - i, datasetId: i % 2 ? DATASET : OTHER }));
    const newSearches = [search({ createdAt: cutoff }), search({ createdAt: cutoff + 5 })];
    const oldRecommendations = Array.from({ length: 7 }, (_, i) => recommendation({ createdAt: cutoff - 100 - i }));
    const newRecommendations = [recommendation({ createdAt: cutoff })];
    await store.analytics.insertSearches([...newSearches, ...oldSearches]);
    await store.analytics.insertRecommendations([...oldRecommendations, ...newRecommendations]);

    // A batch of 3 takes several rounds per table; the count covers both.
    expect(await store.analytics.purgeBefore(cutoff, 3)).toBe(11 + 7);
    const left = await store.analytics.listSearches(DATASET, { limit: 100, offset: 0 });
    expect(left.map((r) => r.id).sort()).toEqual(newSearches.map((r) => r.id).sort());
    expect(await store.analytics.listSearches(OTHER, { limit: 100, offset: 0 })).toEqual([]);
    // The recommendation at the cutoff stayed: inserting it again adds nothing, the old ones are new again.
    expect(await store.analytics.insertRecommendations(newRecommendations)).toBe(0);
    expect(await store.analytics.insertRecommendations(oldRecommendations)).toBe(7);
    expect(await store.analytics.purgeBefore(cutoff)).toBe(7);
    expect(await store.analytics.purgeBefore(cutoff)).toBe(0);
    // A batch exactly the size of what is left.
    expect(await store.analytics.purgeBefore(cutoff + 6, 3)).toBe(3);
  });
});
