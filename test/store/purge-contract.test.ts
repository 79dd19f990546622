/**
 * Contract of the purger on both stores: a dataset purge removes every row of the dataset in every
 * table (chunks with their vectors, sparse vectors and group memberships, groups, change log,
 * events, analytics records) and its own row, and changes no other row of the store; a live
 * dataset is never touched; an organization purge removes the organization, its memberships, keys
 * and datasets with all their rows, and nothing of another organization. Checked against a
 * snapshot of every row of every table, read behind the store's back.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../store/repository.js';
import { openPgStore } from '../../store/postgres/pg-store.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { STORE_KINDS, type StoreKind } from '../helpers/both-stores.js';
import { migratedPgDatabase } from '../helpers/pg.js';
import { countRows, snapshotStore, type StoreLocation, type StoreSnapshot } from '../helpers/store-snapshot.js';

/** A fresh store with where it keeps its rows (both-stores.ts hides that; the snapshots need it). */
interface LocatedStore {
  readonly store: Store;
  readonly loc: StoreLocation;
  dispose(): Promise<void>;
}

async function openLocated(kind: StoreKind): Promise<LocatedStore> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-purge-'));
    const store = openSqliteStore(dir);
    return {
      store,
      loc: { dataDir: dir, databaseUrl: null },
      async dispose() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await migratedPgDatabase();
  const store = await openPgStore(db.url, { poolSize: 4 });
  return {
    store,
    loc: { dataDir: '', databaseUrl: db.url },
    async dispose() {
      await store.close();
      await db.drop();
    },
  };
}

const MODEL = 'test-model';
const SPARSE_MODEL = 'test-splade';

/** Ids of what a dataset holds, to tell its rows in a snapshot. */
interface Filled {
  readonly datasetId: string;
  readonly chunkIds: Set<string>;
  readonly groupIds: Set<string>;
}

/**
 * Writes rows of the dataset into every table that holds some: `chunks` chunks with dense and
 * sparse vectors, two groups with members, change-log entries, events and analytics records.
 */
async function fill(store: Store, datasetId: string, chunks: number): Promise<Filled> {
  const made = await store.chunks.createMany(
    datasetId,
    Array.from({ length: chunks }, (_, i) => ({ chunkHtml: `chunk ${i}`, trackingId: `t${i}`, tagSet: ['a', `t${i % 3}`] })),
  );
  const dense = await store.vectors.pending(datasetId, MODEL, chunks);
  expect(
    await store.vectors.put(
      datasetId,
      MODEL,
      dense.map(({ chunk, contentHash }) => ({ chunkId: chunk.id, contentHash, vector: new Float32Array([1, 0.5, chunk.createdAt % 7]) })),
    ),
  ).toBe(chunks);
  const sparse = await store.sparseVectors.pending(datasetId, SPARSE_MODEL, chunks);
  expect(
    await store.sparseVectors.put(
      datasetId,
      SPARSE_MODEL,
      sparse.map(({ chunk, sourceUpdatedAt }) => ({ chunkId: chunk.id, sourceUpdatedAt, vector: { indices: new Uint32Array([1, 5]), values: new Float32Array([0.5, 2]) } })),
    ),
  ).toBe(chunks);
  const groups = await store.groups.createMany(datasetId, [{ name: 'g1', trackingId: 'g1' }, { name: 'g2' }], false);
  for (const [i, chunk] of made.slice(0, 5).entries()) await store.groups.addChunk(datasetId, groups[i % 2]!.id, chunk.id);
  await store.chunks.delete(datasetId, { id: made[made.length - 1]!.id });
  await store.events.add(datasetId, 'chunks_embedded', { n: chunks });
  await store.events.add(datasetId, 'embedding_failed', { reason: 'x' });
  const now = Date.now();
  await store.analytics.insertSearches(
    [0, 1, 2].map((i) => ({
      id: randomUUID(),
      datasetId,
      kind: 'search' as const,
      searchMethod: 'hybrid',
      query: `q${i}`,
      requestParams: { query: `q${i}` },
      latencyMs: 3,
      topScore: 0.5,
      results: [{ id: made[0]!.id, score: 0.5 }],
      resultCount: 1,
      userId: null,
      metadata: null,
      createdAt: now - i,
    })),
  );
  await store.analytics.insertRecommendations([
    {
      id: randomUUID(),
      datasetId,
      recommendationType: 'Chunk',
      positiveIds: [made[0]!.id],
      negativeIds: [],
      positiveTrackingIds: [],
      negativeTrackingIds: [],
      requestParams: {},
      results: [],
      topScore: 0,
      userId: 'u',
      metadata: { a: 1 },
      createdAt: now,
    },
  ]);
  return { datasetId, chunkIds: new Set(made.map((c) => c.id)), groupIds: new Set(groups.map((g) => g.id)) };
}

