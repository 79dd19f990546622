/**
 * User events end to end: every event type of PUT /api/analytics/events stored with its defaults
 * and read back through GET /api/analytics/events/:id and POST /api/analytics/events/all (each
 * filter, metadata_filter with string, number and boolean values, pages), against an oracle built
 * from what the test sent; search, rag and recommendation events in their own tables; the
 * deprecated PUT /api/analytics/ctr; bad bodies refused with a 400 naming the field and nothing
 * stored; unknown ids 404; read-only keys 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../core/domain/time.js';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore, snapshotStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let t: Tenant;
let ds: Client;
let readOnly: Client;
/** Chunks of the dataset by tracking id (for the CTR route). */
const chunkIds = new Map<string, string>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
  ds = t.ds;
  const readKey = await createKey(stack, t.orgId, { role: 0 });
  readOnly = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId });
  const res = await ds.post('/api/chunk', [
    { chunk_html: 'red running shoes', tracking_id: 'shoe-1' },
    { chunk_html: 'blue rain coat', tracking_id: 'coat-1' },
  ]);
  expect(res.status, res.text).toBe(200);
  for (const c of res.body.chunk_metadata) chunkIds.set(c.tracking_id, c.id);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Sends one event; asserts the 204 and returns the stored id from TR-Event-Id. */
async function send(body: Record<string, unknown>, as: Client = ds): Promise<string> {
  const res = await as.put('/api/analytics/events', body);
  expect(res.status, res.text).toBe(204);
  expect(res.text).toBe('');
  const id = res.headers.get('tr-event-id');
  expect(id).toMatch(UUID);
  return id!;
}

