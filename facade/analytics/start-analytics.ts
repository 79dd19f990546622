/** Wires the facade's analytics recorder: batches go to the analytics queue, the store is the last resort. */
import type { Logger } from 'pino';
import type { AnalyticsRepository } from '../../store/repository.js';
import { connectAnalyticsQueue } from './analytics-queue.js';
import { AnalyticsRecorder, type RecorderOptions } from './recorder.js';

/** A started recorder and how to stop it. */
export interface RunningAnalytics {
  readonly recorder: AnalyticsRecorder;
  /** Flushes the recorder (to Redis, else to the store), then closes the Redis connection. */
  close(): Promise<void>;
}

/** Connects to Redis at `redisUrl` and starts a recorder that flushes into it. */
export function startAnalytics(
  redisUrl: string,
  repository: AnalyticsRepository,
  logger: Logger,
  options: Partial<RecorderOptions> = {},
): RunningAnalytics {
  const queue = connectAnalyticsQueue(redisUrl, options.sendTimeoutMs);
  const recorder = new AnalyticsRecorder(
    {
      send: (batch) => queue.send(batch),
      // The same idempotent inserts the job worker runs, so a batch both sent and written stays single.
      store: async (batch) => {
        await repository.insertSearches(batch.searches);
        await repository.insertRecommendations(batch.recommendations);
        await repository.insertRags(batch.rags ?? []);
      },
    },
    logger,
    options,
  );
  recorder.start();
  return {
    recorder,
    async close() {
      await recorder.close();
      await queue.close();
    },
  };
}
