/**
 * The chunk repository and the change log behave the same on SQLite and on PostgreSQL: the same
 * records, the same errors (code and message), all-or-nothing batches that leave no row and no
 * log entry behind when they fail, upserts by tracking id, bytewise id order for scrolling, and
 * a log whose entries name every write in order. On PostgreSQL, concurrent writers of one dataset
 * draw sequence numbers that commit in order (a reader following `seq > n` misses nothing), and
 * concurrent creates of one tracking id fail cleanly with `duplicate_tracking_id`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkInput, ChunkRecord } from '../../core/domain/chunk.js';
import { QuarryError } from '../../core/domain/errors.js';
import { appendChanges } from '../../store/postgres/change-log.js';
import type { PgStore } from '../../store/postgres/pg-store.js';
import type { ChangeLogEntry, Store } from '../../store/repository.js';
import { STORE_KINDS, openTestStore, type StoreKind, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

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

/** Every entry of a dataset's log. */
const logOf = (store: Store, datasetId: string): Promise<ChangeLogEntry[]> => store.changeLog.since(datasetId, 0, 1_000_000);
/** Every chunk of a dataset, by id. */
const allChunks = (store: Store, datasetId: string): Promise<ChunkRecord[]> => store.chunks.scrollIds(datasetId, null, 1_000_000);

const FULL: ChunkInput = {
  trackingId: 'full',
  chunkHtml: '<p>Hello <b>world</b></p>',
  link: 'https://example.com/a',
  metadata: { a: 1, nested: { b: [1, 2, 'x'] }, s: 'ü€😀' },
  tagSet: ['x', 'Y', 'ü'],
  timeStamp: 1_700_000_000_123,
  weight: 0.1,
  imageUrls: ['https://example.com/i.png'],
  location: { lat: -33.8688, lon: 151.2093 },
  numValue: 1e-7,
  semanticContent: 'semantic',
  fulltextContent: 'fulltext',
  convertHtmlToText: false,
  fulltextBoost: { phrase: 'hello', boost_factor: 1.5 },
  semanticBoost: { phrase: 'world', distance_factor: 0.25 },
};

