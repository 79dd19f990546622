/**
 * Shard threads. Piscina sends a task to any idle thread, but a shard's state must live in one
 * thread, so each thread is its own single-thread pool and shard `i` of a dataset is pinned to
 * thread `i % threads`. Tasks and replies are plain data.
 *
 * A running task is never aborted (piscina would terminate the thread and every shard in it):
 * a caller's signal becomes a stop flag the task polls (see task-stop.ts). A thread that dies
 * anyway (a crash, out of memory) is replaced empty by piscina; listeners of
 * {@link ShardPool.onThreadLost} reload the datasets it held.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { QuarryError } from '../domain/errors.js';
import type { ShardMessage, ShardReply, ShardTask } from '../../workers/shard/protocol.js';
import { ShardNotLoadedError } from './shard-not-loaded.js';
import { abortError, taskStopFor } from './task-stop.js';

/** Path of the shard worker entry, as source (.ts under tsx or vitest) or compiled (.js). */
function entry(): { filename: string; execArgv: string[] | undefined } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const filename = path.resolve(path.dirname(here), '..', '..', 'workers', 'shard', `entry${ext}`);
  // Under vitest (TypeScript compiled in-process, no loader in execArgv) a .ts entry needs tsx.
  const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
  return { filename, execArgv: ext === '.ts' && !hasTsx ? [...process.execArgv, '--import', 'tsx'] : undefined };
}

/** The pinned shard threads. */
export class ShardPool {
  private readonly pools: Piscina[];
  /** Per thread: how many times it died (its shards were lost each time). */
  private readonly deaths: number[];
  private readonly lostListeners: ((thread: number) => void)[] = [];
  private closing = false;

  constructor(readonly threads: number) {
    const { filename, execArgv } = entry();
    this.deaths = Array.from({ length: threads }, () => 0);
    this.pools = Array.from({ length: threads }, (_, thread) => {
      const pool = new Piscina({
        filename,
        ...(execArgv ? { execArgv } : {}),
        minThreads: 1,
        maxThreads: 1,
        // A thread must never be retired while idle: it holds shards.
        idleTimeout: Number.POSITIVE_INFINITY,
        concurrentTasksPerWorker: 1,
        // The core bounds admission itself; the queue here only absorbs bursts.
        maxQueue: Number.POSITIVE_INFINITY,
      });
      // Piscina destroys a thread that crashed, ran out of memory or exited, and starts an empty one.
      pool.on('workerDestroy', () => {
        if (this.closing) return;
        this.deaths[thread]!++;
        for (const listener of this.lostListeners) listener(thread);
      });
      // Emitted for a thread that failed with no task running; workerDestroy reports the loss.
      pool.on('error', () => undefined);
      return pool;
    });
  }

  /** The thread that holds shard number `shard` of every dataset. */
  threadOf(shard: number): number {
    return shard % this.threads;
  }

  /** Threads replaced so far (each time, every shard the thread held was lost). */
  get restarts(): number {
    return this.deaths.reduce((a, b) => a + b, 0);
  }

  /** Calls `listener` with the thread's number whenever a thread dies and its shards are gone. */
  onThreadLost(listener: (thread: number) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Runs a task on the thread that owns `task.shard`. `signal` (a deadline or a caller that went
   * away) keeps a queued task from starting and makes a running one stop at its next check.
   * Throws `timeout`/`cancelled` when stopped, {@link ShardNotLoadedError} when the thread does
   * not hold the shard, `unavailable` when the thread died while running it.
   */
  async run<T>(task: ShardTask, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw abortError(signal);
    const thread = this.threadOf(task.shard);
    const pool = this.pools[thread]!;
    const message: ShardMessage = signal ? { ...task, stop: taskStopFor(signal) } : task;
    const deathsBefore = this.deaths[thread]!;
    let reply: ShardReply;
    try {
      reply = (await pool.run(message)) as ShardReply;
    } catch (err) {
      if (this.deaths[thread] !== deathsBefore) {
        throw new QuarryError('unavailable', `shard thread ${thread} stopped while running a ${task.op} task; it restarts and reloads its shards, retry shortly`, {
          cause: err,
          retryAfterSeconds: 1,
        });
      }
      throw err;
    }
    if ('fault' in reply) {
      if (reply.fault === 'not_loaded') throw new ShardNotLoadedError(task.datasetId, task.shard, reply.message);
      if (signal?.aborted) throw abortError(signal);
      // A task can pass its own deadline before the core's timer fires.
      throw reply.fault === 'stopped_deadline'
        ? new QuarryError('timeout', 'deadline exceeded: the search did not finish within its deadline')
        : new QuarryError('cancelled', 'the caller cancelled the search');
    }
    return reply.value as T;
  }

  /** Stops every thread (after their current task). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
