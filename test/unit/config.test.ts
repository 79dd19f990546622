import { lockOptions } from '../../workers/jobs/job-worker.js';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      httpHost: '127.0.0.1',
      httpPort: 8090,
      grpcHost: '127.0.0.1',
      grpcPort: 50051,
      coreAddress: '127.0.0.1:50051',
      dataDir: path.resolve('.data'),
      redisUrl: 'redis://127.0.0.1:6380',
      adminApiKey: '',
      logLevel: 'info',
      batchChunkLimit: 120,
      batchGroupLimit: 1000,
      bodyLimitBytes: 128 * 1024 * 1024,
      v2VersioningDateMs: Date.UTC(2024, 6, 14),
      shutdownGraceMs: 10_000,
      coreDeadlineMs: 5_000,
      // One machine, one process: the HTTP API hosts the core.
      coreInProcess: true,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      QUARRY_HTTP_HOST: '0.0.0.0',
      QUARRY_HTTP_PORT: '9000',
      QUARRY_GRPC_HOST: '10.0.0.1',
      QUARRY_GRPC_PORT: '6000',
      QUARRY_DATA_DIR: '/tmp/q',
      QUARRY_REDIS_URL: 'redis://r:1/2',
      ADMIN_API_KEY: 'tr-admin',
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_BATCH_CHUNK_LIMIT: '10',
      QUARRY_BATCH_GROUP_LIMIT: '20',
      QUARRY_BODY_LIMIT_BYTES: '2048',
      QUARRY_V2_VERSIONING_DATE: '2020-01-02',
      QUARRY_SHUTDOWN_GRACE_MS: '0',
      QUARRY_CORE_DEADLINE_MS: '100',
    });
    expect(c).toMatchObject({
      httpHost: '0.0.0.0',
      httpPort: 9000,
      grpcHost: '10.0.0.1',
      grpcPort: 6000,
      coreAddress: '10.0.0.1:6000',
      dataDir: '/tmp/q',
      redisUrl: 'redis://r:1/2',
      adminApiKey: 'tr-admin',
      logLevel: 'warn',
      batchChunkLimit: 10,
      batchGroupLimit: 20,
      bodyLimitBytes: 2048,
      v2VersioningDateMs: Date.UTC(2020, 0, 2),
      shutdownGraceMs: 0,
      coreDeadlineMs: 100,
    });
    expect(loadConfig({ QUARRY_CORE_ADDRESS: 'core:1' }).coreAddress).toBe('core:1');
    expect(loadConfig({ QUARRY_CORE_IN_PROCESS: 'false' }).coreInProcess).toBe(false);
    expect(loadConfig({ QUARRY_ADMIN_API_KEY: 'tr-fallback' }).adminApiKey).toBe('tr-fallback');
    expect(loadConfig({ QUARRY_DATA_DIR: 'rel' }).dataDir).toBe(path.resolve('rel'));
  });

  it('reads the heap growth of the processes that answer searches: 100% by default, 0 leaves it to V8, past 1000 refused', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(100);
    expect(loadConfig({ QUARRY_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ QUARRY_HEAP_GROWING_PERCENT: '250' }).heapGrowingPercent).toBe(250);
    expect(() => loadConfig({ QUARRY_HEAP_GROWING_PERCENT: '1001' })).toThrow(/QUARRY_HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ QUARRY_HEAP_GROWING_PERCENT: '-1' })).toThrow(/QUARRY_HEAP_GROWING_PERCENT/);
  });

  it('treats empty integer variables as unset', () => {
    expect(loadConfig({ QUARRY_HTTP_PORT: '' }).httpPort).toBe(8090);
  });

  it.each([
    ['QUARRY_HTTP_PORT', 'abc'],
    ['QUARRY_HTTP_PORT', '80.5'],
    ['QUARRY_HTTP_PORT', '-1'],
    ['QUARRY_HTTP_PORT', '70000'],
    ['QUARRY_GRPC_PORT', 'port'],
    ['QUARRY_BATCH_CHUNK_LIMIT', '0'],
    ['QUARRY_BATCH_GROUP_LIMIT', '1e9'],
    ['QUARRY_BODY_LIMIT_BYTES', '100'],
    ['QUARRY_SHUTDOWN_GRACE_MS', '-5'],
    ['QUARRY_CORE_DEADLINE_MS', '1'],
    ['QUARRY_V2_VERSIONING_DATE', 'someday'],
    ['QUARRY_V2_VERSIONING_DATE', '2024-13-01'],
    ['QUARRY_V2_VERSIONING_DATE', '2024-02-30'],
  ])('%s=%j throws naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}.*${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('reads the chunk text cap and the analytics retention', () => {
    expect(loadConfig({})).toMatchObject({ maxChunkTextBytes: 1_048_576, analyticsRetentionDays: 90 });
    expect(loadConfig({ QUARRY_MAX_CHUNK_TEXT_BYTES: '4096', QUARRY_ANALYTICS_RETENTION_DAYS: '0' })).toMatchObject({
      maxChunkTextBytes: 4096,
      analyticsRetentionDays: 0,
    });
    expect(() => loadConfig({ QUARRY_MAX_CHUNK_TEXT_BYTES: '0' })).toThrow(/QUARRY_MAX_CHUNK_TEXT_BYTES/);
    expect(() => loadConfig({ QUARRY_ANALYTICS_RETENTION_DAYS: '-1' })).toThrow(/QUARRY_ANALYTICS_RETENTION_DAYS/);
  });

  it('reads how long analytics batches wait to be stored together', () => {
    expect(loadConfig({})).toMatchObject({ analyticsGroupMs: 250 });
    expect(loadConfig({ QUARRY_ANALYTICS_GROUP_MS: '0' })).toMatchObject({ analyticsGroupMs: 0 });
    expect(() => loadConfig({ QUARRY_ANALYTICS_GROUP_MS: '-1' })).toThrow(/QUARRY_ANALYTICS_GROUP_MS/);
    expect(() => loadConfig({ QUARRY_ANALYTICS_GROUP_MS: '60001' })).toThrow(/QUARRY_ANALYTICS_GROUP_MS/);
  });

  it('reads whether analytics batches are stored from an idle thread', () => {
    expect(loadConfig({})).toMatchObject({ analyticsIdle: true });
    expect(loadConfig({ QUARRY_ANALYTICS_IDLE: 'false' })).toMatchObject({ analyticsIdle: false });
    expect(() => loadConfig({ QUARRY_ANALYTICS_IDLE: 'sometimes' })).toThrow(/QUARRY_ANALYTICS_IDLE/);
  });

  it('reads the RAG job concurrency, answer deadline and LLM request settings', () => {
    expect(loadConfig({})).toMatchObject({ ragConcurrency: 64, ragDeadlineMs: 120_000, llmTimeoutMs: 60_000, llmMaxRetries: 2 });
    expect(
      loadConfig({ QUARRY_RAG_CONCURRENCY: '8', QUARRY_RAG_DEADLINE_MS: '5000', QUARRY_LLM_TIMEOUT_MS: '2000', QUARRY_LLM_MAX_RETRIES: '0' }),
    ).toMatchObject({ ragConcurrency: 8, ragDeadlineMs: 5000, llmTimeoutMs: 2000, llmMaxRetries: 0 });
    expect(() => loadConfig({ QUARRY_RAG_CONCURRENCY: '0' })).toThrow(/QUARRY_RAG_CONCURRENCY/);
    expect(() => loadConfig({ QUARRY_RAG_DEADLINE_MS: '99' })).toThrow(/QUARRY_RAG_DEADLINE_MS/);
    expect(() => loadConfig({ QUARRY_LLM_TIMEOUT_MS: 'soon' })).toThrow(/QUARRY_LLM_TIMEOUT_MS/);
    expect(() => loadConfig({ QUARRY_LLM_MAX_RETRIES: '11' })).toThrow(/QUARRY_LLM_MAX_RETRIES/);
    expect(loadConfig({}).ragSentenceVectors).toBe(false);
    expect(loadConfig({ QUARRY_RAG_SENTENCE_VECTORS: 'true' }).ragSentenceVectors).toBe(true);
    expect(() => loadConfig({ QUARRY_RAG_SENTENCE_VECTORS: 'maybe' })).toThrow(/QUARRY_RAG_SENTENCE_VECTORS/);
  });

  it('reads the job lock, and derives the stall check from it', () => {
    expect(loadConfig({}).jobLockMs).toBe(10_000);
    expect(loadConfig({ QUARRY_JOB_LOCK_MS: '3000' }).jobLockMs).toBe(3000);
    expect(() => loadConfig({ QUARRY_JOB_LOCK_MS: '999' })).toThrow(/QUARRY_JOB_LOCK_MS/);
    expect(() => loadConfig({ QUARRY_JOB_LOCK_MS: 'long' })).toThrow(/QUARRY_JOB_LOCK_MS/);
    expect(loadConfig({}).loopMonitorMs).toBe(5000);
    expect(loadConfig({ QUARRY_LOOP_MONITOR_MS: '1000' }).loopMonitorMs).toBe(1000);
    expect(() => loadConfig({ QUARRY_LOOP_MONITOR_MS: '99' })).toThrow(/QUARRY_LOOP_MONITOR_MS/);
    expect(lockOptions(10_000)).toEqual({ lockDuration: 10_000, stalledInterval: 5_000 });
    expect(lockOptions(60_000)).toEqual({ lockDuration: 60_000, stalledInterval: 5_000 });
    expect(lockOptions(3_000)).toEqual({ lockDuration: 3_000, stalledInterval: 1_500 });
  });
});
