/**
 * The store's read caches against an uncached connection to the same file. Chunk records
 * (store/sqlite/chunk-cache.ts): after any mix of creates, updates, deletes, group deletes and
 * dataset clears, through the cached connection or another one, a cached read answers exactly
 * what the store holds, and it does serve from memory while nothing was written. Dataset,
 * organization and API-key records (epoch-cache.ts): a write through either connection is seen
 * by the next read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../store/repository.js';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { rng } from '../helpers/random-corpus.js';

const open: Store[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A cached connection, an uncached one (the oracle) and a second writer, over one new store with one dataset. */
async function setup(cacheBytes = 1 << 20): Promise<{ cached: SqliteStore; plain: Store; other: Store; datasetId: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-chunk-cache-'));
  dirs.push(dir);
  const plain = openSqliteStore(dir);
  const cached = openSqliteStore(dir, { readCacheBytes: cacheBytes });
  const other = openSqliteStore(dir);
  open.push(cached, plain, other);
  const org = await plain.organizations.create({ name: 'o' });
  const ds = await plain.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
  return { cached, plain, other, datasetId: ds.id };
}

describe('chunk record cache', () => {
  it('serves a repeated read from memory, and a write through another connection at once', async () => {
    const { cached, other, datasetId } = await setup();
    const [a, b] = await other.chunks.createMany(datasetId, [{ chunkHtml: 'one', tagSet: [] }, { chunkHtml: 'two', tagSet: [] }] as never);
    const first = await cached.chunks.getMany(datasetId, [a!.id, b!.id]);
    const again = await cached.chunks.getMany(datasetId, [a!.id, b!.id]);
    expect(again[0]).toBe(first[0]);
    await other.chunks.update(datasetId, { id: a!.id }, { chunkHtml: 'one!' });
    const after = await cached.chunks.getMany(datasetId, [a!.id, b!.id]);
    expect(after.map((c) => c.chunkHtml)).toEqual(['one!', 'two']);
    // Only the written chunk was read again.
    expect(after[1]).toBe(first[1]);
    await other.chunks.delete(datasetId, { id: b!.id });
    expect((await cached.chunks.getMany(datasetId, [a!.id, b!.id])).map((c) => c.id)).toEqual([a!.id]);
    // Another dataset's id is not this dataset's chunk, cached or not.
    expect(await cached.chunks.getMany('00000000-0000-4000-8000-000000000000', [a!.id])).toEqual([]);
  });

  it('answers what the store holds through random writes on both connections', async () => {
    const { cached, plain, other, datasetId } = await setup(64 * 1024);
    const r = rng(11);
    const ids: string[] = [];
    for (let step = 0; step < 400; step++) {
      const writer = r() < 0.5 ? cached : other;
      const roll = r();
      if (roll < 0.3 || ids.length < 5) {
        const made = await writer.chunks.createMany(datasetId, [{ chunkHtml: `c${step} ${'x'.repeat(Math.floor(r() * 3000))}`, tagSet: [], metadata: { step } }] as never);
        ids.push(made[0]!.id);
      } else if (roll < 0.55) {
        const id = ids[Math.floor(r() * ids.length)]!;
        await writer.chunks.update(datasetId, { id }, { chunkHtml: `u${step}`, metadata: { step } }).catch(() => undefined);
      } else if (roll < 0.65) {
        await writer.chunks.delete(datasetId, { id: ids[Math.floor(r() * ids.length)]! });
      } else if (roll < 0.67) {
        await writer.datasets.clear(datasetId);
      } else if (roll < 0.7) {
        const some = ids.filter(() => r() < 0.2);
        const [group] = await writer.groups.createMany(datasetId, [{ name: `g${step}`, trackingId: `g${step}` }], false);
        for (const id of some) await writer.groups.addChunk(datasetId, group!.id, id).catch(() => undefined);
        await writer.groups.delete(datasetId, group!.id, true);
      }
      const page = Array.from({ length: 10 }, () => ids[Math.floor(r() * ids.length)]!);
      expect(await cached.chunks.getMany(datasetId, page), `step ${step}`).toEqual(await plain.chunks.getMany(datasetId, page));
    }
  });

  it('stays within its bytes by dropping records read once, keeping one read again and again', async () => {
    // ~600 bytes a record (its strings and a fixed part): about 33 fit in 20,000.
    const { cached, other, datasetId } = await setup(20_000);
    const made = await other.chunks.createMany(
      datasetId,
      Array.from({ length: 100 }, (_, i) => ({ chunkHtml: `chunk ${i}`, tagSet: [] })),
    );
    const ids = made.map((c) => c.id);
    const read = async (id: string) => (await cached.chunks.getMany(datasetId, [id]))[0]!;
    const popular = await read(ids[0]!);
    const once = await read(ids[1]!);
    for (const id of ids.slice(2)) {
      await read(id);
      expect(await read(ids[0]!)).toBe(popular);
    }
    // Read once, 98 records ago: gone, and read again from the store.
    const again = await read(ids[1]!);
    expect(again).not.toBe(once);
    expect(again).toEqual(once);
    // The last one read is still in memory.
    expect(await read(ids[99]!)).toBe(await read(ids[99]!));
  });
});

