/**
 * Every BullMQ worker of the job process is built here, so that each gets the same handling of
 * its Redis connection and a new worker cannot forget it: a quick return after a Redis error, and
 * a listener that logs those errors.
 */
import { Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * After a Redis connection error BullMQ waits runRetryDelay before it fetches again (15 s by
 * default): 1 s lets the workers take jobs again within about a second of Redis coming back.
 */
export const RUN_RETRY_DELAY_MS = 1_000;

/**
 * The lock options of a long job's worker (QUARRY_JOB_LOCK_MS): the lock, and a stall check every
 * half of it (at most 5 s, BullMQ's default), so a killed worker's job is found within about
 * 1.5 locks.
 */
export function lockOptions(lockMs: number): Pick<WorkerOptions, 'lockDuration' | 'stalledInterval'> {
  return { lockDuration: lockMs, stalledInterval: Math.min(5_000, Math.floor(lockMs / 2)) };
}

/** What a worker chooses for itself (concurrency, locks, autorun); the connection handling is shared. */
export type JobWorkerOptions = Omit<WorkerOptions, 'connection' | 'runRetryDelay'>;

/**
 * The options of a job worker on `connection` (which must have maxRetriesPerRequest null, as
 * BullMQ requires of blocking workers): one job at a time unless `own` says otherwise, since
 * SQLite has one writer.
 */
export function workerOptions(connection: Redis, own: JobWorkerOptions = {}): WorkerOptions {
  return { concurrency: 1, ...own, connection, runRetryDelay: RUN_RETRY_DELAY_MS };
}

/** Starts a worker of `queue` with {@link workerOptions}; its Redis errors are logged as warnings naming the queue. */
export function jobWorker<T, R>(queue: string, processor: Processor<T, R>, connection: Redis, logger: Logger, own: JobWorkerOptions = {}): Worker<T, R> {
  const worker = new Worker<T, R>(queue, processor, workerOptions(connection, own));
  // Without a listener BullMQ prints every Redis reconnection error as a raw stack trace.
  worker.on('error', (err) => logger.warn({ queue, err: err.message }, 'job worker error'));
  return worker;
}
