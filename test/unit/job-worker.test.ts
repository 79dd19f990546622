/**
 * Every BullMQ worker of the job process gets the shared connection handling: built only through
 * jobWorker(), whose options always carry the 1 s retry after a Redis error. (A behavioural test,
 * Redis stopped and restarted under each worker, would wait out BullMQ's 15 s default per worker.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RUN_RETRY_DELAY_MS, workerOptions } from '../../workers/jobs/job-worker.js';

const JOBS_DIR = path.resolve(import.meta.dirname, '../../workers/jobs');

describe('job workers', () => {
  it('are all built by jobWorker(), never by a bare new Worker()', () => {
    const offenders = fs
      .readdirSync(JOBS_DIR)
      .filter((f) => f.endsWith('.ts') && f !== 'job-worker.ts')
      .filter((f) => /\bnew Worker\s*[<(]/.test(fs.readFileSync(path.join(JOBS_DIR, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('always retry 1 s after a Redis error, whatever a worker chooses for itself', () => {
    const connection = new Redis({ lazyConnect: true });
    try {
      expect(RUN_RETRY_DELAY_MS).toBe(1_000);
      expect(workerOptions(connection)).toMatchObject({ connection, concurrency: 1, runRetryDelay: RUN_RETRY_DELAY_MS });
      const own = workerOptions(connection, { concurrency: 3, lockDuration: 15_000, autorun: false });
      expect(own).toMatchObject({ connection, concurrency: 3, lockDuration: 15_000, autorun: false, runRetryDelay: RUN_RETRY_DELAY_MS });
      // Even an untyped caller cannot take the shared handling away.
      expect(workerOptions(connection, { runRetryDelay: 15_000 } as never).runRetryDelay).toBe(RUN_RETRY_DELAY_MS);
    } finally {
      connection.disconnect();
    }
  });
});