describe('dataset, organization and API-key caches', () => {
  it('see every write through either connection at once, and serve from memory meanwhile', async () => {
    const { cached, other, datasetId } = await setup();
    const first = await cached.datasets.get(datasetId);
    expect(await cached.datasets.get(datasetId)).toBe(first);
    await other.datasets.update(datasetId, { name: 'renamed', serverConfiguration: { BM25_K: 1.5 } });
    const renamed = await cached.datasets.get(datasetId);
    expect(renamed?.name).toBe('renamed');
    expect(renamed?.serverConfiguration).toMatchObject({ BM25_K: 1.5 });
    await cached.datasets.update(datasetId, { name: 'again' });
    expect((await cached.datasets.get(datasetId))?.name).toBe('again');

    const orgId = renamed!.organizationId;
    expect((await cached.organizations.get(orgId))?.deleted).toBe(false);
    const key = await other.apiKeys.create({ organizationId: orgId, userId: null, name: 'k', hash: 'h-cache', role: 0, datasetIds: [], scopes: [], defaultParams: null, expiresAt: null });
    expect((await cached.apiKeys.findByHash('h-cache'))?.id).toBe(key.id);
    await other.apiKeys.delete(orgId, key.id);
    expect(await cached.apiKeys.findByHash('h-cache')).toBeUndefined();
    await other.organizations.update(orgId, { deleted: true });
    expect(await cached.organizations.get(orgId)).toBeUndefined();
    expect(await cached.datasets.get(datasetId)).toBeUndefined();
  });
});

/** The end of this turn of the event loop (the pin of pinReads lasts until then). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('pinned reads (one check of other connections per request)', () => {
  it('see commits made before the pin, and another connection’s later commit from the next turn on', async () => {
    const { cached, other, datasetId } = await setup();
    const [a] = await other.chunks.createMany(datasetId, [{ chunkHtml: 'one', tagSet: [] }] as never);
    const html = async () => (await cached.chunks.getMany(datasetId, [a!.id]))[0]?.chunkHtml;
    const name = async () => (await cached.datasets.get(datasetId))?.name;
    expect(await html()).toBe('one');
    await other.chunks.update(datasetId, { id: a!.id }, { chunkHtml: 'two' });
    await other.datasets.update(datasetId, { name: 'second' });
    cached.pinReads();
    // Committed before the pin: seen.
    expect(await html()).toBe('two');
    expect(await name()).toBe('second');
    // Committed after it, in the same turn: the pin stands (this is what saves the checks)...
    await other.chunks.update(datasetId, { id: a!.id }, { chunkHtml: 'three' });
    await other.datasets.update(datasetId, { name: 'third' });
    expect(await html()).toBe('two');
    expect(await name()).toBe('second');
    // ...until the turn ends.
    await nextTurn();
    expect(await html()).toBe('three');
    expect(await name()).toBe('third');
  });

  it('see this connection’s own writes at once, and another’s once unpinned (a writer thread’s answer)', async () => {
    const { cached, other, datasetId } = await setup();
    const [a] = await other.chunks.createMany(datasetId, [{ chunkHtml: 'one', tagSet: [] }] as never);
    const html = async () => (await cached.chunks.getMany(datasetId, [a!.id]))[0]?.chunkHtml;
    cached.pinReads();
    expect(await html()).toBe('one');
    await other.chunks.update(datasetId, { id: a!.id }, { chunkHtml: 'theirs' });
    expect(await html()).toBe('one');
    cached.unpinReads();
    expect(await html()).toBe('theirs');
    cached.pinReads();
    await cached.chunks.update(datasetId, { id: a!.id }, { chunkHtml: 'mine' });
    expect(await html()).toBe('mine');
    await cached.datasets.update(datasetId, { name: 'mine' });
    expect((await cached.datasets.get(datasetId))?.name).toBe('mine');
  });
});