/** Whether a snapshot row belongs to the dataset. */
function ofDataset(table: string, row: Record<string, unknown>, d: Filled): boolean {
  if (table === 'datasets') return row.id === d.datasetId;
  if (table === 'chunk_group_members') return d.chunkIds.has(row.chunk_id as string) || d.groupIds.has(row.group_id as string);
  return 'dataset_id' in row && row.dataset_id === d.datasetId;
}

/** The snapshot without the rows of these datasets (and of these organizations, when given). */
function without(snapshot: StoreSnapshot, datasets: Filled[], organizationIds: string[] = []): StoreSnapshot {
  const out: StoreSnapshot = {};
  for (const [table, rows] of Object.entries(snapshot)) {
    out[table] = (rows as Record<string, unknown>[]).filter((row) => {
      if (datasets.some((d) => ofDataset(table, row, d))) return false;
      if (table === 'organizations') return !organizationIds.includes(row.id as string);
      if (table === 'memberships' || table === 'api_keys') return !organizationIds.includes(row.organization_id as string);
      return true;
    });
  }
  return out;
}

/** Rows of the dataset left in any table, analytics included, by table (empty when none). */
async function leftovers(loc: StoreLocation, snapshot: StoreSnapshot, d: Filled): Promise<Record<string, number>> {
  const left: Record<string, number> = {};
  for (const [table, rows] of Object.entries(snapshot)) {
    const n = (rows as Record<string, unknown>[]).filter((row) => ofDataset(table, row, d)).length;
    if (n > 0) left[table] = n;
  }
  for (const table of ['search_queries', 'recommendation_queries']) {
    const n = await countRows(loc, table, 'dataset_id = ?', d.datasetId);
    if (n > 0) left[table] = n;
  }
  return left;
}

