/**
 * Sends analytics batches to the job workers as BullMQ jobs (the recorder's `send` sink). A job
 * carries only the batch's id and size; its JSON bytes go into the job's own hash right after
 * (see {@link AnalyticsBatchRef}): Redis gets them as a Buffer, so they never become a string in
 * this process's heap.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ANALYTICS_ATTEMPTS, ANALYTICS_FLUSH_JOB, ANALYTICS_PAYLOAD_FIELD, ANALYTICS_QUEUE, type AnalyticsBatchRef } from '../../core/domain/analytics.js';
import type { EncodedBatch } from './recorder.js';

/**
 * Sets the payload field only while the job's hash exists: a send repeated after a lost reply
 * may reach Redis after its job was stored and removed, and must not leave a hash behind.
 */
const SET_PAYLOAD = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 0";

/** The connection with the command above. */
type PayloadRedis = Redis & { quarrySetPayload(key: string, field: string, value: Buffer): Promise<number> };

/** Writes a batch's JSON into its job's hash `jobKey` if that job exists; resolves to whether it did. */
export function payloadWriter(redis: Redis): (jobKey: string, json: Buffer) => Promise<boolean> {
  const r = redis as PayloadRedis;
  if (typeof r.quarrySetPayload !== 'function') r.defineCommand('quarrySetPayload', { numberOfKeys: 1, lua: SET_PAYLOAD });
  return async (jobKey, json) => (await r.quarrySetPayload(jobKey, ANALYTICS_PAYLOAD_FIELD, json)) > 0;
}

/** The producer side of the analytics queue. */
export interface AnalyticsQueue {
  /** Enqueues one batch as one job whose id is the batch id; rejects when Redis does not take it. */
  send(batch: EncodedBatch): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to Redis at `url` with its own connection: commands fail at once while Redis is away
 * (no offline queue) and time out after `commandTimeoutMs` when it hangs, so the recorder learns
 * of an outage instead of piling up commands, and keeps the batch itself.
 */
export function connectAnalyticsQueue(url: string, commandTimeoutMs = 5000): AnalyticsQueue {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: commandTimeoutMs });
  const writePayload = payloadWriter(redis);
  redis.on('error', () => {
    /* reported through send() failures */
  });
  const queue = new Queue<AnalyticsBatchRef>(ANALYTICS_QUEUE, { connection: redis });
  queue.on('error', () => {});
  return {
    async send(batch) {
      // The job first: the payload then lands in its hash, never in a key of its own that a
      // failed send could leave behind. A worker that takes the job before the payload is there
      // waits for it (workers/jobs/analytics.ts). Sent again after a lost reply, the add is a
      // no-op (same job id) and the payload the same bytes.
      await queue.add(ANALYTICS_FLUSH_JOB, { id: batch.id, records: batch.records, payload: 'job-hash' }, {
        jobId: batch.id,
        attempts: ANALYTICS_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: true,
        // A batch that failed every attempt stays in the failed set, where it can be retried.
        removeOnFail: false,
      });
      await writePayload(queue.toKey(batch.id), batch.json);
    },
    async close() {
      await queue.close().catch(() => {});
      redis.disconnect();
    },
  };
}
