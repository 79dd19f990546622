/**
 * Contract of the user event repository on both stores: an event reads back as written, inserts
 * keep one event per id (across calls and within a batch, the first winning) and say how many
 * were new, a bad row never fails its batch, listings are newest first (ties by id) by page, and
 * each filter (dates inclusive, type, conversion, user, metadata) selects exactly what an oracle
 * over the inserted events selects; the metadata filter compares by JSON type and value (strings,
 * numbers, booleans, null; nested keys; never through arrays) the same on both engines. The SQLite
 * writer thread runs the same writes.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { UserEvent, UserEventFilter } from '../../core/domain/user-events.js';
import type { Store } from '../../store/repository.js';
import { listUserEvents } from '../../store/reports/user-event-listing.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { openSqliteStore, sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { withWriteThread } from '../../store/sqlite/threaded-store.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';

/** A click event; `over` replaces fields. */
const event = (over: Partial<UserEvent> = {}): UserEvent => ({
  id: randomUUID(),
  datasetId: DATASET,
  eventType: 'click',
  eventName: 'result clicked ü',
  items: [JSON.stringify({ chunk_id: 'c', position: 3 })],
  metadata: { page: 'home', n: [1, 2.5] },
  userId: 'user-1',
  isConversion: true,
  requestId: randomUUID(),
  requestType: 'search',
  location: 'https://shop.test/p/1',
  position: 3,
  clickedChunkId: randomUUID(),
  revenue: 0,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  ...over,
});

/** A bare view event: nothing optional set. */
const bare = (over: Partial<UserEvent> = {}): UserEvent =>
  event({ eventType: 'view', items: ['a', 'b'], metadata: null, userId: null, isConversion: false, requestId: null, requestType: null, location: null, position: null, clickedChunkId: null, ...over });

/** Newest first, ties by id (bytewise, as both stores order TEXT). */
const newestFirst = (events: readonly UserEvent[]): UserEvent[] =>
  [...events].sort((x, y) => y.createdAt - x.createdAt || Buffer.compare(Buffer.from(x.id), Buffer.from(y.id)));

