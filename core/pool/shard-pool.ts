/**
 * Shard threads. A shard's state lives in one thread, so shard `i` of a dataset is pinned to
 * thread `i % threads`, and every task of it is posted to that thread at once; the thread's own
 * scheduler (workers/shard/scheduler.ts) orders them fairly between datasets and lets a long task
 * share the thread. Tasks and replies are plain data.
 *
 * A running task is never aborted (terminating the thread would lose every shard in it): a
 * caller's signal becomes a stop flag the task polls (see task-stop.ts). A thread that dies
 * anyway (a crash, out of memory) is replaced by an empty one; listeners of
 * {@link ShardPool.onThreadLost} reload the datasets it held.
 *
 * Inline shards live in the calling thread instead (one {@link ShardHost} of the pool's own): a
 * small dataset's search costs ~0.2 ms of index work, and the hop to a thread and back cost
 * ~0.3 ms more (two thread wake-ups; see README "Search latency"). Their tasks run to completion,
 * in turns fair between datasets (inline-scheduler.ts), so only datasets whose every task is short
 * belong there (the engine decides by size, and moves a dataset whose query ran long:
 * {@link ShardPool.onSlowInlineQuery}).
 */
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { QuarryError } from '../domain/errors.js';
import { currentShardWork, recordShardTask } from '../domain/shard-work.js';
import { threadEntry } from '../domain/thread-entry.js';
import { PendingSnapshot, ShardHost } from '../../workers/shard/shard-host.js';
import type { ShardMessage, ShardReply, ShardTask, ThreadReply } from '../../workers/shard/protocol.js';
import { GcPauses } from './gc-pauses.js';
import { InlineScheduler } from './inline-scheduler.js';
import { ShardNotLoadedError } from './shard-not-loaded.js';
import { abortError, deadlineStop, inlineTaskStop, taskStopFor } from './task-stop.js';
import { withFields } from '../domain/with-fields.js';

interface Pending {
  readonly resolve: (reply: ShardReply, runMs: number) => void;
  readonly reject: (err: Error) => void;
}

/** Why a task failed when its thread died under it. */
class ThreadDied extends Error {}

/** The tasks a caller's query runs (not a dataset's load, writes, snapshots or typo bootstrap). */
const QUERY_OPS: ReadonlySet<ShardTask['op']> = new Set(['search', 'searchDense', 'searchSparse', 'termStats', 'scroll', 'denseScores', 'sparseScores', 'analyze', 'typo']);

/** How long after a slow inline query its collections are looked up: Node delivers `gc` entries a turn or more late. */
const GC_ENTRY_DELAY_MS = 50;

/** After a slow inline query, how long that dataset's inline queries are timed with the process's CPU as well, in ms. */
const CPU_WATCH_MS = 10_000;

/**
 * Told of a slow inline query of `datasetId` (`ms`, see {@link ShardPool.onSlowInlineQuery});
 * `again` runs the same query once more, now, and returns its time in ms.
 */
export type SlowQueryListener = (datasetId: string, ms: number, again: () => number) => void;

/** The pinned shard threads. */
export class ShardPool {
  private readonly workers: Worker[];
  /** Per thread: the tasks posted to it and not answered yet. */
  private readonly pending: Map<number, Pending>[];
  /** Per thread: how many times it died (its shards were lost each time). */
  private readonly deaths: number[];
  private readonly slowListeners: SlowQueryListener[] = [];
  private slowInlineMs = Number.POSITIVE_INFINITY;
  /** Datasets whose inline queries are timed with the process's CPU too (a slow one was seen lately), until when (performance.now() ms). */
  private readonly cpuWatchedUntil = new Map<string, number>();
  /** Collections of this thread, discounted from slow inline queries (recorded once a listener asks). */
  private readonly gcPauses = new GcPauses();
  private readonly lostListeners: ((thread: number) => void)[] = [];
  private nextId = 0;
  private closing = false;
  /** The shards served in this thread (created with the first inline task). */
  private inlineHost: ShardHost | undefined;
  /** Turns of this thread's event loop for inline tasks, fair between datasets. */
  private readonly inlineTurns: InlineScheduler;

