/**
 * The group commit of user events (facade/analytics/event-writer.ts) over a real SQLite store:
 * a write resolves only once committed (another connection reads it); while a write is in flight
 * new requests wait and then go together, one store call per table; a batch the store refuses is
 * written again request by request, so only the request at fault fails and the others are stored.
 * The store is wrapped only to count its calls and to hold one write open; every call reaches it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import { newId } from '../../core/domain/ids.js';
import type { QueryRating, UserEvent } from '../../core/domain/user-events.js';
import { eventWriter, type EventStore, type EventWrites } from '../../facade/analytics/event-writer.js';
import type { Store } from '../../store/repository.js';
import { listUserEvents } from '../../store/reports/user-event-listing.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { userEvent } from '../helpers/user-event.js';

const DATASET = '11111111-1111-4111-8111-111111111111';

const event = (seq: number, over: Partial<UserEvent> = {}): UserEvent =>
  userEvent({ id: newId(), datasetId: DATASET, eventType: 'view', eventName: `view ${seq}`, items: ['a'], metadata: { seq }, createdAt: 1_700_000_000_000 + seq, ...over });

const search = (seq: number): SearchRecord => ({
  id: newId(),
  datasetId: DATASET,
  kind: 'search',
  searchMethod: '',
  query: `query ${seq}`,
  requestParams: {},
  latencyMs: 0,
  topScore: 0,
  results: [],
  resultCount: 0,
  userId: null,
  metadata: { seq },
  createdAt: 1_700_000_000_000 + seq,
});

const rating = (queryId: string, value: number): QueryRating => ({ kind: 'search', datasetId: DATASET, queryId, rating: value, note: null, metadata: null, createdAt: 1 });

/** One store call as the wrapper saw it: which write, and how many records it carried. */
interface Call {
  readonly method: string;
  readonly size: number;
}

/**
 * The real store's writes, counted; while `hold` is set, the next write waits for it before
 * going to the store (so a test can keep a write in flight as long as it needs).
 */
function counted(store: Store) {
  const calls: Call[] = [];
  let hold: Promise<void> | null = null;
  const through = async <T>(method: string, size: number, run: () => Promise<T>): Promise<T> => {
    calls.push({ method, size });
    const gate = hold;
    hold = null;
    if (gate) await gate;
    return run();
  };
  const wrapped: EventStore = {
    userEvents: { ...store.userEvents, insertMany: (e) => through('userEvents', e.length, () => store.userEvents.insertMany(e)) },
    analytics: {
      ...store.analytics,
      insertSearches: (r) => through('searches', r.length, () => store.analytics.insertSearches(r)),
      insertRags: (r) => through('rags', r.length, () => store.analytics.insertRags(r)),
      insertRecommendations: (r) => through('recommendations', r.length, () => store.analytics.insertRecommendations(r)),
      rate: (r) => through('ratings', r.length, () => store.analytics.rate(r)),
    },
  };
  /** Holds the next store call until the returned function is called. */
  const holdNext = (): (() => void) => {
    let release!: () => void;
    hold = new Promise<void>((resolve) => (release = resolve));
    return release;
  };
  return { wrapped, calls, holdNext };
}