/** The JSON value at `path` of `value` through object members only, or `undefined` (missing). */
function at(value: unknown, keys: readonly string[]): unknown {
  let v = value;
  for (const k of keys) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The oracle of the filter, over events of DATASET. */
function matches(e: UserEvent, f: UserEventFilter): boolean {
  if (f.createdAfter !== undefined && e.createdAt < f.createdAfter) return false;
  if (f.createdBefore !== undefined && e.createdAt > f.createdBefore) return false;
  if (f.eventType !== undefined && e.eventType !== f.eventType) return false;
  if (f.isConversion !== undefined && e.isConversion !== f.isConversion) return false;
  if (f.userId !== undefined && e.userId !== f.userId) return false;
  if (f.metadata !== undefined) {
    const v = at(e.metadata, f.metadata.path);
    // Same type, same value: typeof tells string, number, boolean apart; null is only JSON null.
    if (v === undefined || typeof v !== typeof f.metadata.value || v !== f.metadata.value) return false;
  }
  return true;
}

describe.each(STORE_KINDS)('%s store: user events', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  const all = (datasetId = DATASET, filter: UserEventFilter = {}) => listUserEvents(store.reports, datasetId, filter, { limit: 10_000, offset: 0 });

  it('reads an event back as it was written', async () => {
    const full = event();
    const purchase = event({ eventType: 'purchase', items: ['{"tracking_id":"t","revenue":2.5}', '{"tracking_id":"u","revenue":1}'], revenue: 3.5, position: null, clickedChunkId: null });
    const view = bare();
    const filterClicked = bare({ eventType: 'filter_clicked', items: [], metadata: { 'match_any::tag_set': ['red'] } });
    expect(await store.userEvents.insertMany([full, purchase, view, filterClicked])).toBe(4);
    for (const e of [full, purchase, view, filterClicked]) expect(await store.userEvents.get(DATASET, e.id)).toEqual(e);
    expect(await store.userEvents.get(OTHER, full.id)).toBeUndefined();
    expect(await store.userEvents.get(DATASET, randomUUID())).toBeUndefined();
  });

  it('ignores ids already stored, across calls and within a batch (the first event wins), and counts the new ones', async () => {
    const a = event({ eventName: 'first' });
    const b = event();
    expect(await store.userEvents.insertMany([])).toBe(0);
    expect(await store.userEvents.insertMany([a, { ...a, eventName: 'second' }, b])).toBe(2);
    expect((await store.userEvents.get(DATASET, a.id))!.eventName).toBe('first');
    expect(await store.userEvents.insertMany([{ ...b, eventName: 'again' }, a])).toBe(0);
    const c = event();
    expect(await store.userEvents.insertMany([a, c, b])).toBe(1);
    expect((await store.userEvents.get(DATASET, b.id))!.eventName).toBe(b.eventName);
    expect(await all()).toHaveLength(3);
  });

  it('never fails a batch for one bad row: rows missing a required value are skipped, odd numbers stored as the columns allow', async () => {
    const good = event();
    const noName = event({ eventName: null as unknown as string });
    const noConversion = event({ isConversion: undefined as unknown as boolean });
    const nanRevenue = event({ eventType: 'purchase', revenue: Number.NaN });
    expect(await store.userEvents.insertMany([noName, good, noConversion, nanRevenue])).toBe(2);
    expect(await store.userEvents.get(DATASET, good.id)).toEqual(good);
    expect(await store.userEvents.get(DATASET, noName.id)).toBeUndefined();
    expect(await store.userEvents.get(DATASET, noConversion.id)).toBeUndefined();
    expect(await store.userEvents.get(DATASET, nanRevenue.id)).toEqual({ ...nanRevenue, revenue: 0 });
  });

  it('keeps an event holding the NUL character (replaced on PostgreSQL), and its metadata stays filterable', async () => {
    const nul = event({ eventName: 'a\u0000b', metadata: { k: 'x\u0000y', 'n\u0000': 1, tag: 'nul' } });
    const other = event({ metadata: { tag: 'plain' } });
    expect(await store.userEvents.insertMany([nul, other])).toBe(2);
    const stored = await store.userEvents.get(DATASET, nul.id);
    expect(stored).toEqual(
      kind === 'sqlite' ? nul : { ...nul, eventName: 'a\uFFFDb', metadata: { k: 'x\uFFFDy', 'n\uFFFD': 1, tag: 'nul' } },
    );
    // The metadata filter reads every row's metadata as JSON: the NUL row must not break it.
    expect((await all(DATASET, { metadata: { path: ['tag'], value: 'plain' } })).map((e) => e.id)).toEqual([other.id]);
  });

  it('stores a large batch in one call', async () => {
    const batch = Array.from({ length: 3000 }, (_, i) => event({ createdAt: 1_700_000_000_000 + i, metadata: { seq: i } }));
    expect(await store.userEvents.insertMany(batch)).toBe(3000);
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 2, offset: 0 })).toEqual([batch[2999], batch[2998]]);
  });

  it("lists a dataset's events newest first, ties by id, by page", async () => {
    const events = [1000, 3000, 2000, 3000, 2000, 2000].map((createdAt) => event({ createdAt }));
    await store.userEvents.insertMany(events);
    await store.userEvents.insertMany([event({ datasetId: OTHER, createdAt: 5000 })]);
    const expected = newestFirst(events);
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 10, offset: 0 })).toEqual(expected);
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 4, offset: 0 })).toEqual(expected.slice(0, 4));
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 4, offset: 4 })).toEqual(expected.slice(4));
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 4, offset: 8 })).toEqual([]);
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 0, offset: 0 })).toEqual([]);
    expect(await listUserEvents(store.reports, randomUUID(), {}, { limit: 10, offset: 0 })).toEqual([]);
  });

  it('filters by date (both bounds inclusive), type, conversion and user, alone and together', async () => {
    const types = ['view', 'add_to_cart', 'click', 'purchase', 'filter_clicked'] as const;
    const events = Array.from({ length: 40 }, (_, i) =>
      event({ createdAt: 1000 + i * 10, eventType: types[i % 5]!, isConversion: i % 3 === 0, userId: i % 4 === 0 ? null : `u${i % 4}` }),
    );
    await store.userEvents.insertMany(events);
    await store.userEvents.insertMany([event({ datasetId: OTHER, createdAt: 1100, eventType: 'view', userId: 'u1' })]);
    const filters: UserEventFilter[] = [
      {},
      { createdAfter: 1100 },
      { createdBefore: 1100 },
      { createdAfter: 1100, createdBefore: 1200 },
      { createdAfter: 1101, createdBefore: 1109 },
      { eventType: 'purchase' },
      { isConversion: true },
      { isConversion: false },
      { userId: 'u2' },
      { userId: 'nobody' },
      { eventType: 'view', isConversion: true, userId: 'u1', createdAfter: 1000, createdBefore: 1390 },
    ];
    for (const f of filters) {
      const expected = newestFirst(events.filter((e) => matches(e, f)));
      expect(await all(DATASET, f), JSON.stringify(f)).toEqual(expected);
    }
    // Pages of a filtered listing.
    const conv = newestFirst(events.filter((e) => e.isConversion));
    expect(await listUserEvents(store.reports, DATASET, { isConversion: true }, { limit: 5, offset: 5 })).toEqual(conv.slice(5, 10));
  });

  it('compares metadata by JSON type and value: strings, numbers, booleans and null, nested, never through arrays', async () => {
    const metadatas: unknown[] = [
      { color: 'red', size: 5, sale: true, note: null, a: { b: 'x', c: 2.5 } },
      { color: 'blue', size: 5.0, sale: false, a: { b: 'y', c: 2 } },
      { color: '5', size: '5', sale: 'true', note: 'null', a: { b: 'x' } },
      { color: 5, size: 1, sale: 1, a: ['x'] },
      { color: 'RED', size: 5.5, sale: 0, a: { b: { c: 'x' } } },
      { list: ['red'], 'match_any::tag_set': 'shoes', 'weird-key:@#/+': 'ok', ü: 'umlaut' },
      { size: 50, sale: null },
      ['color', 'red'],
      'red',
      5,
      true,
      null,
      { a: { '0': 'zero' }, b: ['zero'] },
    ];
    const events = metadatas.map((metadata, i) => event({ metadata, createdAt: 1000 + i }));
    await store.userEvents.insertMany(events);
    await store.userEvents.insertMany([event({ datasetId: OTHER, metadata: { color: 'red' } })]);
    const cases: { path: string[]; value: unknown; n: number }[] = [
      { path: ['color'], value: 'red', n: 1 },
      { path: ['color'], value: '5', n: 1 },
      { path: ['color'], value: 5, n: 1 },
      { path: ['size'], value: 5, n: 2 },
      { path: ['size'], value: 5.5, n: 1 },
      { path: ['size'], value: '5', n: 1 },
      { path: ['sale'], value: true, n: 1 },
      { path: ['sale'], value: false, n: 1 },
      { path: ['sale'], value: 'true', n: 1 },
      { path: ['sale'], value: 1, n: 1 },
      { path: ['sale'], value: 0, n: 1 },
      { path: ['sale'], value: null, n: 1 },
      { path: ['note'], value: null, n: 1 },
      { path: ['note'], value: 'null', n: 1 },
      { path: ['a', 'b'], value: 'x', n: 2 },
      { path: ['a', 'c'], value: 2, n: 1 },
      { path: ['a', 'b', 'c'], value: 'x', n: 1 },
      { path: ['a', '0'], value: 'x', n: 0 },
      { path: ['a', '0'], value: 'zero', n: 1 },
      { path: ['b', '0'], value: 'zero', n: 0 },
      { path: ['list', '0'], value: 'red', n: 0 },
      { path: ['match_any::tag_set'], value: 'shoes', n: 1 },
      { path: ['weird-key:@#/+'], value: 'ok', n: 1 },
      { path: ['ü'], value: 'umlaut', n: 1 },
      { path: ['missing'], value: null, n: 0 },
      { path: ['color'], value: 'Red', n: 0 },
    ];
    for (const c of cases) {
      const f: UserEventFilter = { metadata: { path: c.path, value: c.value } };
      const expected = newestFirst(events.filter((e) => matches(e, f)));
      expect(expected, `oracle of ${JSON.stringify(c)}`).toHaveLength(c.n);
      expect(await all(DATASET, f), JSON.stringify(c)).toEqual(expected);
    }
    // With the other filters.
    const f: UserEventFilter = { metadata: { path: ['size'], value: 5 }, createdAfter: 1001 };
    expect(await all(DATASET, f)).toEqual(newestFirst(events.filter((e) => matches(e, f))));
  });

  it('refuses an object or array as the metadata value (jsonb and SQLite JSON text would disagree on key order)', async () => {
    for (const value of [{ a: 1 }, [1]]) {
      await expect(all(DATASET, { metadata: { path: ['a'], value } })).rejects.toSatisfy((e: unknown) => e instanceof QuarryError && e.httpStatus === 400);
    }
  });
});