  /**
   * `threads` shard threads, each at scheduling priority `nice` (0: the process's own; higher
   * yields the CPU to the event loops that answer requests while the threads do bulk work).
   */
  constructor(
    readonly threads: number,
    private readonly nice = 0,
    /** Inline work one turn of this thread's event loop does before inline tasks wait their turn, in ms. */
    inlineTurnBudgetMs = 2,
  ) {
    this.inlineTurns = new InlineScheduler(inlineTurnBudgetMs);
    this.deaths = Array.from({ length: threads }, () => 0);
    this.pending = Array.from({ length: threads }, () => new Map<number, Pending>());
    this.workers = Array.from({ length: threads }, (_, thread) => this.start(thread));
  }

  private start(thread: number): Worker {
    const worker = new Worker(threadEntry(import.meta.url, '../../workers/shard/entry'), { workerData: { nice: this.nice } });
    const pending = this.pending[thread]!;
    worker.on('message', (m: ThreadReply) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if ('reply' in m) p.resolve(m.reply, m.runMs);
      else p.reject(Object.assign(new Error(m.error.message), { name: m.error.name, stack: m.error.stack }));
    });
    // A crash or out-of-memory emits 'error' and then 'exit'; the exit reports the loss.
    worker.on('error', () => undefined);
    worker.on('exit', (code) => {
      if (this.workers[thread] !== worker) return;
      const lost = [...pending.values()];
      pending.clear();
      for (const p of lost) p.reject(new ThreadDied(`shard thread ${thread} exited with code ${code}`));
      if (this.closing) return;
      this.deaths[thread]!++;
      this.workers[thread] = this.start(thread);
      for (const listener of this.lostListeners) listener(thread);
    });
    return worker;
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
   * Calls `listener` after an inline query task (search, term statistics, scroll: not a load or
   * an apply) ran longer than `ms`, garbage-collection pauses inside it and time the thread was
   * off its core not counted: it held this thread, and every other tenant's request with it.
   * Called {@link GC_ENTRY_DELAY_MS} after the task, once the pauses are known.
   */
  onSlowInlineQuery(ms: number, listener: SlowQueryListener): void {
    this.slowInlineMs = ms;
    this.slowListeners.push(listener);
    this.gcPauses.start();
  }

