/**
 * The analytics group committer (workers/jobs/analytics-group.ts) on each real store: batches
 * active together are stored in one transaction per kind, every record exactly once, a poison
 * batch fails alone and the others of its group are stored, and a lone batch waits no longer
 * than the linger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticsBatch, SearchRecord } from '../../core/domain/analytics.js';
import { newId } from '../../core/domain/ids.js';
import type { AnalyticsRepository } from '../../store/repository.js';
import { analyticsGroup, type StoredCounts } from '../../workers/jobs/analytics-group.js';
import { searchRecord, ragRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';

const batchOf = (datasetId: string, n: number, rags = 0): AnalyticsBatch => ({
  id: newId(),
  searches: Array.from({ length: n }, (_, i) => searchRecord({ id: newId(), datasetId, createdAt: Date.now(), query: `q${i % 5}` })),
  recommendations: [],
  rags: Array.from({ length: rags }, () => ragRecord({ id: newId(), datasetId, createdAt: Date.now() })),
});

/** The real repository, with its calls to insertSearches counted (each is one transaction). */
function counted(analytics: AnalyticsRepository): { repo: AnalyticsRepository; calls: number[] } {
  const calls: number[] = [];
  const repo: AnalyticsRepository = Object.create(analytics);
  repo.insertSearches = (records) => {
    calls.push(records.length);
    return analytics.insertSearches(records);
  };
  return { repo, calls };
}

describe.each(STORE_KINDS)('analytics group commit (%s)', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const storedSearches = async (datasetId: string): Promise<SearchRecord[]> => t.store.analytics.listSearches(datasetId, { limit: 10_000, offset: 0 });

  it('stores batches active together in one transaction, each record once', async () => {
    const dataset = newId();
    const { repo, calls } = counted(t.store.analytics);
    const group = analyticsGroup(repo, { lingerMs: 200, maxBatches: 16, maxRecords: 100_000 });
    const batches = Array.from({ length: 6 }, () => batchOf(dataset, 20, 1));
    const results = await Promise.all(batches.map((b) => group(b)));
    expect(calls).toEqual([120]);
    // Every member learns the group's counts.
    for (const r of results) expect(r).toEqual({ searches: 120, recommendations: 0, rags: 6 });
    const stored = await storedSearches(dataset);
    expect(stored.map((s) => s.id).sort()).toEqual(batches.flatMap((b) => b.searches.map((s) => s.id)).sort());
    // A batch delivered again (a retried job) adds nothing.
    expect(await group(batches[2]!)).toEqual({ searches: 0, recommendations: 0, rags: 0 });
    expect(await storedSearches(dataset)).toHaveLength(120);
  });

  it('stores a full group at once, and the batches that came meanwhile next', async () => {
    const dataset = newId();
    const { repo, calls } = counted(t.store.analytics);
    // A linger far past the test timeout: only fullness can start a store.
    const group = analyticsGroup(repo, { lingerMs: 3_600_000, maxBatches: 3, maxRecords: 100_000 });
    const first = [group(batchOf(dataset, 10)), group(batchOf(dataset, 10)), group(batchOf(dataset, 10))];
    // These arrive while the first group is being stored (or right after): they fill the next.
    const second = [group(batchOf(dataset, 5)), group(batchOf(dataset, 5)), group(batchOf(dataset, 5))];
    await Promise.all([...first, ...second]);
    expect(calls).toEqual([30, 15]);
    expect(await storedSearches(dataset)).toHaveLength(45);
  });

  it('a group as full as maxRecords is stored without waiting', async () => {
    const dataset = newId();
    const { repo, calls } = counted(t.store.analytics);
    const group = analyticsGroup(repo, { lingerMs: 3_600_000, maxBatches: 100, maxRecords: 50 });
    await Promise.all([group(batchOf(dataset, 30)), group(batchOf(dataset, 30))]);
    expect(calls).toEqual([60]);
  });

  it('a poison batch fails alone; the rest of its group is stored', async () => {
    const dataset = newId();
    const { repo, calls } = counted(t.store.analytics);
    const group = analyticsGroup(repo, { lingerMs: 100, maxBatches: 16, maxRecords: 100_000 });
    const good = [batchOf(dataset, 7), batchOf(dataset, 8)];
    // A record whose time is not a number: both stores refuse it, and its whole transaction.
    const poison = batchOf(dataset, 3);
    const bad = { ...poison, searches: [...poison.searches, { ...poison.searches[0]!, id: newId(), createdAt: {} as unknown as number }] };
    const settled = await Promise.allSettled([group(good[0]!), group(bad), group(good[1]!)]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[0] as PromiseFulfilledResult<StoredCounts>).value.searches).toBe(7);
    expect((settled[2] as PromiseFulfilledResult<StoredCounts>).value.searches).toBe(8);
    // The group, then each batch alone.
    expect(calls).toEqual([19, 7, 4, 8]);
    const stored = (await storedSearches(dataset)).map((s) => s.id).sort();
    expect(stored).toEqual([...good[0]!.searches, ...good[1]!.searches].map((s) => s.id).sort());
  });

  it('a lone batch is stored after the linger, not before', async () => {
    const dataset = newId();
    const group = analyticsGroup(t.store.analytics, { lingerMs: 150, maxBatches: 16, maxRecords: 100_000 });
    const t0 = performance.now();
    await group(batchOf(dataset, 4));
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(5_000);
    expect(await storedSearches(dataset)).toHaveLength(4);
  });
});
