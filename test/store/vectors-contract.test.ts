/**
 * Dense vectors, sparse vectors and dataset events behave the same on SQLite and on PostgreSQL:
 * what is pending (and how many), which vectors `put` stores and logs (stale ones are skipped),
 * vectors that come back bit for bit, and event pages newest first with their type filter.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { semanticHash } from '../../core/domain/semantic-text.js';
import type { SparseVector } from '../../core/domain/sparse-vector.js';
import type { ChangeLogEntry, Store } from '../../store/repository.js';
import { STORE_KINDS, openTestStore, type StoreKind, type TestStore } from '../helpers/both-stores.js';

/** A new dataset (in a new organization) of the store. */
async function newDataset(store: Store): Promise<string> {
  const org = await store.organizations.create({ name: 'org' });
  return (await store.datasets.create({ organizationId: org.id, name: 'ds', trackingId: null, serverConfiguration: {} })).id;
}

const logOf = (store: Store, datasetId: string): Promise<ChangeLogEntry[]> => store.changeLog.since(datasetId, 0, 1_000_000);
/** The bytes of a typed array (to compare bit for bit: NaN payloads and -0 included). */
const bytes = (a: Float32Array | Uint32Array): number[] => [...new Uint8Array(a.buffer, a.byteOffset, a.byteLength)];

/** A vector with the values that survive only a bit-exact round trip. */
function awkwardVector(seed: number, dim = 7): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.fround(Math.sin(seed * 31 + i) * 1e3) / 7;
  v[0] = -0;
  v[1] = 1.4e-45; // the smallest subnormal
  v[2] = Infinity;
  new Uint32Array(v.buffer)[3] = 0x7fc00abc; // a NaN with a payload
  return v;
}

