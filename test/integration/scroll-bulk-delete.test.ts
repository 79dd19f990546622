/**
 * POST /api/chunks/scroll pages start at offset_chunk_id (inclusive) and paging with the returned
 * next_offset_chunk_id visits every (matching) chunk exactly once, in id order: an oracle over
 * the store. DELETE /api/chunk with a filter answers 204 at once, deletes in the job workers
 * exactly the chunks matching the filter that existed at the request (store and search follow),
 * and refuses bad filters with a 400 and no write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type ApiResponse, type Client } from '../helpers/api.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, filterHolds, loadChunks } from '../helpers/search-oracle.js';
import { expectRejected } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let tenant: Tenant;
let ds: Client;

/** Creates `payloads` in batches of 100. */
async function ingest(c: Client, payloads: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < payloads.length; i += 100) {
    const res = await c.post('/api/chunk', payloads.slice(i, i + 100));
    expect(res.status, res.text).toBe(200);
  }
}

/** Every id a scroll visits following next_offset_chunk_id, page by page. */
async function scrollAll(c: Client, pageSize: number, filters?: unknown): Promise<{ ids: string[]; pages: string[][] }> {
  const ids: string[] = [];
  const pages: string[][] = [];
  let offset: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const res: ApiResponse = await c.post('/api/chunks/scroll', { page_size: pageSize, filters, ...(offset ? { offset_chunk_id: offset } : {}) });
    expect(res.status, res.text).toBe(200);
    const page = res.body.chunks.map((x: any) => x.id as string);
    if (offset !== null && page.length > 0) expect(page[0], 'a page starts at its offset').toBe(offset);
    pages.push(page);
    ids.push(...page);
    offset = res.body.next_offset_chunk_id;
    if (offset === null) return { ids, pages };
    expect(page.length, 'only the last page is short').toBe(pageSize);
  }
  throw new Error('scroll did not end');
}

