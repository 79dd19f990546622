/**
 * What the shard threads spent on one request, for `Server-Timing` (QUARRY_SERVER_TIMING): the
 * tasks' own run time in their threads, and the rest of their round trips (queueing, messages,
 * thread wake-ups). It travels with the async context, as the request's cancel signal does, so
 * the shard pool records into the request it serves without every layer passing it on. Only an
 * in-process core shares the request's context; over gRPC nothing is recorded.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Shard-thread time of one request, summed over its tasks. */
export interface ShardWork {
  /** Tasks run. */
  tasks: number;
  /** Milliseconds the tasks ran in their threads. */
  runMs: number;
  /** Milliseconds of the tasks' round trips beyond their run time. */
  waitMs: number;
}

const current = new AsyncLocalStorage<ShardWork>();

/** Runs `fn`, recording the shard tasks it causes into `work`. */
export function withShardWork<T>(work: ShardWork, fn: () => T): T {
  return current.run(work, fn);
}

/**
 * The record of the request being served, if it records. Read it when a task is posted: the
 * reply arrives in the thread's message event, outside the request's context.
 */
export function currentShardWork(): ShardWork | undefined {
  return current.getStore();
}

/** Adds one task's round trip and run time to `work`. */
export function recordShardTask(work: ShardWork, roundTripMs: number, runMs: number): void {
  work.tasks++;
  work.runMs += runMs;
  work.waitMs += Math.max(0, roundTripMs - runMs);
}
