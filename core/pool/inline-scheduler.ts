/**
 * Shares the core's event loop between the inline shards of different datasets. An inline task
 * runs synchronously, so without this every task whose request reached the shard in the same turn
 * ran back to back: eighteen 25 ms searches of one tenant, in flight together, made another
 * tenant's 0.2 ms search wait 130 ms. Here a turn of the event loop runs inline tasks at once
 * while they stay within a small budget (cheap searches, the common case, pay nothing); past it,
 * tasks wait in one queue per dataset, served round-robin, at least one per turn, with the
 * socket reads and every other callback of the turn in between. A tenant then waits for at most
 * one task of each other tenant, and a dataset whose tasks are long is moved to the shard threads
 * (see ShardPool.onSlowInlineQuery).
 */
import { performance } from 'node:perf_hooks';

/** A task waiting for its turn. */
interface Queued {
  run(): void;
}

/** Round-robin, budgeted turns of the event loop for inline shard tasks. */
export class InlineScheduler {
  /** Inline work done in this turn of the event loop, in ms. */
  private spent = 0;
  private resetScheduled = false;
  private drainScheduled = false;
  /** Tasks waiting, per dataset; the Map's order is the round-robin order. */
  private readonly queues = new Map<string, Queued[]>();

  constructor(
    /** Inline work one turn of the event loop may do before tasks wait for the next, in ms. */
    private readonly budgetMs: number,
  ) {}

  /** Tasks waiting for a turn. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /**
   * Runs `task` (of dataset `datasetId`) now when nothing waits and this turn's budget is not
   * spent, else in a later turn in round-robin order between datasets. A throw of `task` rejects.
   */
  run<T>(datasetId: string, task: () => T): T | Promise<T> {
    if (this.queues.size === 0 && this.spent < this.budgetMs) return this.timed(task);
    return new Promise<T>((resolve, reject) => {
      const queued: Queued = {
        run: () => {
          try {
            resolve(this.timed(task));
          } catch (err) {
            reject(err);
          }
        },
      };
      const q = this.queues.get(datasetId);
      if (q) q.push(queued);
      else this.queues.set(datasetId, [queued]);
      this.scheduleDrain();
    });
  }

  /** Runs `task`, counting its time against this turn's budget. */
  private timed<T>(task: () => T): T {
    const started = performance.now();
    try {
      return task();
    } finally {
      this.spent += performance.now() - started;
      if (!this.resetScheduled) {
        this.resetScheduled = true;
        // Immediates run after this turn's I/O callbacks: the next turn starts with a fresh budget.
        setImmediate(() => {
          this.resetScheduled = false;
          this.spent = 0;
        });
      }
    }
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => this.drain());
  }

  /** One turn's share of the waiting tasks: the next dataset's first task, then more while the budget lasts. */
  private drain(): void {
    this.drainScheduled = false;
    let first = true;
    while (this.queues.size > 0 && (first || this.spent < this.budgetMs)) {
      first = false;
      const [datasetId, q] = this.queues.entries().next().value as [string, Queued[]];
      const queued = q.shift()!;
      // The dataset goes to the back of the round, or leaves it when it has nothing more.
      this.queues.delete(datasetId);
      if (q.length > 0) this.queues.set(datasetId, q);
      queued.run();
    }
    if (this.queues.size > 0) this.scheduleDrain();
  }
}
