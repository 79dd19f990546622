/**
 * Recent garbage-collection pauses of this thread, from Node's `gc` performance entries, so that
 * a slow inline query can be told from a query that a collection happened to fall inside: the
 * wall time of a 0.2 ms search that a 10 ms mark-compact interrupted says nothing about the
 * dataset, and three of them moved a small dataset to the shard threads for good.
 */
import { PerformanceObserver } from 'node:perf_hooks';

/** A pause: its start and duration, in `performance.now()` milliseconds. */
export interface Pause {
  readonly start: number;
  readonly duration: number;
}

/** Milliseconds of `pauses` that fall inside [from, to]. */
export function pausedWithin(pauses: readonly Pause[], from: number, to: number): number {
  let ms = 0;
  for (const p of pauses) {
    const overlap = Math.min(to, p.start + p.duration) - Math.max(from, p.start);
    if (overlap > 0) ms += overlap;
  }
  return ms;
}

/** Pauses kept: a few seconds' worth at the highest collection rates seen here (~30 a second). */
const KEPT = 128;

/** The last {@link KEPT} pauses of this thread, recorded from the first call on. */
export class GcPauses {
  private readonly pauses: Pause[] = [];
  private observer: PerformanceObserver | undefined;

  /** Starts recording (idempotent). */
  start(): void {
    if (this.observer) return;
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.pauses.push({ start: e.startTime, duration: e.duration });
        if (this.pauses.length > KEPT) this.pauses.shift();
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Milliseconds of recorded pauses inside [from, to] (`performance.now()` times). */
  within(from: number, to: number): number {
    return pausedWithin(this.pauses, from, to);
  }

  /** Stops recording. */
  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
  }
}