describe.each(STORE_KINDS)('vectors and events on %s', (kind: StoreKind) => {
  let t: TestStore;
  let store: Store;
  beforeAll(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('lists chunks pending embedding, stores fresh vectors bit for bit and skips stale ones', async () => {
    const ds = await newDataset(store);
    const chunks = await store.chunks.createMany(
      ds,
      Array.from({ length: 5 }, (_, i) => ({ chunkHtml: `<p>chunk ${i}</p>`, ...(i === 4 ? { semanticBoost: { phrase: 'b', distance_factor: 0.5 } } : {}) })),
    );
    const ids = chunks.map((c) => c.id).sort();
    expect(await store.vectors.pendingCount(ds, 'm')).toBe(5);
    const pending = await store.vectors.pending(ds, 'm', 3);
    expect(pending.map((p) => p.chunk.id)).toEqual(ids.slice(0, 3));
    for (const p of pending) {
      expect(p.chunk).toEqual(chunks.find((c) => c.id === p.chunk.id));
      expect(p.contentHash).toBe(semanticHash(p.chunk));
    }
    expect((await store.vectors.pending(ds, 'm', 10)).length).toBe(5);

    const all = await store.vectors.pending(ds, 'm', 10);
    const start = (await logOf(store, ds)).length;
    // A vector that is a view into a bigger buffer at an odd offset.
    const backing = new Float32Array(20);
    const view = backing.subarray(3, 10);
    view.set(awkwardVector(9));
    const [deleted, edited] = [all[3]!, all[4]!];
    await store.chunks.delete(ds, { id: deleted.chunk.id });
    await store.chunks.update(ds, { id: edited.chunk.id }, { chunkHtml: 'changed while embedding' });
    const stored = await store.vectors.put(ds, 'm', [
      { chunkId: all[0]!.chunk.id, contentHash: all[0]!.contentHash, vector: awkwardVector(1) },
      { chunkId: all[1]!.chunk.id, contentHash: all[1]!.contentHash, vector: view },
      { chunkId: all[2]!.chunk.id, contentHash: 'not its hash', vector: awkwardVector(3) },
      { chunkId: deleted.chunk.id, contentHash: deleted.contentHash, vector: awkwardVector(4) },
      { chunkId: edited.chunk.id, contentHash: edited.contentHash, vector: awkwardVector(5) },
      { chunkId: 'unknown', contentHash: 'x', vector: awkwardVector(6) },
    ]);
    expect(stored).toBe(2);
    expect((await logOf(store, ds)).slice(start + 2).map((e) => [e.chunkId, e.op])).toEqual([
      [all[0]!.chunk.id, 'upsert'],
      [all[1]!.chunk.id, 'upsert'],
    ]);
    const got = await store.vectors.getMany([all[1]!.chunk.id, 'unknown', all[0]!.chunk.id, all[2]!.chunk.id], 'm');
    expect([...got.keys()]).toEqual([all[1]!.chunk.id, all[0]!.chunk.id]);
    expect(bytes(got.get(all[0]!.chunk.id)!)).toEqual(bytes(awkwardVector(1)));
    expect(bytes(got.get(all[1]!.chunk.id)!)).toEqual(bytes(view));
    // The arrays own their memory, and are usable as any Float32Array.
    const v0 = got.get(all[0]!.chunk.id)!;
    expect(v0.byteLength).toBe(28);
    expect(v0.buffer.byteLength).toBe(28);
    expect((await store.vectors.getMany([all[0]!.chunk.id], 'other')).size).toBe(0);
    expect((await store.vectors.getMany([], 'm')).size).toBe(0);

    // Still pending: the one with the wrong hash and the edited one.
    expect(await store.vectors.pendingCount(ds, 'm')).toBe(2);
    expect((await store.vectors.pending(ds, 'm', 10)).map((p) => p.chunk.id).sort()).toEqual([all[2]!.chunk.id, edited.chunk.id].sort());
    // Another model wants them all again.
    expect(await store.vectors.pendingCount(ds, 'm2')).toBe(4);
    expect((await store.vectors.pending(ds, 'm2', 10)).map((p) => p.chunk.id)).toEqual(
      // stale ones first (by id), then those of the other model (by id)
      [[all[2]!.chunk.id, edited.chunk.id].sort(), [all[0]!.chunk.id, all[1]!.chunk.id].sort()].flat(),
    );
    expect((await store.vectors.pending(ds, 'm2', 3)).length).toBe(3);
    // Editing the text makes a vector pending again; editing anything else does not.
    await store.chunks.update(ds, { id: all[0]!.chunk.id }, { tagSet: ['t'] });
    expect(await store.vectors.pendingCount(ds, 'm')).toBe(2);
    await store.chunks.update(ds, { id: all[0]!.chunk.id }, { semanticContent: 'new meaning' });
    expect(await store.vectors.pendingCount(ds, 'm')).toBe(3);
    expect(await store.vectors.put(ds, 'm', [])).toBe(0);
  });

  it('stores the last of repeated vectors of one chunk, counting and logging each', async () => {
    const ds = await newDataset(store);
    const [c] = await store.chunks.createMany(ds, [{ chunkHtml: 'x' }]);
    const [p] = await store.vectors.pending(ds, 'm', 1);
    const start = (await logOf(store, ds)).length;
    const n = await store.vectors.put(ds, 'm', [
      { chunkId: c!.id, contentHash: p!.contentHash, vector: new Float32Array([1, 2]) },
      { chunkId: c!.id, contentHash: 'stale', vector: new Float32Array([3, 4]) },
      { chunkId: c!.id, contentHash: p!.contentHash, vector: new Float32Array([5, 6, 7]) },
    ]);
    expect(n).toBe(2);
    expect((await logOf(store, ds)).length - start).toBe(2);
    expect([...(await store.vectors.getMany([c!.id], 'm')).get(c!.id)!]).toEqual([5, 6, 7]);
    // A second model replaces the first (one vector per chunk).
    await store.vectors.put(ds, 'm2', [{ chunkId: c!.id, contentHash: p!.contentHash, vector: new Float32Array([8]) }]);
    expect((await store.vectors.getMany([c!.id], 'm')).size).toBe(0);
    expect([...(await store.vectors.getMany([c!.id], 'm2')).get(c!.id)!]).toEqual([8]);
    expect(await store.vectors.pendingCount(ds, 'm')).toBe(1);
    expect(await store.vectors.pendingCount(ds, 'm2')).toBe(0);
    // Only this dataset's chunks take vectors.
    expect(await store.vectors.put(await newDataset(store), 'm', [{ chunkId: c!.id, contentHash: p!.contentHash, vector: new Float32Array([1]) }])).toBe(0);
  });

  it('lists chunks pending sparse encoding and stores vectors of chunks still at their version', async () => {
    const ds = await newDataset(store);
    const chunks = await store.chunks.createMany(
      ds,
      Array.from({ length: 4 }, (_, i) => ({ chunkHtml: `s${i}` })),
    );
    const ids = chunks.map((c) => c.id).sort();
    expect(await store.sparseVectors.pendingCount(ds, 's')).toBe(4);
    const pending = await store.sparseVectors.pending(ds, 's', 10);
    expect(pending.map((p) => p.chunk.id)).toEqual(ids);
    expect((await store.sparseVectors.pending(ds, 's', 2)).map((p) => p.chunk.id)).toEqual(ids.slice(0, 2));
    for (const p of pending) expect(p.sourceUpdatedAt).toBe(p.chunk.updatedAt);

    const vec = (k: number): SparseVector => ({
      indices: new Uint32Array([0, 7, 30_000, 0xffffffff - k]),
      values: awkwardVector(k, 4),
    });
    await new Promise((r) => setTimeout(r, 3));
    await store.chunks.update(ds, { id: pending[3]!.chunk.id }, { tagSet: ['edited'] });
    const start = (await logOf(store, ds)).length;
    const n = await store.sparseVectors.put(ds, 's', [
      { chunkId: pending[0]!.chunk.id, sourceUpdatedAt: pending[0]!.sourceUpdatedAt, vector: vec(1) },
      { chunkId: pending[1]!.chunk.id, sourceUpdatedAt: pending[1]!.sourceUpdatedAt, vector: vec(2) },
      { chunkId: pending[2]!.chunk.id, sourceUpdatedAt: pending[2]!.sourceUpdatedAt + 1, vector: vec(3) },
      { chunkId: pending[3]!.chunk.id, sourceUpdatedAt: pending[3]!.sourceUpdatedAt, vector: vec(4) },
      { chunkId: 'unknown', sourceUpdatedAt: 0, vector: vec(5) },
    ]);
    expect(n).toBe(2);
    expect((await logOf(store, ds)).slice(start).map((e) => [e.chunkId, e.op])).toEqual([
      [pending[0]!.chunk.id, 'upsert'],
      [pending[1]!.chunk.id, 'upsert'],
    ]);
    const got = await store.sparseVectors.getMany([pending[1]!.chunk.id, 'unknown', pending[0]!.chunk.id], 's');
    expect([...got.keys()]).toEqual([pending[1]!.chunk.id, pending[0]!.chunk.id]);
    for (const [i, k] of [
      [0, 1],
      [1, 2],
    ] as const) {
      const v = got.get(pending[i]!.chunk.id)!;
      expect(v.indices).toBeInstanceOf(Uint32Array);
      expect(bytes(v.indices)).toEqual(bytes(vec(k).indices));
      expect(bytes(v.values)).toEqual(bytes(vec(k).values));
    }
    expect((await store.sparseVectors.getMany([pending[0]!.chunk.id], 'other')).size).toBe(0);
    expect(await store.sparseVectors.pendingCount(ds, 's')).toBe(2);
    expect(await store.sparseVectors.pendingCount(ds, 'other')).toBe(4);
    // Any edit of the chunk makes its sparse vector pending again.
    await new Promise((r) => setTimeout(r, 3));
    await store.chunks.update(ds, { id: pending[0]!.chunk.id }, { tagSet: ['t'] });
    expect(await store.sparseVectors.pendingCount(ds, 's')).toBe(3);
    expect(await store.sparseVectors.put(ds, 's', [])).toBe(0);
    // Another dataset's chunk is not stored.
    const other = await newDataset(store);
    expect(await store.sparseVectors.put(other, 's', [{ chunkId: pending[2]!.chunk.id, sourceUpdatedAt: pending[2]!.sourceUpdatedAt, vector: vec(6) }])).toBe(0);
  });

  it('lists dataset events newest first, filtered by type, a page at a time', async () => {
    const ds = await newDataset(store);
    const other = await newDataset(store);
    const types = ['chunks_embedded', 'embedding_failed', 'chunks_embedded', 'bulk_delete_failed', 'embedding_failed'] as const;
    for (const [i, type] of types.entries()) {
      await store.events.add(ds, type, { i, nested: { ok: i % 2 === 0 }, text: 'ü€' });
      await new Promise((r) => setTimeout(r, 2));
    }
    await store.events.add(other, 'embedding_failed', null);
    const all = await store.events.list(ds, null, 1, 10);
    expect(all.total).toBe(5);
    expect(all.events.map((e) => e.eventData)).toEqual([4, 3, 2, 1, 0].map((i) => ({ i, nested: { ok: i % 2 === 0 }, text: 'ü€' })));
    expect(all.events.map((e) => e.eventType)).toEqual([...types].reverse());
    for (const e of all.events) {
      expect(e.datasetId).toBe(ds);
      expect(typeof e.createdAt).toBe('number');
    }
    expect(await store.events.list(ds, [], 1, 10)).toEqual(all);
    const failed = await store.events.list(ds, ['embedding_failed', 'bulk_delete_failed'], 1, 2);
    expect(failed.total).toBe(3);
    expect(failed.events.map((e) => (e.eventData as { i: number }).i)).toEqual([4, 3]);
    expect((await store.events.list(ds, ['embedding_failed', 'bulk_delete_failed'], 2, 2)).events.map((e) => (e.eventData as { i: number }).i)).toEqual([1]);
    expect(await store.events.list(ds, ['none'], 1, 10)).toEqual({ events: [], total: 0 });
    expect((await store.events.list(other, null, 1, 10)).events.map((e) => e.eventData)).toEqual([null]);
    expect(await store.events.types(ds)).toEqual(['bulk_delete_failed', 'chunks_embedded', 'embedding_failed']);
    expect(await store.events.types(other)).toEqual(['embedding_failed']);
    expect(await store.events.types(randomUUID())).toEqual([]);
  });
});
