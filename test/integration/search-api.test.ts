/**
 * The search, count and scroll endpoints as a client sees them: writes visible at once, response
 * shapes (V1/V2, slim, content_only), key default_params, validation and admission control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { snapshotStore } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let tenant: Tenant;
let ds: Client;

const search = (c: Client, body: Record<string, unknown>) => c.post('/api/chunk/search', { search_type: 'bm25', ...body });

beforeAll(async () => {
  // The per-organization share is opened wide so that the core's own admission is what refuses.
  // Shards on threads: an inline search runs to completion in one turn of the core's event loop,
  // so two are never in flight at once and admission control would never be reached.
  stack = await startStack({ env: { QUARRY_MAX_CONCURRENT_SEARCHES: '2', QUARRY_TENANT_READ_CONCURRENCY: '1000', QUARRY_INLINE_SHARD_MAX_CHUNKS: '0' } });
  tenant = await createTenant(stack);
  ds = tenant.ds;
  const res = await ds.post('/api/chunk', [
    { tracking_id: 'a', chunk_html: '<b>Aspirin</b> lowers fever', tag_set: ['drug'], weight: 2, num_value: 1 },
    { tracking_id: 'b', chunk_html: 'Fever in children', tag_set: ['kids'], num_value: 2 },
    { tracking_id: 'c', chunk_html: 'Ibuprofen and aspirin compared', tag_set: ['drug', 'kids'], num_value: 3 },
  ]);
  expect(res.status, res.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const ids = (res: { body: any }) => res.body.chunks.map((x: any) => x.chunk.tracking_id);

describe('writes are searchable when the request returns', () => {
  it('finds a new chunk, follows an update, forgets a delete', async () => {
    expect((await ds.post('/api/chunk', { tracking_id: 'new', chunk_html: 'zebrafish regeneration' })).status).toBe(200);
    expect(ids(await search(ds, { query: 'zebrafish' }))).toEqual(['new']);
    expect((await ds.put('/api/chunk', { tracking_id: 'new', chunk_html: 'axolotl regeneration' })).status).toBe(204);
    expect(ids(await search(ds, { query: 'zebrafish' }))).toEqual([]);
    expect(ids(await search(ds, { query: 'axolotl' }))).toEqual(['new']);
    expect((await ds.del('/api/chunk/tracking_id/new')).status).toBe(204);
    expect(ids(await search(ds, { query: 'axolotl' }))).toEqual([]);
  });

  it('follows group membership in group filters', async () => {
    const g = await ds.post('/api/chunk_group', { tracking_id: 'grp', name: 'grp' });
    const chunk = await ds.get('/api/chunk/tracking_id/b');
    expect((await ds.post(`/api/chunk_group/chunk/${g.body.id}`, { chunk_id: chunk.body.id })).status).toBe(204);
    const filters = { must: [{ field: 'group_tracking_ids', match_any: ['grp'] }] };
    expect(ids(await search(ds, { query: 'fever', filters }))).toEqual(['b']);
    expect(ids(await search(ds, { query: 'fever', filters: { must: [{ field: 'group_ids', match_any: [g.body.id] }] } }))).toEqual(['b']);
    expect((await ds.del(`/api/chunk_group/chunk/${g.body.id}`, { chunk_id: chunk.body.id })).status).toBe(204);
    expect(ids(await search(ds, { query: 'fever', filters }))).toEqual([]);
  });
});

describe('response shapes', () => {
  it('answers V2 by default with id, chunks, total_pages and V1 with score_chunks', async () => {
    const v2 = await search(ds, { query: 'aspirin', get_total_pages: true, page_size: 1 });
    expect(v2.headers.get('x-api-version')).toBe('2.0');
    expect(v2.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(v2.body.total_pages).toBe(2);
    expect(v2.body.chunks[0].chunk.tag_set).toBeInstanceOf(Array);
    const v1 = await search(ds.with({ 'x-api-version': 'V1' }), { query: 'aspirin' });
    expect(v1.headers.get('x-api-version')).toBe('1.0');
    expect(v1.body.score_chunks).toHaveLength(2);
    expect(typeof v1.body.score_chunks[0].metadata[0].tag_set).toBe('string');
    expect(v1.body.total_chunk_pages).toBe(0);
  });

  it('slims and trims chunks on request', async () => {
    const slim = await search(ds, { query: 'aspirin', slim_chunks: true });
    expect(slim.body.chunks[0].chunk).not.toHaveProperty('chunk_html');
    const content = await search(ds, { query: 'aspirin', content_only: true });
    expect(Object.keys(content.body.chunks[0].chunk).sort()).toEqual(['chunk_html', 'id', 'image_urls', 'num_value', 'time_stamp', 'tracking_id', 'weight']);
  });

  it('multiplies scores by weights only when asked', async () => {
    const plain = await search(ds, { query: 'aspirin' });
    const weighted = await search(ds, { query: 'aspirin', use_weights: true });
    const score = (res: any, tid: string) => res.body.chunks.find((x: any) => x.chunk.tracking_id === tid).score;
    expect(score(weighted, 'a')).toBeCloseTo(score(plain, 'a') * 2, 9);
    expect(score(weighted, 'c')).toBeCloseTo(score(plain, 'c'), 9);
  });

  it('returns nothing for page_size 0 and for pages past the end', async () => {
    expect((await search(ds, { query: 'aspirin', page_size: 0 })).body.chunks).toEqual([]);
    expect((await search(ds, { query: 'aspirin', page: 5 })).body.chunks).toEqual([]);
  });
});

describe('key default_params', () => {
  it('forces the key\'s search parameters over the body', async () => {
    const key = await createKey(stack, tenant.orgId, {
      role: 0,
      default_params: { page_size: 1, filters: { must: [{ field: 'tag_set', match_any: ['kids'] }] } },
    });
    const c = client(stack.baseUrl, { authorization: key, 'tr-dataset': tenant.datasetId });
    const res = await search(c, { query: 'aspirin fever', page_size: 10, filters: { must: [{ field: 'tag_set', match_any: ['drug'] }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.chunks).toHaveLength(1);
    expect(['b', 'c']).toContain(res.body.chunks[0].chunk.tracking_id);
    const scroll = await c.post('/api/chunks/scroll', { page_size: 10 });
    expect(scroll.body.chunks).toHaveLength(1);
    expect(scroll.body.chunks[0].tag_set).toContain('kids');
  });
});

describe('bad search input', () => {
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ['search', '/api/chunk/search', { search_type: 'bm25' }, /query/],
    ['search', '/api/chunk/search', { query: 'x' }, /search_type/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'vector' }, /search_type/],
    ['search', '/api/chunk/search', { query: '   ', search_type: 'bm25' }, /Query cannot be empty/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'fulltext', filters: { must: [{ field: 'content', range: { gt: 1 } }] } }, /range cannot be used on field "content"/],
    ['search', '/api/chunk/search', { query: [{ query: 'x', weight: 1 }], search_type: 'bm25' }, /only with search_type "semantic"/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', page: -1 }, /page/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', page_size: 'ten' }, /page_size/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'color', match_any: ['x'] }] } }, /unknown filter field "color"/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'tag_set', range: { gt: 1 } }] } }, /range cannot be used on field "tag_set"/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'num_value' }] } }, /no filter condition/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'num_value', range: { gt: 1 }, match_any: [1] }] } }, /more than one condition/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'time_stamp', date_range: { gt: 'yesterday' } }] } }, /timestamp/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'location', geo_radius: { center: { lat: 91, lon: 0 }, radius: 5 } }] } }, /lat/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: 'tag_set' } }, /filters.must/],
    ['search', '/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ ids: [] }] } }, /must not be empty/],
    ['count', '/api/chunk/count', { query: 'x', search_type: 'hybrid' }, /hybrid/],
    ['count', '/api/chunk/count', { query: 'x', search_type: 'bm25', limit: 10_000_000 }, /MAX_LIMIT/],
    ['scroll', '/api/chunks/scroll', { sort_by: { field: 'num_value' }, offset_chunk_id: '00000000-0000-4000-8000-000000000000' }, /cannot be used together/],
    ['scroll', '/api/chunks/scroll', { sort_by: { field: 'link' } }, /sort_by.field/],
    ['scroll', '/api/chunks/scroll', { filters: { must_not: [{ ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) }] } }, /at most 1000/],
    ['scroll', '/api/chunks/scroll', { offset_chunk_id: 'not-a-uuid' }, /offset_chunk_id/],
  ];
  it.each(cases)('%s %j gets a 400 naming the problem, and writes nothing', async (_what, path, body, message) => {
    const before = await snapshotStore(stack);
    const res = await ds.post(path, body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(message);
    expect(await snapshotStore(stack)).toEqual(before);
  });

  it('answers 404 for an unknown scroll offset and 400 for malformed JSON', async () => {
    const res = await ds.post('/api/chunks/scroll', { offset_chunk_id: '00000000-0000-4000-8000-000000000000' });
    expect(res.status).toBe(404);
    const bad = await ds.req('POST', '/api/chunk/search', { raw: '{"query": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/Json Deserialization Error/);
  });

  it('needs a key and the dataset header', async () => {
    expect((await client(stack.baseUrl, { 'tr-dataset': tenant.datasetId }).post('/api/chunk/search', { query: 'x', search_type: 'bm25' })).status).toBe(401);
    const res = await client(stack.baseUrl, { authorization: tenant.ownerKey }).post('/api/chunk/search', { query: 'x', search_type: 'bm25' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/TR-Dataset/);
  });
});

describe('admission control', () => {
  it('rejects searches beyond the concurrency limit with 503 and Retry-After, never 500', async () => {
    const bodies = Array.from({ length: 60 }, () => search(ds, { query: 'aspirin fever children ibuprofen', get_total_pages: true }));
    const results = await Promise.all(bodies);
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].every((s) => s === 200 || s === 503), `statuses: ${[...statuses].join(", ")}; ${results.find((r) => r.status !== 200 && r.status !== 503)?.text}`).toBe(true);
    const rejected = results.filter((r) => r.status === 503);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected[0]!.headers.get('retry-after')).toBe('1');
    expect(rejected[0]!.body.message).toMatch(/concurrent searches/);
    expect(results.some((r) => r.status === 200)).toBe(true);
  });
});
