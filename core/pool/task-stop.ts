/**
 * The core's side of stopping shard tasks: a call's AbortSignal (its deadline, or its caller
 * going away) becomes a {@link TaskStop} that the task polls inside its loops. The signal itself
 * never reaches piscina, which would terminate the thread and every shard it holds.
 */
import { getEventListeners } from 'node:events';
import { QuarryError } from '../domain/errors.js';
import type { TaskStop } from '../../workers/shard/protocol.js';

/** Absolute deadlines of the signals made by {@link deadlineSignal}. */
const deadlines = new WeakMap<AbortSignal, number>();
/** One shared flag per signal, so every shard task of one call sees the same cancellation. */
const stops = new WeakMap<AbortSignal, TaskStop>();

/** A call's stop signal and the means to release it when the call is over. */
export interface CallDeadline {
  readonly signal: AbortSignal;
  /**
   * Clears the deadline timer and the listener on the parent. Without it every call left a timer
   * and its controller alive for a whole deadline, then built an error nobody read: at 1,400
   * searches a second, 14,000 of each pending and a timer firing every 0.7 ms.
   */
  dispose(): void;
}

/**
 * Controllers of finished calls, never aborted and with no listener left, for the next calls.
 * Node 20 keeps every AbortSignal alive through the young-generation collections, with what it
 * holds: at a few thousand searches a second, new ones per call made ~14% of what each scavenge
 * promoted and 27% of what it copied (the search p99 waits for those pauses).
 */
const idle: AbortController[] = [];
/** Most controllers kept for reuse: more than the calls in flight at once only holds memory. */
const IDLE_MAX = 256;

/**
 * A signal that aborts at `at` (epoch ms) with a `timeout` error naming `what`, or as soon as
 * `parent` aborts (the caller went away) with its reason. Dispose of it when the call is over:
 * its signal must not be used after that (a later call may reuse it).
 */
export function callDeadline(at: number, what: string, parent?: AbortSignal): CallDeadline {
  const ctl = idle.pop() ?? new AbortController();
  const timer = setTimeout(
    () => ctl.abort(new QuarryError('timeout', `deadline exceeded: ${what} did not finish within its deadline`)),
    Math.max(0, at - Date.now()),
  );
  timer.unref();
  let onParent: (() => void) | undefined;
  if (parent) {
    if (parent.aborted) ctl.abort(parent.reason);
    else {
      onParent = () => ctl.abort(parent.reason);
      parent.addEventListener('abort', onParent, { once: true });
    }
  }
  deadlines.set(ctl.signal, at);
  let disposed = false;
  return {
    signal: ctl.signal,
    dispose: () => {
      if (disposed) return;
      disposed = true;
      clearTimeout(timer);
      if (onParent) parent!.removeEventListener('abort', onParent);
      // Reused only when nothing can tell: not aborted, and no listener of the call still
      // attached (a task or request still running keeps its own signal).
      if (!ctl.signal.aborted && idle.length < IDLE_MAX && getEventListeners(ctl.signal, 'abort').length === 0) idle.push(ctl);
    },
  };
}

/** The error a call stopped by `signal` fails with: its reason when that is one of ours, else a timeout. */
export function abortError(signal: AbortSignal): QuarryError {
  const reason: unknown = signal.reason;
  if (reason instanceof QuarryError) return reason;
  return new QuarryError('timeout', 'deadline exceeded: the search was stopped before it finished', { cause: reason });
}

/** Never set: a task that runs inline cannot see an abort while it runs (the event loop waits for it). */
const NEVER_CANCELLED = new Int32Array(1);

/**
 * The stop condition of a task run inline (in the calling thread, synchronously): its deadline
 * only, without the shared cancel flag a thread needs (a SharedArrayBuffer per call).
 */
export function inlineTaskStop(signal: AbortSignal): TaskStop {
  return deadlineStop(deadlines.get(signal) ?? Number.POSITIVE_INFINITY);
}

/** The stop condition of an inline task that only has a deadline (`at`, epoch ms). */
export function deadlineStop(at: number): TaskStop {
  return { deadline: at, cancelled: NEVER_CANCELLED };
}

/** The stop condition shard tasks of the call behind `signal` carry. */
export function taskStopFor(signal: AbortSignal): TaskStop {
  let stop = stops.get(signal);
  if (!stop) {
    const cancelled = new Int32Array(new SharedArrayBuffer(4));
    if (signal.aborted) Atomics.store(cancelled, 0, 1);
    else signal.addEventListener('abort', () => Atomics.store(cancelled, 0, 1), { once: true });
    stop = { deadline: deadlines.get(signal) ?? Number.POSITIVE_INFINITY, cancelled };
    stops.set(signal, stop);
  }
  return stop;
}