  /**
   * Runs a task on the thread that owns `task.shard`, or in this thread when `inline` (the
   * dataset's shards live here). `signal` (a deadline or a caller that went away) keeps a queued
   * task from starting and makes a running one stop at its next check. Throws
   * `timeout`/`cancelled` when stopped, {@link ShardNotLoadedError} when the thread does not hold
   * the shard, `unavailable` when the thread died while running it.
   */
  async run<T>(task: ShardTask, signal?: AbortSignal, inline = false): Promise<T> {
    if (signal?.aborted) throw abortError(signal);
    if (this.closing) throw new QuarryError('unavailable', 'the shard threads are shutting down', { retryAfterSeconds: 1 });
    const message: ShardMessage = signal ? { stop: inline ? inlineTaskStop(signal) : taskStopFor(signal), ...task } : task;
    const reply = inline ? await (message.op === 'snapshot' ? this.snapshotInline(message) : this.runInline(message)) : await this.post(message);
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

  /**
   * Runs a task on this thread's own shards, in its turn (see {@link InlineScheduler}); a bug's
   * throw fails the task as it would in a thread.
   */
  private runInline(message: ShardMessage): ShardReply | Promise<ShardReply> {
    const host = (this.inlineHost ??= new ShardHost());
    const work = currentShardWork();
    const queued = performance.now();
    return this.inlineTurns.run(message.datasetId, () => {
      const checked = this.slowListeners.length > 0 && QUERY_OPS.has(message.op);
      // The CPU reading is a system call (~12 us a search on a slow day here, 2% of an HTTP
      // search): taken only for a dataset that had a slow query lately.
      const watchedUntil = checked ? this.cpuWatchedUntil.get(message.datasetId) : undefined;
      if (watchedUntil !== undefined && watchedUntil <= queued) this.cpuWatchedUntil.delete(message.datasetId);
      const cpu = watchedUntil !== undefined && watchedUntil > queued ? process.cpuUsage() : null;
      const started = performance.now();
      const reply = host.run(message);
      const ended = performance.now();
      const ms = ended - started;
      if (work) recordShardTask(work, ended - queued, ms);
      if (checked && ms > this.slowInlineMs) {
        this.cpuWatchedUntil.set(message.datasetId, ended + CPU_WATCH_MS);
        const used = cpu ? process.cpuUsage(cpu) : null;
        this.checkSlow(message, started, ended, used ? (used.user + used.system) / 1000 : Infinity);
      }
      return reply;
    });
  }

  /**
   * Reports a slow inline query to the listeners unless something else made it slow: garbage
   * collection inside it, or the OS running other processes meanwhile. The CPU time of the whole
   * process over the query (`cpuMs`) bounds the query's own: a thread taken off its core by a
   * busy machine shows a long wall time and little CPU (on a loaded 2-core machine that moved
   * SciFact off its inline shard in one of two benchmark runs). The first slow query of a dataset
   * has no CPU reading (`cpuMs` Infinity: see runInline); the engine moves a dataset only after
   * several slow queries and a second run of the last one (`again`), which has its own.
   */
  private checkSlow(message: ShardMessage, started: number, ended: number, cpuMs: number): void {
    // Node delivers a collection's entry in a later turn than the collection itself.
    setTimeout(() => {
      const ms = Math.min(ended - started - this.gcPauses.within(started, ended), cpuMs);
      if (ms <= this.slowInlineMs) return;
      const again = (): number => this.timeAgain(message, ended - started);
      for (const listener of this.slowListeners) listener(message.datasetId, ms, again);
    }, GC_ENTRY_DELAY_MS).unref();
  }

  /**
   * Runs an inline query task again, now, and returns its time in ms: the wall time, bounded by
   * the process's CPU over it as in {@link checkSlow}. Query tasks only read, so running one twice
   * changes nothing. Its caller's deadline may have passed: the second run gets one of its own, as
   * long as the first run took (`firstMs`), which answers "slow again" and never holds the event
   * loop longer than the caller allowed (a query its deadline cut short would otherwise run to its end).
   */
  private timeAgain(message: ShardMessage, firstMs: number): number {
    const host = this.inlineHost;
    if (!host) return 0;
    // +1: Date.now() counts whole milliseconds.
    const task = withFields(message, { stop: deadlineStop(Date.now() + Math.ceil(firstMs) + 1) });
    const cpu = process.cpuUsage();
    const started = performance.now();
    host.run(task);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return Math.min(ms, (used.user + used.system) / 1000);
  }

  /** An inline snapshot: captured in its turn, then encoded in parts and written off the event loop (see {@link ShardHost}). */
  private async snapshotInline(message: ShardMessage): Promise<ShardReply> {
    const reply = await this.runInline(message);
    if (!('value' in reply) || !(reply.value instanceof PendingSnapshot)) return reply;
    return { value: await reply.value.commit() };
  }

  /** Posts a task to the thread that owns its shard and waits for the reply. */
  private async post(task: ShardMessage): Promise<ShardReply> {
    const thread = this.threadOf(task.shard);
    const id = this.nextId++;
    try {
      const work = currentShardWork();
      const posted = work ? performance.now() : 0;
      return await new Promise<ShardReply>((resolve, reject) => {
        const done = (r: ShardReply, runMs: number): void => {
          if (work) recordShardTask(work, performance.now() - posted, runMs);
          resolve(r);
        };
        this.pending[thread]!.set(id, { resolve: done, reject });
        this.workers[thread]!.postMessage({ id, task });
      });
    } catch (err) {
      if (err instanceof ThreadDied) {
        throw new QuarryError('unavailable', `shard thread ${thread} stopped before it answered a ${task.op} task; it restarts and reloads its shards, retry shortly`, {
          cause: err,
          retryAfterSeconds: 1,
        });
      }
      throw err;
    }
  }

  /** Stops every thread once the tasks posted to it are answered. */
  async close(): Promise<void> {
    this.closing = true;
    this.gcPauses.stop();
    const idle = (): boolean => this.pending.every((p) => p.size === 0);
    for (let waited = 0; !idle() && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