beforeAll(async () => {
  stack = await startStack();
  tenant = await createTenant(stack);
  ds = tenant.ds;
  await ingest(ds, randomChunks(260, 31));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('scroll', () => {
  it('visits every chunk exactly once in id order when paging with next_offset_chunk_id', async () => {
    const stored = (await loadChunks(stack, tenant.datasetId)).map((c) => c.id).sort();
    for (const pageSize of [1, 7, 100, 259, 260, 261]) {
      const { ids, pages } = await scrollAll(ds, pageSize);
      expect(ids, `page_size ${pageSize}`).toEqual(stored);
      expect(pages.length).toBe(Math.max(1, Math.ceil(stored.length / pageSize)));
    }
  });

  it('with filters, visits exactly the matching chunks once each, in id order', async () => {
    const chunks = await loadChunks(stack, tenant.datasetId);
    const r = rng(5);
    for (let i = 0; i < 12; i++) {
      const filters = randomFilter(r, chunks.map((c) => c.id));
      const expected = chunks.filter((c) => filterHolds(c, filters)).map((c) => c.id).sort();
      const { ids } = await scrollAll(ds, 1 + Math.floor(r() * 40), filters);
      expect(ids, JSON.stringify(filters)).toEqual(expected);
    }
  });

  it('starts the page at offset_chunk_id itself, or at the next matching chunk when it does not match the filter', async () => {
    const chunks = await loadChunks(stack, tenant.datasetId);
    const sorted = chunks.map((c) => c.id).sort();
    const at = sorted[100]!;
    const res = await ds.post('/api/chunks/scroll', { offset_chunk_id: at, page_size: 5 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.chunks.map((x: any) => x.id)).toEqual(sorted.slice(100, 105));
    expect(res.body.next_offset_chunk_id).toBe(sorted[105]);
    // The default page size is 10.
    expect((await ds.post('/api/chunks/scroll', { offset_chunk_id: at })).body.chunks.length).toBe(10);
    const red = { must: [{ field: 'tag_set', match_any: ['red'] }] };
    const notRed = chunks.filter((c) => !c.tags.includes('red')).map((c) => c.id).sort()[50]!;
    const matching = chunks.filter((c) => c.tags.includes('red')).map((c) => c.id).sort();
    const page = await ds.post('/api/chunks/scroll', { offset_chunk_id: notRed, page_size: 3, filters: red });
    expect(page.body.chunks.map((x: any) => x.id)).toEqual(matching.filter((id) => id >= notRed).slice(0, 3));
    // The last page says there is no next one.
    const last = await ds.post('/api/chunks/scroll', { offset_chunk_id: sorted.at(-1), page_size: 10 });
    expect(last.body.chunks.map((x: any) => x.id)).toEqual([sorted.at(-1)]);
    expect(last.body.next_offset_chunk_id).toBeNull();
  });

  it('keeps sort_by pages without a next offset, and refuses sort_by with offset_chunk_id or an unknown offset', async () => {
    const sorted = await ds.post('/api/chunks/scroll', { page_size: 5, sort_by: { field: 'num_value', direction: 'asc' } });
    expect(sorted.status, sorted.text).toBe(200);
    expect(sorted.body.chunks).toHaveLength(5);
    expect(sorted.body.next_offset_chunk_id).toBeNull();
    const any = (await loadChunks(stack, tenant.datasetId))[0]!.id;
    await expectRejected(stack, () => ds.post('/api/chunks/scroll', { offset_chunk_id: any, sort_by: { field: 'num_value' } }), 400, /sort_by and offset_chunk_id/);
    await expectRejected(stack, () => ds.post('/api/chunks/scroll', { offset_chunk_id: '00000000-0000-4000-8000-000000000000' }), 404, /offset_chunk_id/);
    await expectRejected(stack, () => ds.post('/api/chunks/scroll', { offset_chunk_id: 'not-a-uuid' }), 400);
  });
});

/** Polls the dataset's worker events until `n` chunks_bulk_deleted events exist; returns their data. */
async function waitBulkDeletes(c: Client, n: number, timeoutMs = 30_000): Promise<{ count: number }[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.post('/api/dataset/events', { event_types: ['chunks_bulk_deleted'], page_size: 100 });
    expect(res.status, res.text).toBe(200);
    if (res.body.events.length >= n) return res.body.events.map((e: any) => JSON.parse(e.event_data));
    if (Date.now() > until) throw new Error(`bulk delete did not finish\n${stack.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('bulk delete by filter', () => {
  let bulk: Client;
  let datasetId: string;

  beforeAll(async () => {
    const res = await tenant.org.post('/api/dataset', { dataset_name: 'bulk-delete' });
    expect(res.status, res.text).toBe(200);
    datasetId = res.body.id;
    bulk = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
    await ingest(bulk, randomChunks(300, 17));
  }, 60_000);

  it('deletes exactly the matching chunks from the store and from search, in a job, and keeps the others', async () => {
    const before = await loadChunks(stack, datasetId);
    const filter = { must: [{ field: 'tag_set', match_any: ['red', 'blue'] }], must_not: [{ field: 'num_value', range: { gt: 60 } }] };
    const doomed = new Set(before.filter((c) => filterHolds(c, filter)).map((c) => c.id));
    expect(doomed.size).toBeGreaterThan(20);
    expect(doomed.size).toBeLessThan(before.length - 20);
    const res = await bulk.del('/api/chunk', { filter });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    const [done] = await waitBulkDeletes(bulk, 1);
    expect(done!.count).toBe(doomed.size);
    const after = await loadChunks(stack, datasetId);
    expect(after.map((c) => c.id).sort()).toEqual(before.filter((c) => !doomed.has(c.id)).map((c) => c.id).sort());
    // The index followed the store: scroll and search see exactly the remaining chunks.
    expect((await scrollAll(bulk, 100)).ids).toEqual(after.map((c) => c.id).sort());
    const r = rng(12);
    for (let q = 0; q < 10; q++) {
      const query = randomQuery(r);
      const found = await bulk.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 300 });
      expect(found.status, found.text).toBe(200);
      const ids = found.body.chunks.map((x: any) => x.chunk.id as string);
      for (const id of ids) expect(doomed.has(id), `deleted chunk ${id} found by "${query}"`).toBe(false);
      expect(new Set(ids)).toEqual(new Set(bruteForceBm25(after, query, null).map((h) => h.id)));
    }
  });

  it('resolves group tracking ids and metadata filters like search does', async () => {
    const before = await loadChunks(stack, datasetId);
    const filter = { should: [{ field: 'group_tracking_ids', match_any: ['g2'] }, { field: 'metadata.color', match_any: ['coral'] }] };
    const doomed = new Set(before.filter((c) => filterHolds(c, filter)).map((c) => c.id));
    expect(doomed.size).toBeGreaterThan(0);
    expect((await bulk.del('/api/chunk', { filter })).status).toBe(204);
    const events = await waitBulkDeletes(bulk, 2);
    expect(events.map((e) => e.count).sort((a, b) => a - b)).toContain(doomed.size);
    expect((await loadChunks(stack, datasetId)).map((c) => c.id).sort()).toEqual(before.filter((c) => !doomed.has(c.id)).map((c) => c.id).sort());
  });

  it('answers before the job runs and spares matching chunks written after the request', async () => {
    await stack.kill('jobs');
    try {
      const filter = { must: [{ field: 'metadata.color', match_any: ['amber'] }] };
      const before = await loadChunks(stack, datasetId);
      const doomed = new Set(before.filter((c) => filterHolds(c, filter)).map((c) => c.id));
      expect(doomed.size).toBeGreaterThan(0);
      const res = await bulk.del('/api/chunk', { filter });
      expect(res.status, res.text).toBe(204);
      // Nothing happened yet: the job workers are down.
      expect((await loadChunks(stack, datasetId)).length).toBe(before.length);
      await new Promise((r) => setTimeout(r, 5));
      const late = await bulk.post('/api/chunk', { chunk_html: 'written after the delete request', tracking_id: 'late-amber', metadata: { color: 'amber' } });
      expect(late.status, late.text).toBe(200);
      await stack.start('jobs');
      await waitBulkDeletes(bulk, 3);
      const after = await loadChunks(stack, datasetId);
      expect(after.map((c) => c.id).sort()).toEqual([...before.filter((c) => !doomed.has(c.id)).map((c) => c.id), late.body.chunk_metadata.id].sort());
    } finally {
      if (stack.exits.jobs !== undefined) await stack.start('jobs').catch(() => {});
    }
  });

  it('deletes across several batches of the job (more matches than one batch of 1000)', async () => {
    const res = await tenant.org.post('/api/dataset', { dataset_name: 'bulk-delete-large' });
    expect(res.status, res.text).toBe(200);
    const large = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': res.body.id });
    await ingest(large, Array.from({ length: 2300 }, (_, i) => ({ chunk_html: `row ${i}`, num_value: i % 9 })));
    const before = await loadChunks(stack, res.body.id);
    const filter = { must: [{ field: 'num_value', range: { lte: 4 } }] };
    const doomed = new Set(before.filter((c) => filterHolds(c, filter)).map((c) => c.id));
    expect(doomed.size).toBeGreaterThan(1000);
    expect((await large.del('/api/chunk', { filter })).status).toBe(204);
    const [done] = await waitBulkDeletes(large, 1, 60_000);
    expect(done!.count).toBe(doomed.size);
    const after = await loadChunks(stack, res.body.id);
    expect(after.map((c) => c.id).sort()).toEqual(before.filter((c) => !doomed.has(c.id)).map((c) => c.id).sort());
    expect((await scrollAll(large, 500)).ids).toEqual(after.map((c) => c.id).sort());
  });

  it('refuses bad bodies and filters with a 4xx {message}, writing nothing', async () => {
    await expectRejected(stack, () => bulk.del('/api/chunk', {}), 400, /filter is required/);
    await expectRejected(stack, () => bulk.del('/api/chunk'), 400);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: null }), 400, /filter is required/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: {} }), 400, /no condition/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must: [] } }), 400, /no condition/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: 'tag_set' }), 400);
    await expectRejected(stack, () => bulk.del('/api/chunk', [{ filter: {} }]), 400);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must: [{ field: 'colour', match_any: ['x'] }] } }), 400, /unknown filter field "colour"/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must: [{ field: 'tag_set', range: { gt: 1 } }] } }), 400, /range/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must: [{ field: 'tag_set' }] } }), 400, /no filter condition/);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must: [{ field: 'num_value', range: { gt: 'x' } }] } }), 400);
    const ids = Array.from({ length: 1001 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await expectRejected(stack, () => bulk.del('/api/chunk', { filter: { must_not: [{ ids }] } }), 400, /at most 1000/);
    await expectRejected(stack, () => bulk.req('DELETE', '/api/chunk', { raw: '{"filter": ', headers: { 'content-type': 'application/json' } }), 400);
    // Deleting is an admin's right: a read-only key is refused.
    const readKey = await createKey(stack, tenant.orgId, { role: 0 });
    const reader = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': datasetId });
    await expectRejected(stack, () => reader.del('/api/chunk', { filter: { must: [{ field: 'tag_set', match_any: ['red'] }] } }), 403);
    await expectRejected(stack, () => client(stack.baseUrl).del('/api/chunk', { filter: { must: [{ field: 'tag_set', match_any: ['red'] }] } }, { 'tr-dataset': datasetId }), 401);
    // None of them left a job behind.
    await new Promise((r) => setTimeout(r, 500));
    const events = await bulk.post('/api/dataset/events', { event_types: ['chunks_bulk_deleted'], page_size: 100 });
    expect(events.body.events.length).toBe(3);
  });
});
