/**
 * A FIFO in front of a piscina pool that hands it at most as many tasks as it has threads, so
 * every task piscina holds is running. Piscina terminates the thread of a running task whose
 * signal fires, so no signal is ever given to it: a caller's signal can only drop a task that
 * still waits here, before it starts.
 */

/** A task that waits for a free slot. */
interface Waiter {
  readonly start: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/** Runs tasks in arrival order, at most `slots` at once; a waiting task can be dropped by its signal. */
export class SlotQueue {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly slots: number,
    /** The rejection of a task dropped because its signal fired while it waited. */
    private readonly abortedError: (signal: AbortSignal) => Error,
  ) {}

  /**
   * Calls `start` once a slot is free and settles as its promise does. If `signal` fires first,
   * `start` is never called and the promise rejects with the aborted error. Once started, the
   * task always runs to its end: the signal no longer touches it.
   */
  run<T>(start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(this.abortedError(signal));
    if (this.running < this.slots && this.waiting.length === 0) return this.begin(start);
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        start,
        resolve: resolve as (value: unknown) => void,
        reject,
        signal,
        onAbort: () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(this.abortedError(signal!));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Rejects every task that has not started yet with `err` (the pool is going away). */
  clear(err: Error): void {
    for (const w of this.waiting.splice(0)) {
      w.signal?.removeEventListener('abort', w.onAbort);
      w.reject(err);
    }
  }

  private begin<T>(start: () => Promise<T>): Promise<T> {
    this.running++;
    let task: Promise<T>;
    try {
      task = start();
    } catch (err) {
      task = Promise.reject(err);
    }
    // The slot is freed however the task ends, then the next waiter starts.
    return task.finally(() => {
      this.running--;
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.slots && this.waiting.length > 0) {
      const w = this.waiting.shift()!;
      w.signal?.removeEventListener('abort', w.onAbort);
      this.begin(w.start).then(w.resolve, w.reject);
    }
  }
}