describe.each(STORE_KINDS)('chunks and change log on %s', (kind: StoreKind) => {
  let t: TestStore;
  let store: Store;
  beforeAll(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('creates chunks with every field, and reads them back by id, tracking id and in batches', async () => {
    const ds = await newDataset(store);
    const before = Date.now();
    const [full, bare] = await store.chunks.createMany(ds, [FULL, {}]);
    expect(full).toMatchObject({ ...FULL, datasetId: ds });
    expect(full!.createdAt).toBeGreaterThanOrEqual(before);
    expect(full!.updatedAt).toBe(full!.createdAt);
    expect(bare).toEqual({
      id: bare!.id,
      datasetId: ds,
      trackingId: null,
      chunkHtml: null,
      link: null,
      metadata: null,
      tagSet: [],
      timeStamp: null,
      weight: 0,
      imageUrls: null,
      location: null,
      numValue: null,
      semanticContent: null,
      fulltextContent: null,
      convertHtmlToText: true,
      fulltextBoost: null,
      semanticBoost: null,
      createdAt: bare!.createdAt,
      updatedAt: bare!.createdAt,
    });
    // What is read is exactly what createMany answered.
    expect(await store.chunks.get(ds, { id: full!.id })).toEqual(full);
    expect(await store.chunks.get(ds, { trackingId: 'full' })).toEqual(full);
    expect(await store.chunks.get(ds, { id: bare!.id })).toEqual(bare);
    expect(await store.chunks.get(ds, { id: 'nope' })).toBeUndefined();
    expect(await store.chunks.get(ds, { trackingId: 'FULL' })).toBeUndefined();
    // In the order asked, repeats repeated, unknown ids dropped; another dataset's chunks are not this one's.
    expect(await store.chunks.getMany(ds, [bare!.id, 'nope', full!.id, bare!.id])).toEqual([bare, full, bare]);
    expect(await store.chunks.getMany(ds, [])).toEqual([]);
    expect(await store.chunks.getManyByTrackingIds(ds, ['missing', 'full', 'full'])).toEqual([full, full]);
    const other = await newDataset(store);
    expect(await store.chunks.getMany(other, [full!.id])).toEqual([]);
    expect(await store.chunks.get(other, { trackingId: 'full' })).toBeUndefined();
    // Both appended to the log, in order.
    const log = await logOf(store, ds);
    expect(log.map((e) => [e.datasetId, e.chunkId, e.op])).toEqual([
      [ds, full!.id, 'upsert'],
      [ds, bare!.id, 'upsert'],
    ]);
    expect(log[1]!.seq).toBeGreaterThan(log[0]!.seq);
    expect(await store.changeLog.head()).toBeGreaterThanOrEqual(log[1]!.seq);
  });

  it('fails a whole batch on a tracking id repeated in it or already stored, leaving nothing behind', async () => {
    const ds = await newDataset(store);
    const [kept] = await store.chunks.createMany(ds, [{ trackingId: 'kept', chunkHtml: 'kept' }]);
    const logBefore = await logOf(store, ds);

    expect(await failure(store.chunks.createMany(ds, [{ trackingId: 'a', groupTrackingIds: ['g-new'] }, { trackingId: 'b' }, { trackingId: 'a' }]))).toEqual({
      code: 'duplicate_tracking_id',
      message: 'Duplicate tracking_id "a" appears more than once in this request; nothing was stored',
    });
    expect(await failure(store.chunks.createMany(ds, [{ trackingId: 'c', groupTrackingIds: ['g-new'] }, { trackingId: 'kept' }]))).toEqual({
      code: 'duplicate_tracking_id',
      message:
        'A chunk with tracking_id "kept" already exists in this dataset; nothing from this request was stored (set upsert_by_tracking_id to replace it)',
    });
    // The first failing input decides the error, as the inputs are checked in order.
    expect((await failure(store.chunks.createMany(ds, [{ trackingId: 'kept' }, { trackingId: 'x' }, { trackingId: 'x' }]))).message).toMatch(/^A chunk with tracking_id "kept"/);
    // Upsert flags belong to their input: the second input's flag does not cover the first.
    expect((await failure(store.chunks.createMany(ds, [{ trackingId: 'kept' }, { trackingId: 'y' }], [false, true]))).code).toBe('duplicate_tracking_id');
    // A group id that does not exist fails the batch after the earlier inputs were resolved (and their groups created).
    expect(
      await failure(store.chunks.createMany(ds, [{ trackingId: 'd', groupTrackingIds: ['g-new'] }, { groupIds: ['00000000-0000-4000-8000-000000000000'] }])),
    ).toEqual({ code: 'not_found', message: 'Not Found: group with id 00000000-0000-4000-8000-000000000000 does not exist in this dataset' });

    expect(await allChunks(store, ds)).toEqual([kept]);
    expect(await logOf(store, ds)).toEqual(logBefore);
    expect(await store.groups.getByTrackingId(ds, 'g-new')).toBeUndefined();
    expect((await store.groups.list(ds, 1, 10)).total).toBe(0);
    // The dataset is not stuck: a good batch goes through afterwards.
    expect(await store.chunks.createMany(ds, [{ trackingId: 'a' }, { trackingId: 'b' }])).toHaveLength(2);
  });

  it('replaces a chunk by tracking id with upsert, keeping its id and creation time and adding groups', async () => {
    const ds = await newDataset(store);
    const [g1, g2] = await store.groups.createMany(ds, [{ trackingId: 'g1' }, { trackingId: 'g2' }], false);
    const [old] = await store.chunks.createMany(ds, [{ ...FULL, trackingId: 'doc', groupIds: [g1!.id] }]);
    await new Promise((r) => setTimeout(r, 5));
    const [replaced, fresh] = await store.chunks.createMany(
      ds,
      [
        { trackingId: 'doc', chunkHtml: 'new text', groupIds: [g2!.id] },
        { trackingId: 'Doc', chunkHtml: 'another chunk: tracking ids differ in case' },
      ],
      [true, true],
    );
    expect(replaced!.id).toBe(old!.id);
    expect(replaced!.createdAt).toBe(old!.createdAt);
    expect(replaced!.updatedAt).toBeGreaterThan(old!.updatedAt);
    // Every field is the new input's: absent ones are reset, not kept.
    expect(replaced).toMatchObject({ chunkHtml: 'new text', link: null, metadata: null, tagSet: [], location: null, convertHtmlToText: true, semanticBoost: null });
    expect(fresh!.id).not.toBe(old!.id);
    expect(await store.chunks.get(ds, { id: old!.id })).toEqual(replaced);
    expect(await store.chunks.getManyByTrackingIds(ds, ['Doc', 'doc'])).toEqual([fresh, replaced]);
    // An upsert adds the named groups to those the chunk had.
    const groups = await store.groups.groupsOfChunks(ds, [old!.id]);
    expect(groups.get(old!.id)!.map((g) => g.trackingId).sort()).toEqual(['g1', 'g2']);
    expect((await logOf(store, ds)).map((e) => [e.chunkId, e.op])).toEqual([
      [old!.id, 'upsert'],
      [old!.id, 'upsert'],
      [fresh!.id, 'upsert'],
    ]);
  });

  it('joins groups by id and by tracking id, creating a missing group once for the whole batch', async () => {
    const ds = await newDataset(store);
    const [g] = await store.groups.createMany(ds, [{ name: 'existing', trackingId: 'existing' }], false);
    const chunks = await store.chunks.createMany(ds, [
      { chunkHtml: 'a', groupIds: [g!.id, g!.id], groupTrackingIds: ['auto', 'existing'] },
      { chunkHtml: 'b', groupTrackingIds: ['auto'] },
    ]);
    const auto = await store.groups.getByTrackingId(ds, 'auto');
    expect(auto).toMatchObject({ name: 'auto', description: '', trackingId: 'auto', metadata: null, tagSet: [], fileId: null });
    expect((await store.groups.list(ds, 1, 10)).total).toBe(2);
    const page = await store.groups.chunks(auto!.id, 1, 10);
    expect(page.total).toBe(2);
    expect(page.chunks.map((c) => c.id).sort()).toEqual(chunks.map((c) => c.id).sort());
    expect((await store.groups.chunks(g!.id, 1, 10)).chunks).toEqual([chunks[0]]);
  });

  it('updates a chunk with a patch, checking the new tracking id and the groups, all or nothing', async () => {
    const ds = await newDataset(store);
    const [g1, g2] = await store.groups.createMany(ds, [{ trackingId: 'g1' }, { trackingId: 'g2' }], false);
    const [a, b] = await store.chunks.createMany(ds, [
      { ...FULL, trackingId: 'a', groupIds: [g1!.id] },
      { trackingId: 'b', chunkHtml: 'b' },
    ]);
    const patched = await store.chunks.update(ds, { id: a!.id }, { chunkHtml: 'patched', metadata: null, location: null, weight: null, tagSet: null });
    expect(patched).toEqual({ ...a, chunkHtml: 'patched', metadata: null, location: null, tagSet: [], updatedAt: patched.updatedAt });
    expect(patched.updatedAt).toBeGreaterThanOrEqual(a!.updatedAt);
    expect(await store.chunks.get(ds, { id: a!.id })).toEqual(patched);
    // Groups untouched by a patch that names none.
    expect((await store.groups.groupsOfChunks(ds, [a!.id])).get(a!.id)!.map((g) => g.id)).toEqual([g1!.id]);

    const renamed = await store.chunks.update(ds, { trackingId: 'a' }, { newTrackingId: 'A', groupIds: [g2!.id], groupTrackingIds: ['g3'] });
    expect(renamed.trackingId).toBe('A');
    expect(await store.chunks.get(ds, { trackingId: 'a' })).toBeUndefined();
    expect((await store.groups.groupsOfChunks(ds, [a!.id])).get(a!.id)!.map((g) => g.trackingId).sort()).toEqual(['g2', 'g3']);
    // Its own tracking id is not a conflict.
    expect((await store.chunks.update(ds, { id: a!.id }, { newTrackingId: 'A' })).trackingId).toBe('A');

    const logBefore = await logOf(store, ds);
    expect(await failure(store.chunks.update(ds, { id: a!.id }, { newTrackingId: 'b', chunkHtml: 'lost' }))).toEqual({
      code: 'duplicate_tracking_id',
      message: 'Cannot change tracking_id to "b": another chunk in this dataset already has it',
    });
    expect(await failure(store.chunks.update(ds, { id: 'missing' }, { chunkHtml: 'x' }))).toEqual({
      code: 'not_found',
      message: 'Not Found: chunk with id missing does not exist in this dataset',
    });
    expect(await failure(store.chunks.update(ds, { trackingId: 'missing' }, { chunkHtml: 'x' }))).toEqual({
      code: 'not_found',
      message: 'Not Found: chunk with tracking_id "missing" does not exist in this dataset',
    });
    // The group check fails after the row was written: the row must come back as it was.
    const current = await store.chunks.get(ds, { id: a!.id });
    expect(await failure(store.chunks.update(ds, { id: a!.id }, { chunkHtml: 'lost', groupTrackingIds: ['g4'], groupIds: ['nope'] }))).toEqual({
      code: 'not_found',
      message: 'Not Found: group with id nope does not exist in this dataset',
    });
    expect(await store.chunks.get(ds, { id: a!.id })).toEqual(current);
    expect(await store.groups.getByTrackingId(ds, 'g4')).toBeUndefined();
    expect(await store.chunks.get(ds, { id: b!.id })).toEqual(b);
    expect(await logOf(store, ds)).toEqual(logBefore);
    // An empty group list clears the chunk's groups.
    await store.chunks.update(ds, { id: a!.id }, { groupIds: [] });
    expect((await store.groups.groupsOfChunks(ds, [a!.id])).get(a!.id)).toEqual([]);
  });

  it('deletes one chunk, or many created before a cutoff, logging each deletion in the order asked', async () => {
    const ds = await newDataset(store);
    const made = await store.chunks.createMany(
      ds,
      Array.from({ length: 6 }, (_, i) => ({ trackingId: `t${i}`, chunkHtml: `c${i}` })),
    );
    const ids = made.map((c) => c.id);
    const logStart = (await logOf(store, ds)).length;
    expect(await store.chunks.delete(ds, { id: ids[0]! })).toBe(true);
    expect(await store.chunks.delete(ds, { id: ids[0]! })).toBe(false);
    expect(await store.chunks.delete(ds, { trackingId: 't1' })).toBe(true);
    expect(await store.chunks.delete(ds, { trackingId: 't1' })).toBe(false);
    // Another dataset cannot delete this one's chunk.
    const other = await newDataset(store);
    expect(await store.chunks.delete(other, { id: ids[2]! })).toBe(false);
    expect(await store.chunks.deleteMany(other, [ids[2]!], Date.now())).toBe(0);

    await new Promise((r) => setTimeout(r, 5));
    const [late] = await store.chunks.createMany(ds, [{ chunkHtml: 'late' }]);
    const cutoff = late!.createdAt - 1;
    expect(await store.chunks.deleteMany(ds, [ids[5]!, 'unknown', late!.id, ids[0]!, ids[3]!, ids[5]!], cutoff)).toBe(2);
    expect(await store.chunks.deleteMany(ds, [], cutoff)).toBe(0);
    expect((await allChunks(store, ds)).map((c) => c.id).sort()).toEqual([ids[2]!, ids[4]!, late!.id].sort());
    expect((await logOf(store, ds)).slice(logStart).map((e) => [e.chunkId, e.op])).toEqual([
      [ids[0], 'delete'],
      [ids[1], 'delete'],
      [late!.id, 'upsert'],
      [ids[5], 'delete'],
      [ids[3], 'delete'],
    ]);
    // A fractional cutoff is a cutoff, not an error.
    expect(await store.chunks.deleteMany(ds, [ids[2]!], late!.createdAt + 0.5)).toBe(1);
  });

  it('scrolls by id in bytewise order, whatever the case of the id it starts after', async () => {
    const ds = await newDataset(store);
    const made = await store.chunks.createMany(
      ds,
      Array.from({ length: 40 }, (_, i) => ({ chunkHtml: `c${i}` })),
    );
    const ids = made.map((c) => c.id).sort();
    expect((await allChunks(store, ds)).map((c) => c.id)).toEqual(ids);
    const paged: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: ChunkRecord[] = await store.chunks.scrollIds(ds, after, 7);
      if (page.length === 0) break;
      paged.push(...page.map((c) => c.id));
      after = page.at(-1)!.id;
    }
    expect(paged).toEqual(ids);
    // Upper case sorts before lower case and after digits, bytewise (a locale collation would put
    // 'A' beside 'a'): starting after an upper-cased id gives exactly the ids above it in byte order.
    for (const from of ['A', 'F', ids[20]!.toUpperCase(), '9', 'g', '']) {
      const got = (await store.chunks.scrollIds(ds, from, 100)).map((c) => c.id);
      expect(got, `after ${from}`).toEqual(ids.filter((id) => id > from));
    }
    const first = await store.chunks.scrollIds(ds, null, 3);
    expect(first).toEqual(await store.chunks.getMany(ds, ids.slice(0, 3)));
  });

  it('reads the change log after a sequence number, with a limit, per dataset', async () => {
    const ds = await newDataset(store);
    const other = await newDataset(store);
    const mine = await store.chunks.createMany(ds, [{ chunkHtml: '1' }, { chunkHtml: '2' }, { chunkHtml: '3' }]);
    await store.chunks.createMany(other, [{ chunkHtml: 'x' }]);
    await store.chunks.delete(ds, { id: mine[1]!.id });
    const all = await logOf(store, ds);
    expect(all.map((e) => [e.chunkId, e.op])).toEqual([
      [mine[0]!.id, 'upsert'],
      [mine[1]!.id, 'upsert'],
      [mine[2]!.id, 'upsert'],
      [mine[1]!.id, 'delete'],
    ]);
    for (let i = 1; i < all.length; i++) expect(all[i]!.seq).toBeGreaterThan(all[i - 1]!.seq);
    expect(await store.changeLog.since(ds, all[0]!.seq, 2)).toEqual(all.slice(1, 3));
    expect(await store.changeLog.since(ds, all.at(-1)!.seq, 10)).toEqual([]);
    const head = await store.changeLog.head();
    expect(head).toBeGreaterThanOrEqual(all.at(-1)!.seq);
    expect(head).toBe(Math.max(all.at(-1)!.seq, (await logOf(store, other)).at(-1)!.seq));
    expect(typeof head).toBe('number');
  });
});

