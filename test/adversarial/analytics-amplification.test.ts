/**
 * Analytics cannot be used to grow the store: every search stored its whole body and metadata
 * (ten 5 MB searches from a read key added 60 MB, and held as much in the HTTP process's buffer),
 * and records were kept forever. Searches go through the real processes; retention runs on a
 * real store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import { RECORD_CAPS } from '../../facade/analytics/record-caps.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { purgeExpiredAnalytics } from '../../workers/jobs/analytics.js';
import { client } from '../helpers/api.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { eventually } from '../helpers/eventually.js';

let stack: Stack;
let t: Tenant;

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
  for (const from of [0, 100]) {
    const res = await t.ds.post(
      '/api/chunk',
      Array.from({ length: 100 }, (_, i) => ({ tracking_id: `c${from + i}`, chunk_html: `aspirin fever study number ${from + i}` })),
    );
    expect(res.status, res.text).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Bytes a stored search record takes in its variable columns. */
interface StoredSize {
  id: string;
  request_params: string;
  metadata: string | null;
  bytes: number;
}

/** The stored records of these searches, with their sizes. */
function stored(ids: readonly string[]): Promise<StoredSize[]> {
  // octet_length and an IN list of placeholders (NULL when empty, matching nothing): SQL both
  // stores run (SQLite has octet_length since 3.43).
  return queryStore<StoredSize>(
    stack,
    `SELECT id, request_params, metadata,
            octet_length(request_params) + coalesce(octet_length(metadata), 0) + octet_length(results)
              + octet_length(query) + coalesce(octet_length(user_id), 0) AS bytes
       FROM search_queries WHERE id IN (${ids.map(() => '?').join(', ') || 'NULL'})`,
    ...ids,
  );
}

const until = <T>(what: string, get: () => Promise<T | undefined>, ms = 20_000): Promise<T> =>
  eventually({ what, timeoutMs: ms, context: () => stack.output().slice(-4000) }, get);

/** Most bytes one search record may add: the capped columns (results: ~80 bytes per stored result). */
const MAX_RECORD_BYTES =
  RECORD_CAPS.requestParamsBytes + RECORD_CAPS.metadataBytes + RECORD_CAPS.queryLength * 3 + RECORD_CAPS.userIdLength + RECORD_CAPS.results * 80;

describe('analytics records are capped', () => {
  it('ten searches of nearly the whole 256 KiB body limit from a read key add at most the capped bytes each, flagged as truncated', async () => {
    const readKey = await createKey(stack, t.orgId, { role: 0, dataset_ids: [t.datasetId] });
    const reader = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId });
    // Two fields of 120 KB: nearly the largest a search body may be (256 KiB), many times the record cap.
    const big = 'x'.repeat(120 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await reader.post('/api/chunk/search', {
        search_type: 'bm25',
        query: 'aspirin fever',
        page_size: 150,
        user_id: 'reader',
        metadata: { blob: big, n: i },
        extra_field_nobody_reads: big,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.chunks.length).toBe(150);
      ids.push(res.body.id as string);
    }
    const rows = await until('10 records', async () => {
      const r = await stored(ids);
      return r.length === 10 ? r : undefined;
    });
    for (const row of rows) {
      expect(row.bytes).toBeLessThanOrEqual(MAX_RECORD_BYTES);
      const params = JSON.parse(row.request_params);
      expect(params).toMatchObject({ request_truncated: true, metadata_truncated: true, results_truncated: true, search_type: 'bm25', query: 'aspirin fever' });
      expect(params.truncated_fields).toEqual(expect.arrayContaining(['metadata', 'extra_field_nobody_reads']));
      expect(row.metadata).toBeNull();
    }
    const total = rows.reduce((n, r) => n + r.bytes, 0);
    expect(total).toBeLessThan(10 * MAX_RECORD_BYTES);
  });

  it('small records are stored whole, unflagged', async () => {
    const body = { search_type: 'bm25', query: 'aspirin', page_size: 3, metadata: { client: 'ui' } };
    const res = await t.ds.post('/api/chunk/search', body);
    expect(res.status, res.text).toBe(200);
    const [row] = await until('the record', async () => {
      const r = await stored([res.body.id]);
      return r.length === 1 ? r : undefined;
    });
    expect(JSON.parse(row!.request_params)).toEqual(body);
    expect(JSON.parse(row!.metadata!)).toEqual({ client: 'ui' });
  });

  it('deeply nested metadata is not stored and does not hold up the records behind it', async () => {
    const deep = '{"d":'.repeat(100) + '"bottom"' + '}'.repeat(100);
    const poisoned = await t.ds.req('POST', '/api/chunk/search', { raw: `{"search_type":"bm25","query":"fever","metadata":${deep}}` });
    expect(poisoned.status, poisoned.text).toBe(200);
    const after = await t.ds.post('/api/chunk/search', { search_type: 'bm25', query: 'aspirin', user_id: 'next' });
    expect(after.status, after.text).toBe(200);
    const rows = await until('both records', async () => {
      const r = await stored([poisoned.body.id, after.body.id]);
      return r.length === 2 ? r : undefined;
    });
    const deepRow = rows.find((r) => r.id === poisoned.body.id)!;
    expect(deepRow.metadata).toBeNull();
    expect(JSON.parse(deepRow.request_params)).toMatchObject({ request_truncated: true, metadata_truncated: true });
  });
});

describe('analytics retention', () => {
  const DAY = 24 * 60 * 60_000;
  const logger = pino({ level: 'silent' });

  function record(id: string, createdAt: number): SearchRecord {
    return {
      id,
      datasetId: '00000000-0000-4000-8000-000000000001',
      kind: 'search',
      searchMethod: 'bm25',
      query: 'q',
      requestParams: { query: 'q' },
      latencyMs: 1,
      topScore: 0,
      results: [],
      resultCount: 0,
      userId: null,
      metadata: null,
      createdAt,
    };
  }

  it('deletes records past the retention and keeps newer ones (searches and recommendations)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-retention-'));
    const store = openSqliteStore(dir);
    try {
      const now = Date.now();
      const old = Array.from({ length: 7 }, (_, i) => record(`old-${i}`, now - 91 * DAY - i));
      await store.analytics.insertSearches([...old, record('new', now - 89 * DAY), record('today', now)]);
      await store.analytics.insertRecommendations([
        { ...record('rec-old', now - 100 * DAY), recommendationType: 'Chunk', positiveIds: [], negativeIds: [], positiveTrackingIds: [], negativeTrackingIds: [] },
        { ...record('rec-new', now), recommendationType: 'Chunk', positiveIds: [], negativeIds: [], positiveTrackingIds: [], negativeTrackingIds: [] },
      ]);

      expect(await purgeExpiredAnalytics(store, 0, logger, now)).toBe(0);
      expect(await purgeExpiredAnalytics(store, 90, logger, now)).toBe(8);

      const left = (await store.analytics.listSearches(record('x', 0).datasetId, { limit: 100, offset: 0 })).map((r) => r.id).sort();
      expect(left).toEqual(['new', 'today']);
      // Small batches loop until nothing old is left.
      await store.analytics.insertSearches(old);
      expect(await store.analytics.purgeBefore(now - 90 * DAY, 2)).toBe(7);
      expect(await purgeExpiredAnalytics(store, 90, logger, now)).toBe(0);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
