/** Sends analytics batches to the job workers as BullMQ jobs (the recorder's `send` sink). */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ANALYTICS_ATTEMPTS, ANALYTICS_FLUSH_JOB, ANALYTICS_QUEUE, type AnalyticsBatch } from '../../core/domain/analytics.js';

/** The producer side of the analytics queue. */
export interface AnalyticsQueue {
  /** Enqueues one batch as one job whose id is the batch id; rejects when Redis does not take it. */
  send(batch: AnalyticsBatch): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to Redis at `url` with its own connection: commands fail at once while Redis is away
 * (no offline queue) and time out after `commandTimeoutMs` when it hangs, so the recorder learns
 * of an outage instead of piling up commands, and keeps the batch itself.
 */
export function connectAnalyticsQueue(url: string, commandTimeoutMs = 5000): AnalyticsQueue {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: commandTimeoutMs });
  redis.on('error', () => {
    /* reported through send() failures */
  });
  const queue = new Queue<AnalyticsBatch>(ANALYTICS_QUEUE, { connection: redis });
  queue.on('error', () => {});
  return {
    async send(batch) {
      await queue.add(ANALYTICS_FLUSH_JOB, batch, {
        jobId: batch.id,
        attempts: ANALYTICS_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: true,
        // A batch that failed every attempt stays in the failed set, where it can be retried.
        removeOnFail: false,
      });
    },
    async close() {
      await queue.close().catch(() => {});
      redis.disconnect();
    },
  };
}