/** GET one event (200). */
async function getEvent(id: string): Promise<any> {
  const res = await ds.get(`/api/analytics/events/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** What GET must answer for an event sent with `body`, given the wire defaults of its type. */
function expected(id: string, body: Record<string, any>, own: Record<string, unknown>): Record<string, unknown> {
  return {
    id,
    event_type: body.event_type,
    event_name: body.event_name,
    user_id: body.user_id ?? null,
    request_id: body.request?.request_id ?? null,
    request_type: body.request?.request_type ?? null,
    location: body.location ?? null,
    dataset_id: t.datasetId,
    ...own,
  };
}

/** EventData without its times (checked apart: they are the service's). */
const timeless = (e: Record<string, unknown>) => {
  const { created_at: created, updated_at: updated, ...rest } = e;
  expect(created).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
  expect(updated).toBe(created);
  return rest;
};

describe('PUT /api/analytics/events: user events', () => {
  it('stores each type with its defaults and reads it back by id', async () => {
    const request = { request_type: 'search', request_id: '0190a4d2-0000-7000-8000-000000000001' };
    const chunk = chunkIds.get('shoe-1')!;
    const cases: { body: Record<string, any>; own: Record<string, unknown> }[] = [
      { body: { event_type: 'view', event_name: 'viewed', items: ['a', 'b'] }, own: { items: ['a', 'b'], metadata: '', is_conversion: false } },
      // A view is never a conversion, even when the caller says so (the field is not the view's).
      {
        body: { event_type: 'view', event_name: 'viewed', items: [], is_conversion: true, user_id: 'u1', location: 'home', metadata: { page: 1 }, request },
        own: { items: [], metadata: '{"page":1}', is_conversion: false },
      },
      { body: { event_type: 'add_to_cart', event_name: 'cart', items: ['sku-1'] }, own: { items: ['sku-1'], metadata: '', is_conversion: true } },
      { body: { event_type: 'add_to_cart', event_name: 'cart', items: ['sku-1'], is_conversion: false }, own: { items: ['sku-1'], metadata: '', is_conversion: false } },
      { body: { event_type: 'click', event_name: 'bare click' }, own: { items: [], metadata: '', is_conversion: true } },
      {
        body: { event_type: 'click', event_name: 'click', clicked_items: { chunk_id: chunk, position: 3 }, request, metadata: { a: 'b' }, is_conversion: false },
        own: { items: [JSON.stringify({ chunk_id: chunk, position: 3 })], metadata: '{"a":"b"}', is_conversion: false },
      },
      {
        body: { event_type: 'purchase', event_name: 'bought', items: [{ tracking_id: 'sku-1', revenue: 10.5 }, { tracking_id: 'sku-2', revenue: 2 }], user_id: 'u2' },
        own: { items: ['{"tracking_id":"sku-1","revenue":10.5}', '{"tracking_id":"sku-2","revenue":2}'], metadata: '', is_conversion: true },
      },
      {
        body: { event_type: 'filter_clicked', event_name: 'filtered', items: { 'match_any::tag_set': ['red'] } },
        own: { items: [], metadata: '{"match_any::tag_set":["red"]}', is_conversion: true },
      },
      {
        body: { event_type: 'filter_clicked', event_name: 'filtered', items: { 'range::num_value': { gt: 1 } }, is_conversion: false },
        own: { items: [], metadata: '{"range::num_value":{"gt":1}}', is_conversion: false },
      },
    ];
    for (const c of cases) {
      const id = await send(c.body);
      expect(timeless(await getEvent(id)), JSON.stringify(c.body)).toEqual(expected(id, c.body, c.own));
    }
    // Columns the reports read: a click's position and chunk, a purchase's total revenue.
    const rows = await queryStore<{ event_type: string; position: number | null; clicked_chunk_id: string | null; revenue: number }>(
      stack,
      "SELECT event_type, position, clicked_chunk_id, revenue FROM user_events WHERE dataset_id = ? AND event_type IN ('click', 'purchase')",
      t.datasetId,
    );
    // Sorted here: the engines order NULL differently.
    const sorted = rows.map((r) => [r.event_type, r.position, r.clicked_chunk_id, Number(r.revenue)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(b[1]) - Number(a[1]));
    expect(sorted).toEqual([
      ['click', 3, chunk, 0],
      ['click', null, null, 0],
      ['purchase', null, null, 12.5],
    ]);
  });

  it('stores search, rag and recommendation events in their own tables, a rating beside them', async () => {
    const searchId = await send({
      event_type: 'search',
      query: 'red shoes',
      tokens: 12,
      latency: 31.5,
      top_score: 0.75,
      results: [{ id: 'x', score: 0.75 }, 'free form'],
      request_params: { page_size: 5 },
      query_rating: { rating: 1, note: 'good' },
      user_id: 'u9',
      metadata: { component_name: 'bar' },
    });
    const bareSearch = await send({ event_type: 'search', query: 'bare', tokens: 0, search_type: 'autocomplete' });
    const searches = await queryStore<any>(
      stack,
      'SELECT id, dataset_id, search_type, search_method, query, request_params, latency, top_score, results, result_count, user_id, metadata FROM search_queries WHERE dataset_id = ? ORDER BY query',
      t.datasetId,
    );
    expect(searches.map((r) => ({ ...r, latency: Number(r.latency), top_score: Number(r.top_score) }))).toEqual([
      {
        id: bareSearch, dataset_id: t.datasetId, search_type: 'autocomplete', search_method: '', query: 'bare', request_params: '{}',
        latency: 0, top_score: 0, results: '[]', result_count: 0, user_id: null, metadata: null,
      },
      {
        id: searchId, dataset_id: t.datasetId, search_type: 'search', search_method: '', query: 'red shoes', request_params: '{"page_size":5}',
        latency: 31.5, top_score: 0.75, results: '[{"id":"x","score":0.75},"free form"]', result_count: 2, user_id: 'u9',
        metadata: '{"component_name":"bar"}',
      },
    ]);

    const ragId = await send({
      event_type: 'rag', user_message: 'why?', tokens: 40, rag_type: 'chosen_chunks', results: [{ id: 'd', score: 0.5 }], llm_response: 'because',
      query_rating: { rating: -1 }, hallucination_score: 0.1, detected_hallucinations: ['x'],
    });
    const bareRag = await send({ event_type: 'rag', user_message: 'bare', tokens: 1 });
    const rags = await queryStore<any>(
      stack,
      'SELECT id, rag_type, user_message, results, llm_response, top_score, prompt_tokens, hallucination_score, detected_hallucinations FROM rag_queries WHERE dataset_id = ? ORDER BY user_message',
      t.datasetId,
    );
    expect(rags.map((r) => ({ ...r, top_score: Number(r.top_score), prompt_tokens: Number(r.prompt_tokens), hallucination_score: Number(r.hallucination_score) }))).toEqual([
      { id: bareRag, rag_type: 'all_chunks', user_message: 'bare', results: '[]', llm_response: '', top_score: 0, prompt_tokens: 1, hallucination_score: 0, detected_hallucinations: '[]' },
      {
        id: ragId,
        rag_type: 'chosen_chunks',
        user_message: 'why?',
        results: '[{"id":"d","score":0.5}]',
        llm_response: 'because',
        top_score: 0.5,
        prompt_tokens: 40,
        hallucination_score: 0.1,
        detected_hallucinations: '["x"]',
      },
    ]);
    // The RAG report shows them as the record's.
    const shown = await ds.post('/api/analytics/rag', { type: 'rag_query_details', request_id: ragId });
    expect(shown.status, shown.text).toBe(200);
    expect([shown.body.hallucination_score, shown.body.detected_hallucinations]).toEqual([0.1, ['x']]);

    const recId = await send({ event_type: 'recommendation', positive_ids: [chunkIds.get('shoe-1')], negative_tracking_ids: ['coat-1'], top_score: 0.3 });
    const groupRec = await send({ event_type: 'recommendation', recommendation_type: 'Group' });
    const recs = await queryStore<any>(stack, 'SELECT id, recommendation_type, positive_ids, negative_ids, negative_tracking_ids, request_params, top_score FROM recommendation_queries WHERE dataset_id = ? ORDER BY recommendation_type', t.datasetId);
    expect(recs.map((r) => ({ ...r, top_score: Number(r.top_score) }))).toEqual([
      { id: recId, recommendation_type: 'Chunk', positive_ids: JSON.stringify([chunkIds.get('shoe-1')]), negative_ids: '[]', negative_tracking_ids: '["coat-1"]', request_params: '{}', top_score: 0.3 },
      { id: groupRec, recommendation_type: 'Group', positive_ids: '[]', negative_ids: '[]', negative_tracking_ids: '[]', request_params: '{}', top_score: 0 },
    ]);

    const ratings = await queryStore<any>(stack, 'SELECT query_id, kind, rating, note FROM query_ratings WHERE dataset_id = ? ORDER BY rating', t.datasetId);
    expect(ratings.map((r) => ({ ...r, rating: Number(r.rating) }))).toEqual([
      { query_id: ragId, kind: 'rag', rating: -1, note: null },
      { query_id: searchId, kind: 'search', rating: 1, note: 'good' },
    ]);
    // None of them is a user event.
    for (const id of [searchId, ragId, recId]) expect((await ds.get(`/api/analytics/events/${id}`)).status).toBe(404);
  });

  it('refuses bad bodies with a 400 naming the field, storing nothing', async () => {
    const chunk = chunkIds.get('shoe-1')!;
    const bad: [unknown, RegExp][] = [
      [undefined, /event_type/],
      [[], /event_type/],
      [{ event_name: 'x', items: [] }, /event_type/],
      [{ event_type: 'hover', event_name: 'x' }, /event_type.*view.*hover|event_type: must be one of/],
      [{ event_type: 'view', items: [] }, /event_name/],
      [{ event_type: 'view', event_name: 'x' }, /items/],
      [{ event_type: 'view', event_name: 'x', items: 'a' }, /items/],
      [{ event_type: 'view', event_name: 'x'.repeat(1025), items: [] }, /event_name.*1024/],
      [{ event_type: 'view', event_name: 'x', items: Array.from({ length: 1001 }, () => 'a') }, /items.*1000/],
      [{ event_type: 'view', event_name: 'x', items: [], user_id: 'u'.repeat(1025) }, /user_id/],
      [{ event_type: 'view', event_name: 'a\u0000b', items: [] }, /event_name.*NUL/],
      [{ event_type: 'view', event_name: 'x', items: [], request: { request_type: 'search' } }, /request\.request_id/],
      [{ event_type: 'view', event_name: 'x', items: [], request: { request_type: 'chat', request_id: chunk } }, /request\.request_type/],
      [{ event_type: 'add_to_cart', event_name: 'x', items: [], is_conversion: 'yes' }, /is_conversion/],
      [{ event_type: 'click', event_name: 'x', clicked_items: [{ chunk_id: chunk, position: 1 }] }, /clicked_items/],
      [{ event_type: 'click', event_name: 'x', clicked_items: { chunk_id: 'nope', position: 1 } }, /clicked_items\.chunk_id/],
      [{ event_type: 'click', event_name: 'x', clicked_items: { chunk_id: chunk, position: 1.5 } }, /clicked_items\.position/],
      [{ event_type: 'purchase', event_name: 'x', items: ['sku'] }, /items\[0\]/],
      [{ event_type: 'purchase', event_name: 'x', items: [{ tracking_id: 'sku' }] }, /items\[0\]\.revenue/],
      [{ event_type: 'filter_clicked', event_name: 'x', items: ['a'] }, /items/],
      [{ event_type: 'search', tokens: 1 }, /query/],
      [{ event_type: 'search', query: 'q' }, /tokens/],
      [{ event_type: 'search', query: 'q', tokens: -1 }, /tokens/],
      [{ event_type: 'search', query: 'q', tokens: 1, search_type: 'fulltext' }, /search_type/],
      [{ event_type: 'search', query: 'q', tokens: 1, query_rating: { rating: 'good' } }, /query_rating\.rating/],
      [{ event_type: 'rag', tokens: 1 }, /user_message/],
      [{ event_type: 'rag', user_message: 'm', tokens: 1, topic_id: 'x' }, /topic_id/],
      [{ event_type: 'recommendation', recommendation_type: 'chunk' }, /recommendation_type/],
      [{ event_type: 'recommendation', positive_ids: ['x'] }, /positive_ids\[0\]/],
    ];
    const before = await snapshotStore(stack);
    for (const [body, message] of bad) {
      const res = body === undefined ? await ds.req('PUT', '/api/analytics/events') : await ds.put('/api/analytics/events', body);
      expect(res.status, `${JSON.stringify(body)?.slice(0, 200)} → ${res.text}`).toBe(400);
      expect(res.body.message, JSON.stringify(body)?.slice(0, 200)).toMatch(message);
    }
    expect(await snapshotStore(stack)).toEqual(before);
  });

  it('is for admins: a read-only key gets 403 on every route, a key of another organization 404', async () => {
    const res = await readOnly.put('/api/analytics/events', { event_type: 'view', event_name: 'x', items: [] });
    expect(res.status, res.text).toBe(403);
    expect((await readOnly.post('/api/analytics/events/all', {})).status).toBe(403);
    expect((await readOnly.put('/api/analytics/ctr', { request_id: chunkIds.get('shoe-1'), ctr_type: 'search', clicked_chunk_id: chunkIds.get('shoe-1'), position: 1 })).status).toBe(403);
    const id = await send({ event_type: 'view', event_name: 'mine', items: [] });
    expect((await readOnly.get(`/api/analytics/events/${id}`)).status).toBe(403);
    const stranger = await createTenant(stack);
    const res2 = await stranger.ds.get(`/api/analytics/events/${id}`);
    expect(res2.status).toBe(404);
    const res3 = await client(stack.baseUrl, { authorization: stranger.ownerKey, 'tr-dataset': t.datasetId }).get(`/api/analytics/events/${id}`);
    expect(res3.status).toBeGreaterThanOrEqual(403);
  });

  it('answers 404 naming an unknown event id, 400 for one that is not a UUID', async () => {
    const unknown = '0190a4d2-0000-7000-8000-0000000000ff';
    const res = await ds.get(`/api/analytics/events/${unknown}`);
    expect(res.status).toBe(404);
    expect(res.body.message).toContain(unknown);
    const bad = await ds.get('/api/analytics/events/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/event_id/);
  });
});

describe('POST /api/analytics/events/all', () => {
  /** The events of a dataset of its own, as sent and as stored. */
  let list: Client;
  const sent: { id: string; type: string; conversion: boolean; user: string | null; metadata: any; createdAt: number }[] = [];

  /** The oracle: newest first, ties by id. */
  const order = (xs: typeof sent) => [...xs].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((e) => e.id);

  async function page(body: unknown): Promise<string[]> {
    const res = await list.post('/api/analytics/events/all', body);
    expect(res.status, res.text).toBe(200);
    return (res.body.events as any[]).map((e) => e.id);
  }

  /** Every page of a filtered listing, joined. */
  async function allPages(filter: unknown): Promise<string[]> {
    const out: string[] = [];
    for (let p = 1; ; p++) {
      const ids = await page({ filter, page: p });
      expect(ids.length).toBeLessThanOrEqual(10);
      out.push(...ids);
      if (ids.length < 10) return out;
    }
  }

  beforeAll(async () => {
    const datasetId = await createDataset(stack, t.orgId, t.ownerKey);
    list = client(stack.baseUrl, { authorization: t.ownerKey, 'tr-dataset': datasetId });
    const types = ['view', 'add_to_cart', 'click', 'purchase', 'filter_clicked'] as const;
    const colors = ['red', 'blue', '5'];
    for (let i = 0; i < 27; i++) {
      const type = types[i % 5]!;
      const metadata = { color: colors[i % 3], size: i % 4, sale: i % 2 === 0, nested: { n: i % 3 === 0 ? 'x' : 'y' } };
      const user = i % 3 === 2 ? null : `user-${i % 3}`;
      const conversion = i % 2 === 1;
      const body: Record<string, unknown> = {
        event_type: type,
        event_name: `e${i}`,
        ...(user ? { user_id: user } : {}),
        ...(type === 'view' ? { items: [`i${i}`], metadata } : {}),
        ...(type === 'add_to_cart' ? { items: [`i${i}`], metadata, is_conversion: conversion } : {}),
        ...(type === 'click' ? { metadata, is_conversion: conversion } : {}),
        ...(type === 'purchase' ? { items: [{ tracking_id: `i${i}`, revenue: i }], metadata, is_conversion: conversion } : {}),
        // filter_clicked keeps its items as metadata.
        ...(type === 'filter_clicked' ? { items: metadata, is_conversion: conversion } : {}),
      };
      const id = await send(body, list);
      const stored = (await list.get(`/api/analytics/events/${id}`)).body;
      sent.push({ id, type, conversion: stored.is_conversion, user, metadata, createdAt: parseTimestamp(stored.created_at)! });
      // Each event a later millisecond than the last, so that date ranges can fall between any two.
      await new Promise((r) => setTimeout(r, 2));
    }
    // Views are never conversions, whatever the oracle above asked.
    for (const e of sent) if (e.type === 'view') expect(e.conversion).toBe(false);
  });

  it('lists 10 per page, newest first, ties by id; page 0 is page 1; an empty body is page 1', async () => {
    const all = order(sent);
    expect(await page({})).toEqual(all.slice(0, 10));
    expect(await page(undefined)).toEqual(all.slice(0, 10));
    expect(await page({ page: 0 })).toEqual(all.slice(0, 10));
    expect(await page({ page: 2 })).toEqual(all.slice(10, 20));
    expect(await page({ page: 3 })).toEqual(all.slice(20, 30));
    expect(await page({ page: 4 })).toEqual([]);
    expect(await allPages(undefined)).toEqual(all);
    // Other datasets' events stay out.
    for (const id of all) expect((await ds.get(`/api/analytics/events/${id}`)).status).toBe(404);
  });

  it('filters by event_type, is_conversion, user_id and date_range', async () => {
    for (const type of ['view', 'add_to_cart', 'click', 'purchase', 'filter_clicked']) {
      expect(await allPages({ event_type: type }), type).toEqual(order(sent.filter((e) => e.type === type)));
    }
    for (const c of [true, false]) expect(await allPages({ is_conversion: c })).toEqual(order(sent.filter((e) => e.conversion === c)));
    expect(await allPages({ user_id: 'user-1' })).toEqual(order(sent.filter((e) => e.user === 'user-1')));
    expect(await allPages({ user_id: 'nobody' })).toEqual([]);
    const times = [...new Set(sent.map((e) => e.createdAt))].sort((a, b) => a - b);
    const mid = times[Math.floor(times.length / 2)]!;
    const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    const ranges: [Record<string, string>, (ms: number) => boolean][] = [
      [{ gte: iso(mid) }, (ms) => ms >= mid],
      [{ gt: iso(mid) }, (ms) => ms > mid],
      [{ lt: iso(mid) }, (ms) => ms < mid],
      [{ lte: iso(mid) }, (ms) => ms <= mid],
      [{ gt: iso(times[2]!), lte: iso(times[times.length - 3]!) }, (ms) => ms > times[2]! && ms <= times[times.length - 3]!],
    ];
    for (const [range, keep] of ranges) {
      const want = order(sent.filter((e) => keep(e.createdAt)));
      expect(want.length, JSON.stringify(range)).toBeGreaterThan(0);
      expect(await allPages({ date_range: range }), JSON.stringify(range)).toEqual(want);
    }
    // Together.
    expect(await allPages({ event_type: 'click', is_conversion: true, user_id: 'user-0', date_range: { gte: iso(times[0]!) } })).toEqual(
      order(sent.filter((e) => e.type === 'click' && e.conversion && e.user === 'user-0')),
    );
  });

  it('filters by metadata_filter with string, number and boolean values (by JSON type)', async () => {
    const cases: [string, (m: any) => boolean][] = [
      ['color = "red"', (m) => m.color === 'red'],
      ['color="5"', (m) => m.color === '5'],
      ['color = 5', () => false],
      ['size = 2', (m) => m.size === 2],
      ['size = 2.0', (m) => m.size === 2],
      ['size = "2"', () => false],
      ['sale = true', (m) => m.sale === true],
      ['sale = false', (m) => m.sale === false],
      ['sale = 1', () => false],
      ['nested.n = "x"', (m) => m.nested.n === 'x'],
      ['nested.missing = null', () => false],
    ];
    for (const [expr, keep] of cases) {
      expect(await allPages({ metadata_filter: expr }), expr).toEqual(order(sent.filter((e) => keep(e.metadata))));
    }
    expect(await allPages({ metadata_filter: 'color = "blue"', event_type: 'filter_clicked' })).toEqual(
      order(sent.filter((e) => e.metadata.color === 'blue' && e.type === 'filter_clicked')),
    );
  });

  it('refuses a bad filter with a 400 naming the field', async () => {
    const bad: [unknown, RegExp][] = [
      [{ page: -1 }, /page/],
      [{ page: 'two' }, /page/],
      [{ filter: { event_type: 'search' } }, /filter\.event_type/],
      [{ filter: { is_conversion: 'true' } }, /filter\.is_conversion/],
      [{ filter: { date_range: { gt: 'yesterday' } } }, /filter\.date_range\.gt/],
      [{ filter: { date_range: { gt: '2024-02-01', lt: '2024-01-01' } } }, /date_range/],
      [{ filter: { metadata_filter: 'color' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'color == "red"' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'color = red' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'color = {"a":1}' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'a..b = 1' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'a b = 1' } }, /metadata_filter/],
      [{ filter: { metadata_filter: '= 1' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'size >= 1' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'a = 1 AND b = 2' } }, /metadata_filter/],
      // NUL: refused alike on both engines (PostgreSQL cannot take it as a parameter).
      [{ filter: { metadata_filter: 'a = "x\\u0000"' } }, /metadata_filter.*NUL/],
      [{ filter: { user_id: 'a\u0000' } }, /filter\.user_id/],
    ];
    for (const [body, message] of bad) {
      const res = await list.post('/api/analytics/events/all', body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
  });
});

describe('PUT /api/analytics/ctr (deprecated)', () => {
  it('stores a click named "click" linked to the request, by chunk id or tracking id', async () => {
    const requestId = '0190a4d2-0000-7000-8000-0000000000c1';
    const byId = await ds.put('/api/analytics/ctr', { request_id: requestId, ctr_type: 'rag', clicked_chunk_id: chunkIds.get('coat-1'), position: 2, metadata: { via: 'id' } });
    expect(byId.status, byId.text).toBe(204);
    const byTracking = await ds.put('/api/analytics/ctr', { request_id: requestId, ctr_type: 'recommendation', clicked_chunk_tracking_id: 'shoe-1', position: 1 });
    expect(byTracking.status, byTracking.text).toBe(204);
    const one = timeless(await getEvent(byId.headers.get('tr-event-id')!));
    expect(one).toEqual({
      id: byId.headers.get('tr-event-id'),
      event_type: 'click',
      event_name: 'click',
      items: [JSON.stringify({ chunk_id: chunkIds.get('coat-1'), position: 2 })],
      metadata: '{"via":"id"}',
      user_id: null,
      is_conversion: true,
      request_id: requestId,
      request_type: 'rag',
      location: null,
      dataset_id: t.datasetId,
    });
    const two = await getEvent(byTracking.headers.get('tr-event-id')!);
    expect([two.items, two.request_type, two.is_conversion]).toEqual([[JSON.stringify({ chunk_id: chunkIds.get('shoe-1'), position: 1 })], 'recommendation', true]);
    const rows = await queryStore<{ position: number; clicked_chunk_id: string }>(stack, 'SELECT position, clicked_chunk_id FROM user_events WHERE id = ?', byTracking.headers.get('tr-event-id'));
    expect(rows).toEqual([{ position: 1, clicked_chunk_id: chunkIds.get('shoe-1') }]);
  });

  it('refuses a click without a chunk (400), with an unknown tracking id (404) or a bad field (400), storing nothing', async () => {
    const requestId = '0190a4d2-0000-7000-8000-0000000000c2';
    const before = await snapshotStore(stack);
    const cases: [unknown, number, RegExp][] = [
      [{ request_id: requestId, ctr_type: 'search', position: 1 }, 400, /clicked_chunk_id or clicked_chunk_tracking_id/],
      [{ request_id: requestId, ctr_type: 'search', clicked_chunk_tracking_id: 'no-such', position: 1 }, 404, /no-such/],
      [{ ctr_type: 'search', clicked_chunk_id: chunkIds.get('shoe-1'), position: 1 }, 400, /request_id/],
      [{ request_id: requestId, ctr_type: 'chat', clicked_chunk_id: chunkIds.get('shoe-1'), position: 1 }, 400, /ctr_type/],
      [{ request_id: requestId, ctr_type: 'search', clicked_chunk_id: chunkIds.get('shoe-1') }, 400, /position/],
      [{ request_id: requestId, ctr_type: 'search', clicked_chunk_id: 'x', position: 1 }, 400, /clicked_chunk_id/],
      [{ request_id: requestId, ctr_type: 'search', clicked_chunk_id: chunkIds.get('shoe-1'), position: -1 }, 400, /position/],
    ];
    for (const [body, status, message] of cases) {
      const res = await ds.put('/api/analytics/ctr', body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(status);
      expect(res.body.message).toMatch(message);
    }
    expect(await snapshotStore(stack)).toEqual(before);
  });
});
