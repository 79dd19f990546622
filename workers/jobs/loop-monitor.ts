/**
 * Watches the job process's event loop. BullMQ renews job locks from timers on this loop, so a
 * loop blocked for about half a lock duration loses the lock and the job is run twice; this makes
 * such stalls visible (a warning naming the longest delay) instead of a stream of lock errors.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from 'pino';

/** Options of {@link watchEventLoop}. */
export interface LoopMonitorOptions {
  /**
   * How often the delay histogram is reported and reset, in ms.
   * @defaultValue `5000`
   */
  intervalMs?: number;
  /**
   * A window whose longest delay exceeds this is logged as a warning, in ms (else at debug).
   * @defaultValue `500`
   */
  warnAboveMs?: number;
}

/** Starts watching; returns the function that stops it. */
export function watchEventLoop(logger: Logger, options: LoopMonitorOptions = {}): () => void {
  const intervalMs = options.intervalMs ?? 5000;
  const warnAboveMs = options.warnAboveMs ?? 500;
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const timer = setInterval(() => {
    const maxMs = Math.round(histogram.max / 1e6);
    const p99Ms = Math.round(histogram.percentile(99) / 1e6);
    histogram.reset();
    if (maxMs > warnAboveMs) logger.warn({ maxMs, p99Ms }, 'event loop blocked');
    else logger.debug({ maxMs, p99Ms }, 'event loop delay');
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    histogram.disable();
  };
}
