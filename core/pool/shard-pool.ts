/**
 * Shard threads. Piscina sends a task to any idle thread, but a shard's state must live in one
 * thread, so each thread is its own single-thread pool and shard `i` of a dataset is pinned to
 * thread `i % threads`. Tasks and replies are plain data.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { QuarryError } from '../domain/errors.js';
import type { ShardTask } from '../../workers/shard/protocol.js';

/** Path of the shard worker entry, as source (.ts under tsx) or compiled (.js). */
function entryFile(): string {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  return path.resolve(path.dirname(here), '..', '..', 'workers', 'shard', `entry${ext}`);
}

/** The pinned shard threads. */
export class ShardPool {
  private readonly pools: Piscina[];

  constructor(readonly threads: number) {
    const filename = entryFile();
    this.pools = Array.from(
      { length: threads },
      () =>
        new Piscina({
          filename,
          minThreads: 1,
          maxThreads: 1,
          // A thread must never be retired while idle: it holds shards.
          idleTimeout: Number.POSITIVE_INFINITY,
          concurrentTasksPerWorker: 1,
          // The core bounds admission itself; the queue here only absorbs bursts.
          maxQueue: Number.POSITIVE_INFINITY,
        }),
    );
  }

  /** Runs a task on the thread that owns `task.shard`; `signal` aborts it before it starts. */
  async run<T>(task: ShardTask, signal?: AbortSignal): Promise<T> {
    const pool = this.pools[task.shard % this.threads]!;
    try {
      return (await pool.run(task, signal ? { signal } : {})) as T;
    } catch (err) {
      if ((err as Error).name === 'AbortError') {
        throw new QuarryError('timeout', 'the search deadline passed before a shard could run the query', { cause: err });
      }
      throw err;
    }
  }

  /** Stops every thread (after their current task). */
  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