describe.each(STORE_KINDS)('%s store: purges', (kind) => {
  let s: LocatedStore;
  let store: Store;
  beforeEach(async () => {
    s = await openLocated(kind);
    store = s.store;
  });
  afterEach(async () => {
    await s.dispose();
  });

  const newDataset = (organizationId: string, name: string) =>
    store.datasets.create({ organizationId, name, trackingId: name, serverConfiguration: {} });

  it('a filled dataset has rows in every table the purge must empty', async () => {
    // Guards the other tests: a table left empty by fill() would pass them vacuously.
    const org = await store.organizations.create({ name: 'o' });
    const d = await fill(store, (await newDataset(org.id, 'a')).id, 10);
    expect(await leftovers(s.loc, await snapshotStore(s.loc, { withAsync: true }), d)).toEqual({
      datasets: 1,
      chunks: 9,
      chunk_vectors: 9,
      chunk_sparse_vectors: 9,
      chunk_groups: 2,
      chunk_group_members: 5,
      change_log: expect.any(Number),
      dataset_events: 2,
      search_queries: 3,
      // The three searches share an hour: one row of each rollup.
      search_rollup_hourly: 1,
      search_rollup_daily: 1,
      // Three query texts.
      search_query_totals: 3,
      search_query_hourly: 3,
      search_query_daily: 3,
      recommendation_queries: 1,
      // One recommendation: one row of each record rollup.
      record_rollup_hourly: 1,
      record_rollup_daily: 1,
      // The recommendation's user: its type's row and the all-types row of each per-user rollup, and its ordinal.
      user_rollup_hourly: 2,
      user_rollup_daily: 2,
      analytics_users: 1,
    });
  });

  it('purges every row of a flagged dataset, in slices, and no other row', async () => {
    const org = await store.organizations.create({ name: 'o' });
    const otherOrg = await store.organizations.create({ name: 'p' });
    // More chunks than one slice (PURGE_SLICE_ROWS = 1000).
    const a = await fill(store, (await newDataset(org.id, 'a')).id, 1203);
    const b = await fill(store, (await newDataset(org.id, 'b')).id, 7);
    const c = await fill(store, (await newDataset(otherOrg.id, 'c')).id, 7);
    await store.datasets.markDeleted(a.datasetId);
    const before = await snapshotStore(s.loc, { withAsync: true });
    const analyticsOfB = await countRows(s.loc, 'search_queries', 'dataset_id = ?', b.datasetId);

    expect(await store.datasets.purge(a.datasetId)).toBe(true);

    const after = await snapshotStore(s.loc, { withAsync: true });
    expect(await leftovers(s.loc, after, a)).toEqual({});
    expect(after).toEqual(without(before, [a]));
    expect(await countRows(s.loc, 'search_queries', 'dataset_id = ?', b.datasetId)).toBe(analyticsOfB);
    expect(await countRows(s.loc, 'recommendation_queries', 'dataset_id = ?', c.datasetId)).toBe(1);
    expect(await store.datasets.listDeleted()).toEqual([]);
    expect(await store.datasets.idsOfOrganization(org.id)).toEqual([b.datasetId]);
    // Its tracking id is free (it was already, being flagged), and a purge again finds nothing to do.
    expect(await store.datasets.purge(a.datasetId)).toBe(true);
    expect(await snapshotStore(s.loc, { withAsync: true })).toEqual(after);
    expect((await newDataset(org.id, 'a')).trackingId).toBe('a');
  });

  it('never touches a live dataset', async () => {
    const org = await store.organizations.create({ name: 'o' });
    const a = await fill(store, (await newDataset(org.id, 'a')).id, 5);
    const before = await snapshotStore(s.loc, { withAsync: true });
    expect(await store.datasets.purge(a.datasetId)).toBe(false);
    expect(await store.organizations.purge(org.id)).toBe(false);
    // Its organization was flagged, then restored: live again.
    await store.organizations.update(org.id, { deleted: true });
    await store.organizations.update(org.id, { deleted: false });
    const restored = await snapshotStore(s.loc, { withAsync: true });
    expect(without(restored, [], [org.id])).toEqual(without(before, [], [org.id]));
    expect(await store.datasets.purge(a.datasetId)).toBe(false);
    expect(await store.organizations.purge(org.id)).toBe(false);
    expect(await snapshotStore(s.loc, { withAsync: true })).toEqual(restored);
    expect(await leftovers(s.loc, restored, a)).toMatchObject({ datasets: 1, chunks: 4, search_queries: 3, recommendation_queries: 1 });
  });

  it('purges a live dataset of a flagged organization, and an unknown dataset is already purged', async () => {
    const org = await store.organizations.create({ name: 'o' });
    const keep = await store.organizations.create({ name: 'keep' });
    const a = await fill(store, (await newDataset(org.id, 'a')).id, 5);
    const k = await fill(store, (await newDataset(keep.id, 'k')).id, 5);
    await store.organizations.update(org.id, { deleted: true });
    const before = await snapshotStore(s.loc, { withAsync: true });
    expect(await store.datasets.purge(a.datasetId)).toBe(true);
    const after = await snapshotStore(s.loc, { withAsync: true });
    expect(after).toEqual(without(before, [a]));
    expect(await leftovers(s.loc, after, k)).toMatchObject({ datasets: 1, chunks: 4 });
    // The organization's row stays until the organization itself is purged.
    expect((await store.organizations.get(org.id, true))!.deleted).toBe(true);
    expect(await store.datasets.purge('00000000-0000-4000-8000-000000000000')).toBe(true);
    expect(await snapshotStore(s.loc, { withAsync: true })).toEqual(after);
  });

  it('finishes two concurrent purges of one dataset, while another dataset is written', async () => {
    const org = await store.organizations.create({ name: 'o' });
    const a = await fill(store, (await newDataset(org.id, 'a')).id, 1500);
    const b = await newDataset(org.id, 'b');
    await store.datasets.markDeleted(a.datasetId);
    let purging = true;
    const writes = (async () => {
      let n = 0;
      while (purging) {
        await store.chunks.createMany(b.id, [{ chunkHtml: `w${n}`, trackingId: `w${n}` }]);
        n++;
        // SQLite's calls resolve without leaving the microtask queue: yield, or the purge's timers never run.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return n;
    })();
    const purges = await Promise.all([store.datasets.purge(a.datasetId), store.datasets.purge(a.datasetId)]).finally(() => {
      purging = false;
    });
    const written = await writes;
    expect(purges).toEqual([true, true]);
    expect(await leftovers(s.loc, await snapshotStore(s.loc, { withAsync: true }), a)).toEqual({});
    expect(written).toBeGreaterThan(0);
    expect(await store.datasets.chunkCount(b.id)).toBe(written);
  });

  it('finishes purges of one dataset started together, again and again', async () => {
    // Several purges reaching the last step (the dataset's row) at once: neither may fail (a
    // deadlock between two of them, on PostgreSQL), and each reports the dataset purged.
    const org = await store.organizations.create({ name: 'o' });
    for (let round = 0; round < 15; round++) {
      const d = await fill(store, (await newDataset(org.id, `r${round}`)).id, 3);
      await store.datasets.markDeleted(d.datasetId);
      expect(await Promise.all([1, 2, 3, 4].map(() => store.datasets.purge(d.datasetId)))).toEqual([true, true, true, true]);
      expect(await leftovers(s.loc, await snapshotStore(s.loc, { withAsync: true }), d)).toEqual({});
    }
  });

  it('purges a flagged organization with its memberships, keys and every row of its datasets, and nothing else', async () => {
    const owner = await store.users.createApiOnly({ email: 'o@example.com', name: 'o', organizationName: 'o', keyName: 'k', keyHash: 'a'.repeat(64) });
    const org = owner.organization;
    const keep = await store.organizations.create({ name: 'keep', ownerUserId: owner.user.id });
    await store.apiKeys.create({
      organizationId: org.id,
      userId: null,
      name: 'extra',
      hash: 'b'.repeat(64),
      role: 1,
      datasetIds: [],
      scopes: [],
      defaultParams: null,
      expiresAt: null,
    });
    const a = await fill(store, (await newDataset(org.id, 'a')).id, 6);
    const b = await fill(store, (await newDataset(org.id, 'b')).id, 6);
    await store.datasets.markDeleted(b.datasetId);
    const k = await fill(store, (await newDataset(keep.id, 'k')).id, 6);
    await store.organizations.update(org.id, { deleted: true });
    const before = await snapshotStore(s.loc, { withAsync: true });

    expect(await store.organizations.purge(org.id)).toBe(true);

    const after = await snapshotStore(s.loc, { withAsync: true });
    expect(after).toEqual(without(before, [a, b], [org.id]));
    expect(await leftovers(s.loc, after, a)).toEqual({});
    expect(await leftovers(s.loc, after, b)).toEqual({});
    expect(await leftovers(s.loc, after, k)).toMatchObject({ datasets: 1, chunks: 5, search_queries: 3 });
    expect(await store.organizations.get(org.id, true)).toBeUndefined();
    expect(await store.organizations.listDeleted()).toEqual([]);
    expect(await store.apiKeys.findByHash('a'.repeat(64))).toBeUndefined();
    expect(await store.users.get(owner.user.id)).toEqual(owner.user);
    expect((await store.users.organizations(owner.user.id)).map((o) => o.id)).toEqual([keep.id]);
    // Gone: nothing is flagged any more.
    expect(await store.organizations.purge(org.id)).toBe(false);
    expect(await snapshotStore(s.loc, { withAsync: true })).toEqual(after);
  });
});
