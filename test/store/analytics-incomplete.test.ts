/**
 * A flush job whose batch holds records without a field the store requires (a NOT NULL column):
 * both stores would skip such a row without a word, so the job worker leaves them out itself,
 * logs a warning naming each one and the field it lacks, and stores the rest of the batch.
 */
import { Writable } from 'node:stream';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticsBatch, AnalyticsJobData, SearchRecord } from '../../core/domain/analytics.js';
import { newId } from '../../core/domain/ids.js';
import { analyticsProcessor } from '../../workers/jobs/analytics.js';
import { ragRecord, searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';

/** A logger whose lines are kept, parsed. */
function capturedLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe.each(STORE_KINDS)('incomplete analytics records (%s)', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('stores the complete records of a batch and logs each one it leaves out with the field it lacks', async () => {
    const datasetId = newId();
    const now = Date.now();
    const ok = [searchRecord({ id: newId(), datasetId, createdAt: now }), searchRecord({ id: newId(), datasetId, createdAt: now + 1 })];
    const noQuery = { ...searchRecord({ id: newId(), datasetId, createdAt: now }), query: null } as unknown as SearchRecord;
    const noTime = searchRecord({ id: newId(), datasetId, createdAt: Number.NaN });
    const rag = ragRecord({ id: newId(), datasetId, createdAt: now });
    const ragNoAnswer = { ...ragRecord({ id: newId(), datasetId, createdAt: now }), llmResponse: undefined } as unknown as typeof rag;
    const batch: AnalyticsBatch = { id: newId(), searches: [ok[0]!, noQuery, noTime, ok[1]!], recommendations: [], rags: [ragNoAnswer, rag] };

    const { logger, lines } = capturedLogger();
    // The batch travels in the job's data (not in its hash): the processor reads no Redis.
    const process = analyticsProcessor(t.store, null as unknown as Redis, logger, { lingerMs: 0, maxBatches: 16, maxRecords: 4096 });
    const result = await process({ id: batch.id, data: batch } as Job<AnalyticsJobData>);

    expect(result).toEqual({ searches: 2, recommendations: 0, rags: 1, incomplete: 3 });
    const stored = await t.store.analytics.listSearches(datasetId, { limit: 100, offset: 0 });
    expect(stored.map((s) => s.id).sort()).toEqual(ok.map((s) => s.id).sort());
    expect((await t.store.analytics.getRag(datasetId, rag.id))?.id).toBe(rag.id);
    expect(await t.store.analytics.getRag(datasetId, ragNoAnswer.id)).toBeUndefined();

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, batch: batch.id, incomplete: 3 });
    expect(lines[0]!.records).toEqual([
      { list: 'searches', id: noQuery.id, missing: 'query' },
      { list: 'searches', id: noTime.id, missing: 'createdAt' },
      { list: 'rags', id: ragNoAnswer.id, missing: 'llmResponse' },
    ]);

    // A complete batch logs nothing and reports none left out.
    const whole: AnalyticsBatch = { id: newId(), searches: [searchRecord({ id: newId(), datasetId, createdAt: now })], recommendations: [] };
    expect(await process({ id: whole.id, data: whole } as Job<AnalyticsJobData>)).toEqual({ searches: 1, recommendations: 0, rags: 0, incomplete: 0 });
    expect(lines).toHaveLength(1);
  });
});
