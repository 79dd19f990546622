/**
 * A store whose writes run in a thread of their own. better-sqlite3 is synchronous: a 100-chunk
 * write held an HTTP process's event loop ~8 ms (its transaction, indexes and fsync), and every
 * other tenant's request waited behind it. Here reads stay on the caller's connection (WAL: they
 * never wait for a writer and see every write that has answered), while each write method posts
 * its arguments to the writer thread, which runs the writes one at a time in the order sent on
 * its own connection, at a lower scheduling priority.
 *
 * Results and arguments cross by structured clone, so they are plain data (records, arrays,
 * typed arrays); errors are rebuilt (a QuarryError keeps its code). A writer thread that dies
 * fails its pending writes with 503 and is started again.
 */
import { Worker } from 'node:worker_threads';
import { QuarryError } from '../../core/domain/errors.js';
import { threadEntry } from '../../core/domain/thread-entry.js';
import type { Store } from '../repository.js';
import type { SqliteStore } from './sqlite-store.js';
import { decodeError, type RepositoryName, type WriteCall, type WriteReply } from './write-protocol.js';

/** Method names of a repository. */
type MethodOf<R> = { [K in keyof R]: R[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof R] & string;

/**
 * The methods that write, per repository; every other method only reads. A write left out of
 * this table would still work, on the caller's thread (test/unit/threaded-store.test.ts checks
 * that the caller's connection changes no row).
 */
export const WRITE_METHODS: { readonly [R in RepositoryName]: readonly MethodOf<Store[R]>[] } = {
  organizations: ['create', 'update', 'purge'],
  users: ['createApiOnly', 'updateMembership'],
  apiKeys: ['create', 'delete'],
  datasets: ['create', 'update', 'markDeleted', 'purge', 'clear'],
  chunks: ['createMany', 'update', 'delete', 'deleteMany'],
  groups: ['createMany', 'update', 'delete', 'addChunk', 'removeChunk'],
  changeLog: [],
  vectors: ['put'],
  sparseVectors: ['put'],
  events: ['add'],
  analytics: ['insertSearches', 'insertRecommendations', 'insertRags', 'purgeBefore', 'rate'],
  topics: ['create', 'update', 'delete', 'clone'],
  messages: ['append'],
  files: ['create', 'transition', 'commitProgress', 'commitBatch', 'delete'],
  userEvents: ['insertMany'],
  experiments: ['create', 'update', 'delete', 'assign'],
  reports: [],
};

/** Pause before a dead writer thread is replaced, in ms. */
const RESTART_DELAY_MS = 100;
/** Longest a close waits for writes in flight, and then for the thread to end, in ms. */
const CLOSE_WAIT_MS = 10_000;

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

/** Options of {@link withWriteThread}. */
export interface WriteThreadOptions {
  /** Scheduling priority of the writer thread (Linux nice; 0 keeps the process's own). */
  readonly nice?: number;
}

/**
 * `reads` (a store over `dataDir`) with every write method of {@link WRITE_METHODS} run by a
 * writer thread over the same file. Resolves once the thread has opened the database.
 */
export async function withWriteThread(reads: SqliteStore, dataDir: string, options: WriteThreadOptions = {}): Promise<Store> {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closing = false;
  /** The writer thread; null between its death and its replacement. */
  let worker: Worker | null = null;

  const start = (): Promise<void> =>
    new Promise<void>((ready, failed) => {
      const w = new Worker(threadEntry(import.meta.url, './write-thread'), { workerData: { dataDir, nice: options.nice ?? 0 } });
      worker = w;
      w.on('message', (m: WriteReply | { ready: true }) => {
        if ('ready' in m) return ready();
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        // Before anyone learns of the write: reads pinned earlier in this turn would miss it.
        reads.unpinReads();
        if ('error' in m) p.reject(decodeError(m.error));
        else p.resolve(m.value);
      });
      w.on('error', failed);
      w.on('exit', (code) => {
        if (worker !== w) return;
        worker = null;
        const lost = [...pending.values()];
        pending.clear();
        // Whether such a write committed is unknown: say so rather than guess.
        for (const p of lost) p.reject(new QuarryError('unavailable', `the store writer stopped (exit code ${code}) before it answered; the write may or may not have been applied, retry shortly`, { retryAfterSeconds: 1 }));
        if (!closing) setTimeout(() => void start().catch(() => undefined), RESTART_DELAY_MS).unref();
      });
    });
  await start();

  const call = (repository: RepositoryName, method: string, args: unknown[]): Promise<unknown> => {
    if (closing) return Promise.reject(new QuarryError('unavailable', 'the store is closing', { retryAfterSeconds: 1 }));
    const w = worker;
    if (!w) return Promise.reject(new QuarryError('unavailable', 'the store writer is restarting; retry shortly', { retryAfterSeconds: 1 }));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      w.postMessage({ id, repository, method, args } satisfies WriteCall);
    });
  };

  const wrapped: Record<string, unknown> = {};
  for (const name of Object.keys(WRITE_METHODS) as RepositoryName[]) {
    const repo = reads[name] as unknown as Record<string, unknown>;
    const proxy: Record<string, unknown> = {};
    for (const key of Object.keys(repo)) proxy[key] = repo[key];
    for (const method of WRITE_METHODS[name]) proxy[method] = (...args: unknown[]) => call(name, method, args);
    wrapped[name] = proxy;
  }
  return {
    ...(wrapped as unknown as Omit<Store, 'ping' | 'pinReads' | 'close' | 'indexReads'>),
    indexReads: reads.indexReads,
    ping: () => reads.ping(),
    pinReads: () => reads.pinReads(),
    async close() {
      if (!closing) {
        closing = true;
        // Writes already sent are answered first (bounded: a wedged thread is terminated).
        const deadline = Date.now() + CLOSE_WAIT_MS;
        while (pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        const w = worker;
        if (w) {
          const exited = new Promise((r) => w.once('exit', r));
          if (pending.size === 0) w.postMessage({ close: true });
          else await w.terminate();
          await Promise.race([exited, new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
        }
      }
      await reads.close();
    },
  };
}
