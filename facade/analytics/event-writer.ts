/**
 * Group commit of the events of `PUT /api/analytics/events`. An event is answered 204 only once
 * the store has committed it, so nothing acknowledged is lost when the HTTP process, the job
 * workers or Redis die (the recorder's path through Redis and a job could lose a buffered batch).
 * A commit per request would cost one transaction (and on SQLite one fsync) each: instead,
 * requests queue their events; while a write is in flight new ones wait, and when it ends all
 * that waited go in one write per table, then every one of their requests is answered. A batch
 * the store refuses is written again request by request, so only the request at fault fails.
 */
import type { RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { QueryRating, UserEvent } from '../../core/domain/user-events.js';
import type { Store } from '../../store/repository.js';

/** What one request stores, by table. */
export interface EventWrites {
  readonly userEvents?: readonly UserEvent[];
  readonly searches?: readonly SearchRecord[];
  readonly rags?: readonly RagRecord[];
  readonly recommendations?: readonly RecommendationRecord[];
  /** Ratings given with a search or RAG event (`query_rating`); written with the record. */
  readonly ratings?: readonly QueryRating[];
}

/** Writes events durably, batching concurrent requests. */
export interface EventWriter {
  /** Resolves once `writes` are committed; rejects with the store's error for this request's writes. */
  write(writes: EventWrites): Promise<void>;
  /** Resolves once nothing is queued or being written. */
  idle(): Promise<void>;
}

/** The store's writes the writer uses. */
export type EventStore = Pick<Store, 'userEvents' | 'analytics'>;

interface Waiting {
  readonly writes: EventWrites;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** All of `batch` as one write per table. */
function merged(batch: readonly Waiting[]): EventWrites {
  if (batch.length === 1) return batch[0]!.writes;
  const all = <K extends keyof EventWrites>(key: K) => batch.flatMap((w) => (w.writes[key] ?? []) as NonNullable<EventWrites[K]>[number][]);
  return {
    userEvents: all('userEvents'),
    searches: all('searches'),
    rags: all('rags'),
    recommendations: all('recommendations'),
    ratings: all('ratings'),
  };
}

/** A group-commit writer over `store` (one per facade: its queue is what batches requests). */
export function eventWriter(store: EventStore): EventWriter {
  let waiting: Waiting[] = [];
  let running: Promise<void> | null = null;

  /** One write per non-empty table, side by side; the first failure (after all have ended) is thrown. */
  const commit = async (w: EventWrites): Promise<void> => {
    const writes: Promise<unknown>[] = [];
    if (w.userEvents?.length) writes.push(store.userEvents.insertMany(w.userEvents));
    if (w.searches?.length) writes.push(store.analytics.insertSearches(w.searches));
    if (w.rags?.length) writes.push(store.analytics.insertRags(w.rags));
    if (w.recommendations?.length) writes.push(store.analytics.insertRecommendations(w.recommendations));
    if (w.ratings?.length) writes.push(store.analytics.rate(w.ratings));
    // Settled, not raced: a fallback must not start while a write of this batch is still running.
    const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };

  const drain = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        await commit(merged(batch));
        for (const w of batch) w.resolve();
      } catch (err) {
        if (batch.length === 1) {
          batch[0]!.reject(err);
          continue;
        }
        // Inserts are idempotent by id and ratings are upserts: what of the batch went in is
        // written again harmlessly, and each request learns only about its own writes.
        for (const w of batch) {
          try {
            await commit(w.writes);
            w.resolve();
          } catch (own) {
            w.reject(own);
          }
        }
      }
    }
  };

  const start = (): void => {
    running = drain().finally(() => {
      running = null;
      // A request queued between the loop's last look and this callback saw a writer running: start one for it.
      if (waiting.length > 0) start();
    });
  };

  return {
    write(writes) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ writes, resolve, reject });
        if (running === null) start();
      });
    },
    async idle() {
      while (running !== null) await running;
    },
  };
}