/** Whether a promise has settled, after letting every pending callback run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('event writer (group commit)', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-event-writer-'));
    store = openSqliteStore(dir);
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The events of DATASET as another connection reads them, by seq. */
  async function storedSeqs(): Promise<number[]> {
    const other = openSqliteStore(dir);
    try {
      const events = await listUserEvents(other.reports, DATASET, {}, { limit: 100_000, offset: 0 });
      return events.map((e) => (e.metadata as { seq: number }).seq).sort((a, b) => a - b);
    } finally {
      await other.close();
    }
  }

  it('resolves a write only once it is committed', async () => {
    const writer = eventWriter(store);
    const e = event(1);
    await writer.write({ userEvents: [e] });
    const other = openSqliteStore(dir);
    try {
      expect(await other.userEvents.get(DATASET, e.id)).toEqual(e);
    } finally {
      await other.close();
    }
  });

  it('gathers the requests that arrive while a write is in flight into one call per table', async () => {
    const { wrapped, calls, holdNext } = counted(store);
    const writer = eventWriter(wrapped);
    const release = holdNext();
    const first = writer.write({ userEvents: [event(0)] });
    expect(calls).toEqual([{ method: 'userEvents', size: 1 }]);

    // Requests arriving over several turns of the event loop while the first write is held.
    const waiting: Promise<void>[] = [];
    const searches: SearchRecord[] = [];
    for (let i = 1; i <= 12; i++) {
      const s = search(i);
      searches.push(s);
      const writes: EventWrites = i % 3 === 0 ? { searches: [s], ratings: [rating(s.id, i)] } : { userEvents: [event(i)] };
      waiting.push(writer.write(writes));
      if (i % 4 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(await settled(first)).toBe(false);
    expect(await settled(Promise.race(waiting))).toBe(false);
    expect(calls, 'nothing else reaches the store while a write is in flight').toHaveLength(1);

    release();
    await first;
    await Promise.all(waiting);
    // The 12 waiting requests: 8 user events, 4 searches each with a rating, in one call per table.
    expect(calls.slice(1).sort((a, b) => a.method.localeCompare(b.method))).toEqual([
      { method: 'ratings', size: 4 },
      { method: 'searches', size: 4 },
      { method: 'userEvents', size: 8 },
    ]);
    expect(await storedSeqs()).toEqual([0, 1, 2, 4, 5, 7, 8, 10, 11]);
    for (const s of searches.filter((_, i) => (i + 1) % 3 === 0)) expect(await store.analytics.getSearch(DATASET, s.id)).toEqual(s);
    const ratings = await store.reports.all<{ query_id: string; rating: number }>('SELECT query_id, rating FROM query_ratings ORDER BY rating', []);
    expect(ratings.map((r) => Number(r.rating))).toEqual([3, 6, 9, 12]);
  });

  it('fails only the request at fault when the store refuses a batch, and stores the others', async () => {
    const { wrapped, calls, holdNext } = counted(store);
    const writer = eventWriter(wrapped);
    const release = holdNext();
    const first = writer.write({ userEvents: [event(0)] });

    const good = [1, 2, 3, 4].map((i) => writer.write({ userEvents: [event(i)] }));
    // Metadata JSON cannot encode: the store's insert throws, and its transaction rolls back.
    const badEvent = writer.write({ userEvents: [event(5, { metadata: { seq: 5, n: 10n } })] });
    const s = search(6);
    // A rating SQLite cannot store (NaN binds as NULL into a NOT NULL column): a constraint error.
    const badRating = writer.write({ searches: [s], ratings: [rating(s.id, Number.NaN)] });
    const more = [7, 8].map((i) => writer.write({ userEvents: [event(i)] }));
    const badResult = expect(badEvent).rejects.toThrow(/BigInt/);
    const badRatingResult = expect(badRating).rejects.toThrow(/NOT NULL/);

    release();
    await first;
    await Promise.all([...good, ...more]);
    await badResult;
    await badRatingResult;
    // The merged batch failed as a whole (its transaction rolled back), then each request went alone.
    expect(await storedSeqs()).toEqual([0, 1, 2, 3, 4, 7, 8]);
    // The bad rating's request wrote its search (its own insert succeeded) but is answered with the error.
    expect(await store.analytics.getSearch(DATASET, s.id)).toEqual(s);
    expect(calls.filter((c) => c.method === 'userEvents').map((c) => c.size)).toEqual([1, 7, 1, 1, 1, 1, 1, 1, 1]);

    // The writer goes on.
    await writer.write({ userEvents: [event(9)] });
    expect(await storedSeqs()).toEqual([0, 1, 2, 3, 4, 7, 8, 9]);
  });

  it('answers a request writing alone with its own error', async () => {
    const writer = eventWriter(store);
    await expect(writer.write({ userEvents: [event(1, { metadata: { n: 1n } })] })).rejects.toThrow(/BigInt/);
    await writer.write({ userEvents: [event(2)] });
    expect(await storedSeqs()).toEqual([2]);
  });

  it('stores every event of many concurrent requests exactly once', async () => {
    const writer = eventWriter(store);
    const n = 500;
    await Promise.all(Array.from({ length: n }, (_, i) => writer.write({ userEvents: [event(i)] })));
    await writer.idle();
    expect(await storedSeqs()).toEqual(Array.from({ length: n }, (_, i) => i));
  });
});
