/**
 * The store with its writes in a thread (store/sqlite/threaded-store.ts), against the same
 * operations on a plain store: the same records and errors, reads that see every answered write,
 * and no row changed through the caller's own connection (so no write was left on its thread).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import type { Store } from '../../store/repository.js';
import { openSqliteStore, sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { withWriteThread } from '../../store/sqlite/threaded-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-threaded-'));
  dirs.push(d);
  return d;
}

/** Rows changed through this connection since it opened. */
function changesThrough(db: Db): number {
  return (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
}

/** One of every write of the store, then reads of what they wrote; returns a digest of the answers. */
async function workload(store: Store): Promise<unknown[]> {
  const out: unknown[] = [];
  const { user, organization, key } = await store.users.createApiOnly({ email: 'a@x.test', name: 'A', organizationName: 'org', keyName: 'k', keyHash: 'h1' });
  out.push(user.email, organization.name, key.name);
  await store.users.updateMembership(user.id, organization.id, { role: 1 });
  const org2 = await store.organizations.create({ name: 'two' });
  await store.organizations.update(org2.id, { name: 'two!' });
  const k2 = await store.apiKeys.create({ organizationId: org2.id, userId: null, name: 'k2', hash: 'h2', role: 0, datasetIds: [], scopes: [], defaultParams: null, expiresAt: null });
  out.push((await store.apiKeys.findByHash('h2'))?.name);
  await store.apiKeys.delete(org2.id, k2.id);
  const ds = await store.datasets.create({ organizationId: organization.id, name: 'ds', trackingId: 't', serverConfiguration: {} });
  await store.datasets.update(ds.id, { name: 'ds2' });
  const chunks = await store.chunks.createMany(ds.id, [
    { chunkHtml: '<p>one</p>', trackingId: 'c1', tagSet: ['a'], metadata: { n: 1 } },
    { chunkHtml: 'two', trackingId: 'c2', tagSet: [] },
    { chunkHtml: 'three', tagSet: [] },
  ] as never);
  out.push(chunks.map((c) => [c.trackingId, c.chunkHtml, c.metadata]));
  await store.chunks.update(ds.id, { trackingId: 'c2' }, { chunkHtml: 'two!' });
  out.push((await store.chunks.get(ds.id, { trackingId: 'c2' }))?.chunkHtml);
  await expect(store.chunks.createMany(ds.id, [{ chunkHtml: 'dup', trackingId: 'c1', tagSet: [] }] as never)).rejects.toSatisfy(
    (e: unknown) => e instanceof QuarryError && e.code === 'duplicate_tracking_id' && e.httpStatus === 400,
  );
  const [group] = await store.groups.createMany(ds.id, [{ name: 'g', trackingId: 'g1' }], false);
  await store.groups.update(ds.id, group!.id, { name: 'g!' });
  await store.groups.addChunk(ds.id, group!.id, chunks[0]!.id);
  out.push((await store.groups.chunks(group!.id, 1, 10)).total);
  await store.groups.removeChunk(ds.id, group!.id, chunks[0]!.id);
  await store.groups.delete(ds.id, group!.id, false);
  await store.vectors.put(ds.id, 'm', [{ chunkId: chunks[0]!.id, contentHash: 'x', vector: new Float32Array([1, 2, 3]) }]);
  out.push([...(await store.vectors.getMany([chunks[0]!.id], 'm')).values()].map((v) => [...v]));
  await store.sparseVectors.put(ds.id, 's', [{ chunkId: chunks[0]!.id, sourceUpdatedAt: chunks[0]!.updatedAt, vector: { indices: new Uint32Array([1]), values: new Float32Array([0.5]) } }]);
  const sparse = (await store.sparseVectors.getMany([chunks[0]!.id], 's')).get(chunks[0]!.id);
  out.push(sparse && [[...sparse.indices], [...sparse.values]]);
  await store.events.add(ds.id, 'chunks_embedded', { a: 1 });
  out.push((await store.events.list(ds.id, null, 1, 10)).total);
  await store.chunks.delete(ds.id, { trackingId: 'c1' });
  out.push(await store.chunks.deleteMany(ds.id, [chunks[2]!.id], Date.now() + 1000));
  out.push(await store.datasets.chunkCount(ds.id));
  await store.datasets.clear(ds.id);
  out.push(await store.datasets.chunkCount(ds.id));
  out.push((await store.changeLog.since(ds.id, 0, 100)).map((e) => e.op));
  await store.analytics.purgeBefore(0);
  await store.datasets.markDeleted(ds.id);
  out.push(await store.datasets.purge(ds.id));
  await store.organizations.update(org2.id, { deleted: true });
  out.push(await store.organizations.purge(org2.id));
  return out;
}

describe('withWriteThread', () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('answers as the plain store does, and writes nothing through the caller’s connection', async () => {
    const plain = openSqliteStore(tempDir());
    const expected = await workload(plain);
    await plain.close();

    const dir = tempDir();
    const db = openDatabase(dir);
    store = await withWriteThread(sqliteStoreOn(db), dir);
    const before = changesThrough(db);
    const got = await workload(store);
    // Ids and times differ between runs; everything else must not.
    expect(got).toEqual(expected);
    expect(changesThrough(db) - before).toBe(0);
  });

  it('keeps the order of writes sent together, and a read after an answer sees the write', async () => {
    const dir = tempDir();
    store = await withWriteThread(openSqliteStore(dir), dir);
    const org = await store.organizations.create({ name: 'o' });
    const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
    const writes = Array.from({ length: 50 }, (_, i) => store!.chunks.createMany(ds.id, [{ chunkHtml: `c${i}`, tagSet: [] }] as never));
    const created = (await Promise.all(writes)).map(([c]) => c!);
    const log = await store.changeLog.since(ds.id, 0, 1000);
    expect(log.map((e) => e.chunkId)).toEqual(created.map((c) => c.id));
    expect(await store.datasets.chunkCount(ds.id)).toBe(50);
  });

  it('answers writes sent before close, then refuses with 503', async () => {
    const dir = tempDir();
    store = await withWriteThread(openSqliteStore(dir), dir);
    const org = store.organizations.create({ name: 'last' });
    const closed = store.close();
    await expect(org).resolves.toMatchObject({ name: 'last' });
    await closed;
    await expect(store.organizations.create({ name: 'late' })).rejects.toSatisfy((e: unknown) => e instanceof QuarryError && e.httpStatus === 503);
    store = undefined;
    const reopened = openSqliteStore(dir);
    expect((await reopened.organizations.get((await org).id))?.name).toBe('last');
    await reopened.close();
  });
});