/**
 * One seeded run of random chunk writes on both stores, compared step by step: every answer
 * (records, booleans, counts, errors) and the final state and log must be the same once ids are
 * numbered by first appearance and clock readings left out.
 */
describe('chunks: the same answers on both stores', () => {
  const stores: TestStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.dispose();
  });

  /** A run's transcript, ids renamed in order of appearance. */
  async function run(kind: StoreKind, seed: number): Promise<unknown[]> {
    const t = await openTestStore(kind);
    stores.push(t);
    const store = t.store;
    const ds = await newDataset(store);
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const tids = ['a', 'b', 'A', 'c', 'd', null];
    const gtids = ['g1', 'g2', 'G1'];
    const known: string[] = [];
    const input = (): ChunkInput => ({
      trackingId: pick(tids),
      chunkHtml: pick(['x', 'y', null]),
      tagSet: pick([[], ['t'], null]),
      weight: pick([0, 1.5, null]),
      ...(r() < 0.3 ? { groupTrackingIds: [pick(gtids)] } : {}),
    });
    const out: unknown[] = [];
    const step = async (name: string, fn: () => Promise<unknown>) => {
      try {
        out.push([name, await fn()]);
      } catch (err) {
        expect(err, String(err)).toBeInstanceOf(QuarryError);
        out.push([name, 'error', (err as QuarryError).code, (err as QuarryError).message]);
      }
    };
    for (let i = 0; i < 120; i++) {
      const op = r();
      if (op < 0.35) {
        const n = 1 + Math.floor(r() * 3);
        const inputs = Array.from({ length: n }, input);
        const upsert = inputs.map(() => r() < 0.5);
        await step('createMany', async () => {
          const made = await store.chunks.createMany(ds, inputs, upsert);
          known.push(...made.map((c) => c.id));
          return made;
        });
      } else if (op < 0.55 && known.length > 0) {
        const sel = r() < 0.5 ? { id: pick(known) } : { trackingId: pick(tids.filter((x) => x !== null)) };
        const patch = { chunkHtml: pick(['p', undefined]), newTrackingId: pick([undefined, 'a', 'b', 'e', null]), ...(r() < 0.3 ? { groupTrackingIds: [pick(gtids)] } : {}) };
        await step('update', () => store.chunks.update(ds, sel, patch));
      } else if (op < 0.65 && known.length > 0) {
        await step('delete', () => store.chunks.delete(ds, r() < 0.5 ? { id: pick(known) } : { trackingId: pick(['a', 'b', 'A']) }));
      } else if (op < 0.72 && known.length > 0) {
        await step('deleteMany', () => store.chunks.deleteMany(ds, [pick(known), pick(known), 'zz'], Date.now() + 1000));
      } else if (op < 0.85 && known.length > 0) {
        await step('getMany', () => store.chunks.getMany(ds, [pick(known), 'zz', pick(known)]));
      } else {
        await step('byTracking', () => store.chunks.getManyByTrackingIds(ds, ['a', 'A', 'b', 'zz']));
      }
    }
    // Keyed by id: the order of random ids is no store's answer.
    out.push(['final', Object.fromEntries((await allChunks(store, ds)).map((c) => [c.id, c]))]);
    out.push(['log', (await logOf(store, ds)).map((e) => [e.chunkId, e.op])]);
    const groups = await store.groups.list(ds, 1, 100);
    out.push(['groups', groups.total, groups.groups.map((g) => g.trackingId).sort()]);
    // Ids in order of appearance; times dropped (each store reads its own clock).
    const names = new Map<string, string>();
    const rename = (text: string) =>
      text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
        if (id === ds) return '<dataset>';
        if (!names.has(id)) names.set(id, `<id${names.size}>`);
        return names.get(id)!;
      });
    return JSON.parse(rename(JSON.stringify(out, (k, v: unknown) => (k === 'createdAt' || k === 'updatedAt' ? undefined : v)))) as unknown[];
  }

  it('for random writes with colliding tracking ids', async () => {
    for (const seed of [1, 2, 3]) {
      const [lite, pg] = [await run('sqlite', seed), await run('postgres', seed)];
      expect(pg, `seed ${seed}`).toEqual(lite);
      // The run did exercise failures and successes.
      expect(lite.some((s) => (s as unknown[])[1] === 'error')).toBe(true);
    }
  }, 60_000);
});

