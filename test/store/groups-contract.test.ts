/**
 * The group repository behaves the same on SQLite and on PostgreSQL: batch creates all or nothing
 * (tracking ids repeated or taken fail the batch with the same message), upsert by tracking id,
 * patch updates, membership (idempotent joins, removals, pages oldest membership first, the groups
 * of chunks), pages of groups newest first, and deletes that log every member chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { ChangeLogEntry, Store } from '../../store/repository.js';
import { STORE_KINDS, openTestStore, type StoreKind, type TestStore } from '../helpers/both-stores.js';

/** The error a call fails with, as the caller sees it (a QuarryError, never a driver error). */
async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(QuarryError);
    return { code: (err as QuarryError).code, message: (err as QuarryError).message };
  }
  throw new Error('the call succeeded; a failure was expected');
}

/** A new dataset (in a new organization) of the store. */
async function newDataset(store: Store): Promise<string> {
  const org = await store.organizations.create({ name: 'org' });
  return (await store.datasets.create({ organizationId: org.id, name: 'ds', trackingId: null, serverConfiguration: {} })).id;
}

const logOf = (store: Store, datasetId: string): Promise<ChangeLogEntry[]> => store.changeLog.since(datasetId, 0, 1_000_000);
const tick = () => new Promise((r) => setTimeout(r, 3));