describe('sqlite store with its writes in a thread: user events', () => {
  const dirs: string[] = [];
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it("runs insertMany on the writer thread, with the plain store's answers", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-user-events-threaded-'));
    dirs.push(dir);
    const db: Db = openDatabase(dir);
    store = await withWriteThread(sqliteStoreOn(db, { readCacheBytes: 1 << 20 }), dir);
    const changes = (): number => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const before = changes();
    const a = event();
    const b = bare({ createdAt: 1_700_000_000_001 });
    expect(await store.userEvents.insertMany([a, b, a])).toBe(2);
    expect(await store.userEvents.insertMany([a])).toBe(0);
    expect(await store.userEvents.get(DATASET, a.id)).toEqual(a);
    expect(await listUserEvents(store.reports, DATASET, { metadata: { path: ['page'], value: 'home' } }, { limit: 10, offset: 0 })).toEqual([a]);
    expect(await listUserEvents(store.reports, DATASET, {}, { limit: 10, offset: 0 })).toEqual([b, a]);
    // Not one row changed through the caller's own connection.
    expect(changes() - before).toBe(0);
    const plain = openSqliteStore(dir);
    try {
      expect(await plain.userEvents.get(DATASET, b.id)).toEqual(b);
    } finally {
      await plain.close();
    }
  });
});