describe('chunks on postgres under concurrent writers', () => {
  let t: TestStore;
  let store: Store;
  beforeAll(async () => {
    t = await openTestStore('postgres');
    store = t.store;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('commits one dataset`s log in sequence order, so a reader following seq > n misses nothing', async () => {
    const ds = await newDataset(store);
    const other = await newDataset(store);
    let writing = true;
    const seen: ChangeLogEntry[] = [];
    // The core's way of reading: everything after the last seq it applied.
    const reader = (async () => {
      let after = 0;
      while (writing) {
        const batch = await store.changeLog.since(ds, after, 1000);
        seen.push(...batch);
        if (batch.length > 0) after = batch.at(-1)!.seq;
        await new Promise((r) => setImmediate(r));
      }
      seen.push(...(await store.changeLog.since(ds, after, 100_000)));
    })();
    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        const made: string[] = [];
        for (let round = 0; round < 5; round++) {
          const chunks = await store.chunks.createMany(
            ds,
            Array.from({ length: 12 }, (_, i) => ({ chunkHtml: `w${w} r${round} c${i}`, trackingId: `w${w}-${round}-${i}` })),
          );
          made.push(...chunks.map((c) => c.id));
          // Another dataset's writes interleave, drawing from the same sequence.
          await store.chunks.createMany(other, [{ chunkHtml: `other ${w} ${round}` }]);
        }
        return made;
      })(),
    );
    const made = (await Promise.all(writers)).flat();
    writing = false;
    await reader;
    const log = await logOf(store, ds);
    expect(log).toHaveLength(made.length);
    for (let i = 1; i < log.length; i++) expect(log[i]!.seq).toBeGreaterThan(log[i - 1]!.seq);
    expect(new Set(log.map((e) => e.chunkId))).toEqual(new Set(made));
    // The incremental reader saw every entry once: none committed behind its back.
    expect(seen.map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    expect((await allChunks(store, ds)).length).toBe(made.length);
  }, 60_000);

  it('holds a second writer of the dataset until the first commits, so no later seq is visible before an earlier one', async () => {
    const ds = await newDataset(store);
    const other = await newDataset(store);
    const db = (store as PgStore).db;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let appended!: () => void;
    const hasAppended = new Promise<void>((r) => (appended = r));
    // A transaction that has drawn its seq and has not committed yet.
    const slow = db.tx(async (tx) => {
      await appendChanges(tx, ds, [{ chunkId: 'slow', op: 'upsert' }], Date.now());
      appended();
      await gate;
    });
    await hasAppended;
    let fastDone = false;
    const fast = store.chunks.createMany(ds, [{ chunkHtml: 'fast' }]).then((r) => ((fastDone = true), r));
    try {
      // Another dataset is not held up.
      await store.chunks.createMany(other, [{ chunkHtml: 'elsewhere' }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(fastDone).toBe(false);
      // Nothing of the dataset is visible: a reader cannot move past the uncommitted seq.
      expect(await logOf(store, ds)).toEqual([]);
    } finally {
      release();
    }
    await slow;
    const [made] = await fast;
    const log = await logOf(store, ds);
    expect(log.map((e) => e.chunkId)).toEqual(['slow', made!.id]);
    expect(log[1]!.seq).toBeGreaterThan(log[0]!.seq);
  });

  it('lets exactly one of several concurrent creates of a tracking id succeed; the others fail with duplicate_tracking_id', async () => {
    const ds = await newDataset(store);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => store.chunks.createMany(ds, [{ chunkHtml: `extra ${i}` }, { trackingId: 'same', chunkHtml: `try ${i}`, groupTrackingIds: ['shared'] }])),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(1);
    for (const f of failed) {
      expect(f.reason).toBeInstanceOf(QuarryError);
      expect((f.reason as QuarryError).code).toBe('duplicate_tracking_id');
      expect((f.reason as QuarryError).message).toMatch(/^A chunk with tracking_id "same" already exists in this dataset/);
    }
    // The losers left nothing: one batch of two chunks, one group.
    expect(await allChunks(store, ds)).toHaveLength(2);
    expect((await store.groups.list(ds, 1, 10)).total).toBe(1);
    expect(await logOf(store, ds)).toHaveLength(2);
  });

  it('gives a new tracking id to one of two chunks renamed to it at once', async () => {
    const ds = await newDataset(store);
    const [a, b] = await store.chunks.createMany(ds, [{ trackingId: 'a' }, { trackingId: 'b' }]);
    const results = await Promise.allSettled([a!, b!].map((c) => store.chunks.update(ds, { id: c.id }, { newTrackingId: 'target' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(failed.reason).toBeInstanceOf(QuarryError);
    expect((failed.reason as QuarryError).message).toBe('Cannot change tracking_id to "target": another chunk in this dataset already has it');
  });

  it('refuses text PostgreSQL cannot hold with a 400, storing nothing', async () => {
    const ds = await newDataset(store);
    const err = await failure(store.chunks.createMany(ds, [{ chunkHtml: 'fine' }, { chunkHtml: 'nul \u0000 inside' }]));
    expect(err.code).toBe('bad_request');
    expect(await allChunks(store, ds)).toEqual([]);
    expect(await logOf(store, ds)).toEqual([]);
  });

  it('announces a commit that appended to a dataset`s log once, after it commits', async () => {
    const ds = await newDataset(store);
    const heard: (string | null)[] = [];
    const stop = await (store as PgStore).watchChanges((id) => heard.push(id));
    try {
      await store.chunks.createMany(ds, [{ chunkHtml: '1' }, { chunkHtml: '2' }]);
      await failure(store.chunks.createMany(ds, [{ trackingId: 'x' }, { trackingId: 'x' }]));
      const deadline = Date.now() + 5000;
      while (heard.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toEqual([ds]);
    } finally {
      await stop();
    }
  });
});