describe.each(STORE_KINDS)('groups on %s', (kind: StoreKind) => {
  let t: TestStore;
  let store: Store;
  beforeAll(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('creates groups and reads them back by id and tracking id', async () => {
    const ds = await newDataset(store);
    const [full, bare] = await store.groups.createMany(
      ds,
      [{ name: 'Full', description: 'd', trackingId: 'full', metadata: { k: ['v', 1] }, tagSet: ['a', 'B'] }, {}],
      false,
    );
    expect(full).toMatchObject({ datasetId: ds, name: 'Full', description: 'd', trackingId: 'full', metadata: { k: ['v', 1] }, tagSet: ['a', 'B'], fileId: null });
    expect(full!.updatedAt).toBe(full!.createdAt);
    expect(bare).toEqual({ id: bare!.id, datasetId: ds, name: '', description: '', trackingId: null, metadata: null, tagSet: [], fileId: null, createdAt: bare!.createdAt, updatedAt: bare!.createdAt });
    expect(await store.groups.get(ds, full!.id)).toEqual(full);
    expect(await store.groups.get(ds, bare!.id)).toEqual(bare);
    expect(await store.groups.getByTrackingId(ds, 'full')).toEqual(full);
    expect(await store.groups.getByTrackingId(ds, 'FULL')).toBeUndefined();
    expect(await store.groups.get(ds, 'nope')).toBeUndefined();
    const other = await newDataset(store);
    expect(await store.groups.get(other, full!.id)).toBeUndefined();
    expect(await store.groups.createMany(ds, [], false)).toEqual([]);
    // Creating groups writes nothing to the chunk log.
    expect(await logOf(store, ds)).toEqual([]);
  });

  it('fails a whole batch on a tracking id repeated or taken, and upserts when asked', async () => {
    const ds = await newDataset(store);
    const [g] = await store.groups.createMany(ds, [{ name: 'g', trackingId: 'g', tagSet: ['t'], metadata: { m: 1 } }], false);
    expect(await failure(store.groups.createMany(ds, [{ name: 'new' }, { trackingId: 'x' }, { trackingId: 'x' }], false))).toEqual({
      code: 'duplicate_tracking_id',
      message: 'Duplicate tracking_id "x" appears more than once in this request; nothing was stored',
    });
    expect(await failure(store.groups.createMany(ds, [{ name: 'new', trackingId: 'y' }, { trackingId: 'g' }], false))).toEqual({
      code: 'duplicate_tracking_id',
      message: 'A group with tracking_id "g" already exists in this dataset; set upsert_by_tracking_id to update it. Nothing was stored',
    });
    // Repeated even with upsert.
    expect((await failure(store.groups.createMany(ds, [{ trackingId: 'g' }, { trackingId: 'g' }], true))).message).toMatch(/^Duplicate tracking_id "g"/);
    expect((await store.groups.list(ds, 1, 10)).groups).toEqual([g]);

    await tick();
    const [merged, fresh] = await store.groups.createMany(ds, [{ trackingId: 'g', description: 'now described', tagSet: null }, { trackingId: 'G', name: 'upper' }], true);
    // Absent fields keep their values; tagSet null clears it.
    expect(merged).toEqual({ ...g, description: 'now described', tagSet: [], updatedAt: merged!.updatedAt });
    expect(merged!.updatedAt).toBeGreaterThan(g!.updatedAt);
    expect(fresh).toMatchObject({ trackingId: 'G', name: 'upper' });
    expect(await store.groups.get(ds, g!.id)).toEqual(merged);
    expect((await store.groups.list(ds, 1, 10)).total).toBe(2);
  });

  it('updates a group with a patch, refusing a tracking id another group has', async () => {
    const ds = await newDataset(store);
    const [a, b] = await store.groups.createMany(ds, [{ name: 'a', trackingId: 'a', metadata: { x: 1 } }, { name: 'b', trackingId: 'b' }], false);
    const next = await store.groups.update(ds, a!.id, { name: 'A', trackingId: null, metadata: null });
    expect(next).toEqual({ ...a, name: 'A', trackingId: null, metadata: null, updatedAt: next.updatedAt });
    expect(await store.groups.get(ds, a!.id)).toEqual(next);
    expect(await store.groups.getByTrackingId(ds, 'a')).toBeUndefined();
    // null name and description keep the old ones.
    expect((await store.groups.update(ds, a!.id, { name: null, description: null, trackingId: 'a2' })).name).toBe('A');
    expect(await failure(store.groups.update(ds, a!.id, { name: 'lost', trackingId: 'b' }))).toEqual({
      code: 'duplicate_tracking_id',
      message: 'Cannot change tracking_id to "b": another group in this dataset already has it',
    });
    expect((await store.groups.get(ds, a!.id))!.name).toBe('A');
    expect(await failure(store.groups.update(ds, 'missing', { name: 'x' }))).toEqual({
      code: 'not_found',
      message: 'Not Found: group with id missing does not exist in this dataset',
    });
    expect((await store.groups.update(ds, b!.id, { trackingId: 'b' })).trackingId).toBe('b');
  });

  it('adds and removes members, logging each change of a chunk`s groups once', async () => {
    const ds = await newDataset(store);
    const [g] = await store.groups.createMany(ds, [{ name: 'g' }], false);
    const [c1, c2] = await store.chunks.createMany(ds, [{ chunkHtml: '1' }, { chunkHtml: '2' }]);
    const start = (await logOf(store, ds)).length;
    await store.groups.addChunk(ds, g!.id, c1!.id);
    await store.groups.addChunk(ds, g!.id, c1!.id);
    await tick();
    await store.groups.addChunk(ds, g!.id, c2!.id);
    expect(await failure(store.groups.addChunk(ds, 'nope', c1!.id))).toEqual({ code: 'not_found', message: 'Not Found: group with id nope does not exist in this dataset' });
    expect(await failure(store.groups.addChunk(ds, g!.id, 'nope'))).toEqual({ code: 'not_found', message: 'Not Found: chunk with id nope does not exist in this dataset' });
    const other = await newDataset(store);
    expect((await failure(store.groups.addChunk(other, g!.id, c1!.id))).code).toBe('not_found');

    const page = await store.groups.chunks(g!.id, 1, 10);
    expect(page).toEqual({ chunks: [c1, c2], total: 2 });
    expect(await store.groups.chunks(g!.id, 2, 1)).toEqual({ chunks: [c2], total: 2 });
    expect(await store.groups.chunks(g!.id, 3, 1)).toEqual({ chunks: [], total: 2 });
    expect(await store.groups.chunks('nope', 1, 10)).toEqual({ chunks: [], total: 0 });

    expect(await store.groups.removeChunk(ds, g!.id, c1!.id)).toBe(true);
    expect(await store.groups.removeChunk(ds, g!.id, c1!.id)).toBe(false);
    expect(await failure(store.groups.removeChunk(ds, 'nope', c1!.id))).toEqual({ code: 'not_found', message: 'Not Found: group with id nope does not exist in this dataset' });
    expect((await logOf(store, ds)).slice(start).map((e) => [e.chunkId, e.op])).toEqual([
      [c1!.id, 'upsert'],
      [c2!.id, 'upsert'],
      [c1!.id, 'upsert'],
    ]);
    expect(await store.groups.chunks(g!.id, 1, 10)).toEqual({ chunks: [c2], total: 1 });
  });

  it('lists a dataset`s groups newest first, and the groups of chunks oldest first', async () => {
    const ds = await newDataset(store);
    const [g1] = await store.groups.createMany(ds, [{ name: '1', trackingId: 'g1' }], false);
    await tick();
    const [g2, g3] = await store.groups.createMany(ds, [{ name: '2', trackingId: 'g2' }, { name: '3', trackingId: 'g3' }], false);
    const sameTime = [g2!, g3!].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(await store.groups.list(ds, 1, 10)).toEqual({ groups: [...sameTime, g1], total: 3 });
    expect(await store.groups.list(ds, 2, 2)).toEqual({ groups: [g1], total: 3 });
    expect(await store.groups.list(await newDataset(store), 1, 10)).toEqual({ groups: [], total: 0 });

    const [c1, c2, c3] = await store.chunks.createMany(ds, [
      { chunkHtml: '1', groupIds: [g2!.id, g1!.id] },
      { chunkHtml: '2', groupIds: [g3!.id] },
      { chunkHtml: '3' },
    ]);
    const map = await store.groups.groupsOfChunks(ds, [c3!.id, c1!.id, 'unknown', c2!.id, c1!.id]);
    expect([...map.keys()]).toEqual([c3!.id, c1!.id, 'unknown', c2!.id]);
    expect(map.get(c1!.id)).toEqual([g1, g2]);
    expect(map.get(c2!.id)).toEqual([g3]);
    expect(map.get(c3!.id)).toEqual([]);
    expect(map.get('unknown')).toEqual([]);
    // Another dataset sees none of them.
    expect((await store.groups.groupsOfChunks(await newDataset(store), [c1!.id])).get(c1!.id)).toEqual([]);
    expect((await store.groups.groupsOfChunks(ds, [])).size).toBe(0);
  });

  it('deletes a group, logging its chunks as changed, or with deleteChunks as deleted', async () => {
    const ds = await newDataset(store);
    const [keep, drop, lone] = await store.groups.createMany(ds, [{ name: 'keep' }, { name: 'drop' }, { name: 'lone' }], false);
    const chunks = await store.chunks.createMany(
      ds,
      Array.from({ length: 5 }, (_, i) => ({ chunkHtml: `c${i}`, groupIds: i < 3 ? [keep!.id, drop!.id] : [drop!.id] })),
    );
    const sortedIds = chunks.map((c) => c.id).sort();
    let start = (await logOf(store, ds)).length;

    expect(await store.groups.delete(ds, keep!.id, false)).toBe(true);
    expect(await store.groups.delete(ds, keep!.id, false)).toBe(false);
    expect(await store.groups.get(ds, keep!.id)).toBeUndefined();
    expect((await store.chunks.getMany(ds, sortedIds)).length).toBe(5);
    // Member chunks are logged by id.
    expect((await logOf(store, ds)).slice(start).map((e) => [e.chunkId, e.op])).toEqual(
      chunks
        .slice(0, 3)
        .map((c) => c.id)
        .sort()
        .map((id) => [id, 'upsert']),
    );
    expect((await store.groups.groupsOfChunks(ds, [chunks[0]!.id])).get(chunks[0]!.id)).toEqual([drop]);

    start = (await logOf(store, ds)).length;
    expect(await store.groups.delete(await newDataset(store), drop!.id, true)).toBe(false);
    expect(await store.groups.delete(ds, drop!.id, true)).toBe(true);
    expect(await store.chunks.getMany(ds, sortedIds)).toEqual([]);
    expect((await logOf(store, ds)).slice(start).map((e) => [e.chunkId, e.op])).toEqual(sortedIds.map((id) => [id, 'delete']));
    // A group without members deletes without logging.
    start = (await logOf(store, ds)).length;
    expect(await store.groups.delete(ds, lone!.id, true)).toBe(true);
    expect((await logOf(store, ds)).length).toBe(start);
    expect((await store.groups.list(ds, 1, 10)).total).toBe(0);
  });
});

describe('groups on postgres under concurrent writers', () => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore('postgres');
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('creates one group for a tracking id created by several batches at once; the others fail cleanly', async () => {
    const store = t.store;
    const ds = await newDataset(store);
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.groups.createMany(ds, [{ name: `n${i}` }, { trackingId: 'same' }], false)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(QuarryError);
        expect((r.reason as QuarryError).code).toBe('duplicate_tracking_id');
      }
    }
    expect((await store.groups.list(ds, 1, 100)).total).toBe(2);
    // Chunks naming a group tracking id from several batches at once all join the one group.
    await Promise.all(Array.from({ length: 6 }, (_, i) => store.chunks.createMany(ds, [{ chunkHtml: `c${i}`, groupTrackingIds: ['auto'] }])));
    const auto = await store.groups.getByTrackingId(ds, 'auto');
    expect((await store.groups.chunks(auto!.id, 1, 100)).total).toBe(6);
    expect((await store.groups.list(ds, 1, 100)).total).toBe(3);
  });
});
