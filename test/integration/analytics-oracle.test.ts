/**
 * The analytics oracle: a generated stream (fixed seed) of searches, recommendations, RAG
 * answers, ratings, views, clicks, add-to-carts and purchases goes in through the public API
 * (`PUT /api/analytics/events`, the rating routes), and every report variant is compared with the
 * same figure computed here from the stream itself. The one thing the stream does not decide is
 * when the service stamped each record: those times are read back from the store (by the ids the
 * service answered with) and bucketed here the way the reports must bucket them.
 *
 * Size: QUARRY_ORACLE_EVENTS (default 40,000 on SQLite, 10,000 on PostgreSQL, whose run repeats
 * what the SQLite one proves about the reports and costs three times as long per event). The
 * stream goes in through HTTP, one event a request: at 100,000 it was the suite's longest file
 * (~95 s of its ~19 min on two cores), and the reports' arithmetic is the same at 40,000 (the
 * same 500 users and 120 queries, every event type, linked and unlinked; the stream still takes
 * tens of seconds, so the minute graphs usually have more than one bucket).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATENCY_RELATIVE_ERROR } from '../../store/latency-histogram.js';
import type { Client } from '../helpers/api.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { rng } from '../helpers/random-corpus.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

const POSTGRES = process.env.QUARRY_TEST_STORE === 'postgres';
const EVENTS = Number(process.env.QUARRY_ORACLE_EVENTS ?? (POSTGRES ? 10_000 : 40_000));
/** The chunk every click names (clicked items are chunk ids). */
const CLICKED_CHUNK = '00000000-0000-4000-8000-0000000000c1';
/** Requests in flight while the stream goes in. */
const CONCURRENCY = 32;

let stack: Stack;
let tenant: Tenant;
let ds: Client;
/** Headers of the tenant's dataset and of its second dataset, for the stream. */
let dsHeaders: Record<string, string>;
let otherHeaders: Record<string, string>;
let otherDatasetId: string;

interface Search {
  id: string;
  query: string;
  kind: string;
  latency: number;
  topScore: number;
  resultCount: number;
  userId: string | null;
  component: string;
  filterField: string | null;
  createdAt: number;
}
interface Rag {
  id: string;
  message: string;
  ragType: string;
  topicId: string | null;
  userId: string | null;
  topScore: number;
  createdAt: number;
}
interface Rec {
  id: string;
  recType: string;
  topScore: number;
  userId: string | null;
  createdAt: number;
}
interface Event {
  id: string;
  type: 'view' | 'click' | 'add_to_cart' | 'purchase';
  name: string;
  userId: string | null;
  conversion: boolean;
  requestId: string | null;
  requestType: 'search' | 'rag' | 'recommendation' | null;
  position: number | null;
  revenue: number;
  createdAt: number;
}

const searches: Search[] = [];
const rags: Rag[] = [];
const recs: Rec[] = [];
const events: Event[] = [];
/** Latest rating by rated id. */
const ratings = new Map<string, number>();
let otherSearches = 0;
const topicIds: string[] = [];

/** Runs `jobs` with at most CONCURRENCY in flight. */
async function pool<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

/**
 * Keep-alive connections for the stream: node:http costs the client about half of what fetch
 * does per request, and the client shares the machine's cores with the service it measures.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** Sends one event as `headers`' tenant; returns the id the service gave it (the TR-Event-Id header). */
function send(headers: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${stack.baseUrl}/api/analytics/events`,
      { method: 'PUT', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const id = res.headers['tr-event-id'];
          if (res.statusCode !== 204 || typeof id !== 'string' || !/^[0-9a-f-]{36}$/.test(id)) {
            reject(new Error(`event not stored: ${res.statusCode} ${text} (${payload.slice(0, 200)})`));
          } else resolve(id);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Zipf-ish pick of 0..n-1 (the head is much more frequent than the tail). */
const zipf = (r: () => number, n: number) => Math.min(n - 1, Math.floor(n * r() ** 3));

beforeAll(async () => {
  stack = await startStack();
  tenant = await createTenant(stack);
  ds = tenant.ds;
  otherDatasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey);
  dsHeaders = { authorization: tenant.ownerKey, 'tr-dataset': tenant.datasetId };
  otherHeaders = { authorization: tenant.ownerKey, 'tr-dataset': otherDatasetId };
  for (let t = 0; t < 5; t++) {
    const res = await ds.post('/api/topic', { owner_id: `owner-${t}`, name: `topic ${t}` });
    expect(res.status, res.text).toBe(200);
    topicIds.push(res.body.id);
  }

  const r = rng(15);
  const users = Array.from({ length: 500 }, (_, i) => `user-${i}`);
  const queries = Array.from({ length: 120 }, (_, i) => `query ${i}`);
  const user = () => (r() < 0.1 ? null : users[zipf(r, users.length)]!);
  const n = (share: number) => Math.round(EVENTS * share);

  // Phase 1: the requests (searches, recommendations, RAG answers) that later events link to.
  const searchPlan = Array.from({ length: n(0.45) }, () => {
    const resultCount = r() < 0.15 ? 0 : 1 + Math.floor(r() * 5);
    const kinds = ['search', 'search', 'search', 'autocomplete', 'search_over_groups'];
    const filterField = r() < 0.2 ? (r() < 0.5 ? 'tag_set' : 'metadata.color') : null;
    return {
      query: queries[zipf(r, queries.length)]!,
      kind: kinds[Math.floor(r() * kinds.length)]!,
      latency: Math.round(r() * 2000) / 10,
      topScore: resultCount === 0 ? 0 : Math.round(r() * 1000) / 1000,
      resultCount,
      userId: user(),
      component: r() < 0.5 ? 'search-bar' : 'search-page',
      filterField,
      createdAt: 0,
      id: '',
    };
  });
  const ragPlan = Array.from({ length: n(0.05) }, () => ({
    message: `question ${zipf(r, 40)}`,
    ragType: r() < 0.7 ? 'chosen_chunks' : 'all_chunks',
    topicId: r() < 0.6 ? topicIds[Math.floor(r() * topicIds.length)]! : null,
    userId: user(),
    topScore: Math.round(r() * 1000) / 1000,
    createdAt: 0,
    id: '',
  }));
  const recPlan = Array.from({ length: n(0.05) }, () => ({
    recType: r() < 0.8 ? 'Chunk' : 'Group',
    topScore: Math.round(r() * 1000) / 1000,
    userId: user(),
    createdAt: 0,
    id: '',
  }));
  const ids = await pool<string>([
    ...searchPlan.map((s) => () =>
      send(dsHeaders, {
        event_type: 'search',
        query: s.query,
        tokens: s.query.split(' ').length,
        search_type: s.kind,
        latency: s.latency,
        top_score: s.topScore,
        results: Array.from({ length: s.resultCount }, (_, i) => ({ id: `chunk-${i}`, score: s.topScore - i / 100 })),
        request_params: s.filterField ? { filters: { must: [{ field: s.filterField, match_any: ['red'] }] } } : {},
        ...(s.userId ? { user_id: s.userId } : {}),
        metadata: { component_name: s.component },
      }),
    ),
    ...ragPlan.map((g) => () =>
      send(dsHeaders, {
        event_type: 'rag',
        user_message: g.message,
        tokens: 3,
        rag_type: g.ragType,
        ...(g.topicId ? { topic_id: g.topicId } : {}),
        results: [{ id: 'chunk-0', score: g.topScore }],
        llm_response: 'an answer',
        ...(g.userId ? { user_id: g.userId } : {}),
        metadata: { component_name: 'chat' },
      }),
    ),
    ...recPlan.map((c) => () =>
      send(dsHeaders, {
        event_type: 'recommendation',
        recommendation_type: c.recType,
        positive_ids: ['00000000-0000-4000-8000-000000000001'],
        results: [{ id: 'chunk-0', score: c.topScore }],
        top_score: c.topScore,
        ...(c.userId ? { user_id: c.userId } : {}),
      }),
    ),
  ]);
  searchPlan.forEach((s, i) => (s.id = ids[i]!));
  ragPlan.forEach((g, i) => (g.id = ids[searchPlan.length + i]!));
  recPlan.forEach((c, i) => (c.id = ids[searchPlan.length + ragPlan.length + i]!));
  searches.push(...searchPlan);
  rags.push(...ragPlan);
  recs.push(...recPlan);
  // A few searches of another dataset of the organization (the top report, and isolation).
  otherSearches = 37;
  await pool(Array.from({ length: otherSearches }, () => () => send(otherHeaders, { event_type: 'search', query: 'elsewhere', tokens: 1 })));

  // Phase 2: ratings and user events, many linked to phase 1's requests.
  const pickRequest = (): { id: string; type: 'search' | 'rag' | 'recommendation' } => {
    const x = r();
    if (x < 0.8) return { id: searches[Math.floor(r() * searches.length)]!.id, type: 'search' };
    if (x < 0.9) return { id: rags[Math.floor(r() * rags.length)]!.id, type: 'rag' };
    return { id: recs[Math.floor(r() * recs.length)]!.id, type: 'recommendation' };
  };
  const ratingPlan = Array.from({ length: n(0.03) }, () => {
    const search = r() < 0.8;
    const id = search ? searches[Math.floor(r() * searches.length)]!.id : rags[Math.floor(r() * rags.length)]!.id;
    return { search, id, rating: Math.floor(r() * 7) - 2 };
  });
  // Ratings of one query go in order (the latest wins), so they are sent one query at a time.
  const byQuery = new Map<string, typeof ratingPlan>();
  for (const p of ratingPlan) {
    const list = byQuery.get(p.id);
    if (list) list.push(p);
    else byQuery.set(p.id, [p]);
  }
  const eventPlan: Omit<Event, 'id' | 'createdAt'>[] = [];
  const rest = EVENTS - searches.length - rags.length - recs.length - ratingPlan.length;
  for (let i = 0; i < rest; i++) {
    const x = r();
    const linked = r() < 0.85 ? pickRequest() : null;
    const base = { userId: user(), requestId: linked?.id ?? null, requestType: linked?.type ?? null, position: null, revenue: 0 };
    if (x < 0.45) eventPlan.push({ ...base, type: 'view', name: 'product view', conversion: false });
    else if (x < 0.8) eventPlan.push({ ...base, type: 'click', name: 'result click', conversion: r() < 0.3, position: 1 + Math.floor(r() * 10) });
    else if (x < 0.92) eventPlan.push({ ...base, type: 'add_to_cart', name: 'add to cart', conversion: true });
    else eventPlan.push({ ...base, type: 'purchase', name: 'checkout', conversion: true, revenue: Math.round(r() * 20000) / 100 });
  }
  await pool([
    ...[...byQuery.values()].map((list) => async () => {
      for (const p of list) {
        const res = await ds.put(p.search ? '/api/analytics/search' : '/api/analytics/rag', { query_id: p.id, rating: p.rating });
        expect(res.status, res.text).toBe(204);
        ratings.set(p.id, p.rating);
      }
      return '';
    }),
  ]);
  const eventIds = await pool(
    eventPlan.map((e) => () => {
      const request = e.requestId ? { request: { request_type: e.requestType, request_id: e.requestId } } : {};
      const who = e.userId ? { user_id: e.userId } : {};
      if (e.type === 'view') return send(dsHeaders, { event_type: 'view', event_name: e.name, items: ['item-1', 'item-2'], ...request, ...who });
      if (e.type === 'click') {
        return send(dsHeaders, { event_type: 'click', event_name: e.name, clicked_items: { chunk_id: CLICKED_CHUNK, position: e.position }, is_conversion: e.conversion, ...request, ...who });
      }
      if (e.type === 'add_to_cart') return send(dsHeaders, { event_type: 'add_to_cart', event_name: e.name, items: ['item-1'], ...request, ...who });
      return send(dsHeaders, { event_type: 'purchase', event_name: e.name, items: [{ tracking_id: 'sku-1', revenue: e.revenue }], ...request, ...who });
    }),
  );
  eventPlan.forEach((e, i) => events.push({ ...e, id: eventIds[i]!, createdAt: 0 }));

  // When the service stamped each record: read back by id.
  const stamps = new Map<string, number>();
  for (const table of ['search_queries', 'rag_queries', 'recommendation_queries', 'user_events']) {
    for (const row of await queryStore<{ id: string; created_at: number }>(stack, `SELECT id, created_at FROM ${table} WHERE dataset_id = ?`, tenant.datasetId)) {
      stamps.set(row.id, Number(row.created_at));
    }
  }
  for (const list of [searches, rags, recs, events] as { id: string; createdAt: number }[][]) {
    for (const x of list) {
      const at = stamps.get(x.id);
      expect(at, `record ${x.id} is stored`).toBeDefined();
      x.createdAt = at!;
    }
  }
}, 900_000);

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
});

// ---- the oracle's arithmetic ----

const MINUTE = 60_000;
const HOUR = 3_600_000;
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
/** Points per minute (or `period`) bucket of `value` over `items`, oldest first (only non-empty buckets). */
function perMinute<T extends { createdAt: number }>(items: T[], value: (inBucket: T[]) => number, period = MINUTE) {
  const buckets = new Map<number, T[]>();
  for (const x of items) {
    const b = Math.floor(x.createdAt / period) * period;
    const list = buckets.get(b);
    if (list) list.push(x);
    else buckets.set(b, [x]);
  }
  return [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([b, xs]) => ({ time_stamp: stamp(b), point: value(xs) }));
}
const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
/** Events by the request they link to (built once the stream is in). */
let byRequest: Map<string, Event[]> | null = null;
const linkedTo = (id: string): Event[] => {
  if (!byRequest) {
    byRequest = new Map();
    for (const e of events) if (e.requestId !== null) byRequest.set(e.requestId, [...(byRequest.get(e.requestId) ?? []), e]);
  }
  return byRequest.get(id) ?? [];
};
const hasClick = (id: string) => linkedTo(id).some((e) => e.type === 'click');
const converts = (id: string) => linkedTo(id).some((e) => e.conversion);
const ctr = (ids: string[]) => (ids.length === 0 ? 0 : ids.filter(hasClick).length / ids.length);
const conversion = (ids: string[]) => (ids.length === 0 ? 0 : ids.filter(converts).length / ids.length);
/** Nearest-rank percentile. */
const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.ceil(p * sorted.length) - 1]!;
};
/** Compares points allowing float rounding. */
function expectPoints(actual: { time_stamp: string; point: number }[], expected: { time_stamp: string; point: number }[]) {
  expect(actual.map((p) => p.time_stamp)).toEqual(expected.map((p) => p.time_stamp));
  actual.forEach((p, i) => expect(p.point).toBeCloseTo(expected[i]!.point, 6));
}
const countBy = <T>(xs: T[], key: (x: T) => string) => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1);
  return m;
};
/** The first `limit` of [key, count] by count desc, then key asc. */
const topCounts = (m: Map<string, number>, limit = 10) =>
  [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, limit);
const userRate = <T extends { userId: string | null }>(xs: T[]) => {
  const withUser = xs.filter((x) => x.userId !== null);
  const distinct = new Set(withUser.map((x) => x.userId)).size;
  return distinct === 0 ? 0 : withUser.length / distinct;
};

const searchReport = async (body: Record<string, unknown>) => {
  const res = await ds.post('/api/analytics/search', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const ragReport = async (body: Record<string, unknown>) => {
  const res = await ds.post('/api/analytics/rag', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const recReport = async (body: Record<string, unknown>) => {
  const res = await ds.post('/api/analytics/recommendations', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const ctrReport = async (body: Record<string, unknown>) => {
  const res = await ds.post('/api/analytics/events/ctr', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
};

describe('search reports against the stream', () => {
  it('usage and latency graphs, per minute', async () => {
    const usage = await searchReport({ type: 'search_usage_graph', granularity: 'minute' });
    expect(usage.total_searches).toBe(searches.length);
    expectPoints(usage.points, perMinute(searches, (xs) => xs.length));
    const latency = await searchReport({ type: 'latency_graph', granularity: 'minute' });
    expectPoints(latency.points, perMinute(searches, (xs) => mean(xs.map((s) => s.latency))));
  });

  it('search metrics: count, latency mean and nearest-rank percentiles, rating shares', async () => {
    const m = await searchReport({ type: 'search_metrics' });
    const latencies = searches.map((s) => s.latency);
    expect(m.total_queries).toBe(searches.length);
    expect(m.avg_latency).toBeCloseTo(mean(latencies), 6);
    // Served by the search rollups: percentiles from their latency histogram, within its
    // documented relative error of the exact nearest-rank latency (0.005 ms below 0.01 ms).
    for (const [got, p] of [
      [m.p50, 0.5],
      [m.p95, 0.95],
      [m.p99, 0.99],
    ] as const) {
      const exact = percentile(latencies, p);
      expect(Math.abs(got - exact), `p${p * 100}: ${got} for ${exact}`).toBeLessThanOrEqual(LATENCY_RELATIVE_ERROR * exact + 0.005 + 1e-9);
    }
    const rated = searches.filter((s) => ratings.has(s.id)).map((s) => ratings.get(s.id)!);
    expect(m.total_positive_ratings).toBeCloseTo((100 * rated.filter((x) => x >= 1).length) / rated.length, 6);
    expect(m.total_negative_ratings).toBeCloseTo((100 * rated.filter((x) => x <= 0).length) / rated.length, 6);
  });

  it('head queries, two pages, and with a component filter', async () => {
    const expected = topCounts(countBy(searches, (s) => s.query), 20).map(([query, count]) => ({ query, count }));
    const p1 = await searchReport({ type: 'head_queries', page: 1 });
    const p2 = await searchReport({ type: 'head_queries', page: 2 });
    expect([...p1.queries, ...p2.queries]).toEqual(expected);
    const bar = searches.filter((s) => s.component === 'search-bar');
    const filtered = await searchReport({ type: 'head_queries', filter: { component_name: 'search-bar' } });
    expect(filtered.queries).toEqual(topCounts(countBy(bar, (s) => s.query)).map(([query, count]) => ({ query, count })));
  });

  it('low-confidence, no-result and listed queries of one query text, in their orders', async () => {
    const q = searches[0]!.query;
    const ofQuery = searches.filter((s) => s.query === q);
    const low = ofQuery.filter((s) => s.topScore < 0.3).sort((a, b) => a.topScore - b.topScore || (a.id < b.id ? -1 : 1));
    const lowAnswer = await searchReport({ type: 'low_confidence_queries', threshold: 0.3, filter: { query: q } });
    expect(lowAnswer.queries.map((x: { id: string }) => x.id)).toEqual(low.slice(0, 10).map((s) => s.id));
    const none = ofQuery.filter((s) => s.resultCount === 0);
    const noneIds = new Set<string>();
    for (let page = 1; page <= Math.ceil(none.length / 10) + 1; page++) {
      for (const x of (await searchReport({ type: 'no_result_queries', page, filter: { query: q } })).queries) noneIds.add(x.id);
    }
    expect(noneIds).toEqual(new Set(none.map((s) => s.id)));
    const byLatency = [...ofQuery].sort((a, b) => a.latency - b.latency || (a.id < b.id ? -1 : 1));
    const listed = await searchReport({ type: 'search_queries', filter: { query: q }, sort_by: 'latency', sort_order: 'asc' });
    expect(listed.queries.map((x: { latency: number }) => x.latency)).toEqual(byLatency.slice(0, 10).map((s) => s.latency));
    const clicked = await searchReport({ type: 'search_queries', filter: { query: q }, has_clicks: true, sort_by: 'top_score', sort_order: 'desc' });
    const withClicks = ofQuery.filter((s) => hasClick(s.id)).sort((a, b) => b.topScore - a.topScore);
    expect(clicked.queries.map((x: { top_score: number }) => x.top_score)).toEqual(withClicks.slice(0, 10).map((s) => s.topScore));
  });

  it('counts by search type, and details of one search with its rating', async () => {
    const counts = await searchReport({ type: 'count_queries' });
    const expected = countBy(searches, (s) => s.kind);
    const got = new Map<string, number>();
    for (const row of counts.total_queries as { search_type: string; search_count: number }[]) got.set(row.search_type, (got.get(row.search_type) ?? 0) + row.search_count);
    expect(got).toEqual(expected);
    const rated = searches.find((s) => ratings.has(s.id))!;
    const details = await searchReport({ type: 'query_details', request_id: rated.id });
    expect(details).toMatchObject({ id: rated.id, query: rated.query, search_type: rated.kind, latency: rated.latency, top_score: rated.topScore });
    expect(details.query_rating.rating).toBe(ratings.get(rated.id));
  });

  it('popular filters: how many searches used each field', async () => {
    const answer = await searchReport({ type: 'popular_filters' });
    const expected = countBy(
      searches.filter((s) => s.filterField !== null),
      (s) => s.filterField!,
    );
    const got = new Map<string, number>();
    for (const f of answer.popular_filters as { field: string; clause: string; filter_type: string; count: number }[]) {
      expect(f.clause).toBe('must');
      expect(f.filter_type).toBe('match_any');
      got.set(f.field, f.count);
    }
    expect(got).toEqual(expected);
  });

  it('click-through, conversion, searches per user, average rating, funnel, revenue', async () => {
    const ids = searches.map((s) => s.id);
    const c = await searchReport({ type: 'ctr_metrics_over_time', granularity: 'minute' });
    expect(c.total_ctr).toBeCloseTo(ctr(ids), 6);
    expectPoints(c.points, perMinute(searches, (xs) => ctr(xs.map((s) => s.id))));
    const conv = await searchReport({ type: 'search_conversion_rate', granularity: 'minute' });
    expect(conv.conversion_rate).toBeCloseTo(conversion(ids), 6);
    expectPoints(conv.points, perMinute(searches, (xs) => conversion(xs.map((s) => s.id))));
    const perUser = await searchReport({ type: 'searches_per_user', granularity: 'minute' });
    expect(perUser.avg_searches_per_user).toBeCloseTo(userRate(searches), 6);
    // Hours (the default) are whole rows of the per-user rollups: the sets of users, not the searches.
    const perUserHourly = await searchReport({ type: 'searches_per_user' });
    expect(perUserHourly.avg_searches_per_user).toBeCloseTo(userRate(searches), 6);
    expectPoints(perUserHourly.points, perMinute(searches.filter((s) => s.userId !== null), userRate, HOUR));
    const rating = await searchReport({ type: 'search_average_rating', granularity: 'minute' });
    expect(rating.avg_search_rating).toBeCloseTo(mean(searches.filter((s) => ratings.has(s.id)).map((s) => ratings.get(s.id)!)), 6);
    const funnel = await searchReport({ type: 'event_funnel' });
    const names = new Map<string, number>((funnel.event_names as { event_name: string; event_count: number }[]).map((e) => [e.event_name, e.event_count]));
    expect(names).toEqual(countBy(events, (e) => e.name));
    const revenue = events.filter((e) => e.type === 'purchase');
    const all = await searchReport({ type: 'search_revenue', granularity: 'minute' });
    expect(all.avg_revenue).toBeCloseTo(revenue.reduce((a, e) => a + e.revenue, 0) / searches.length, 6);
    const direct = await searchReport({ type: 'search_revenue', direct: true, granularity: 'minute' });
    const searchIds = new Set(ids);
    const directRevenue = revenue.filter((e) => e.requestId !== null && searchIds.has(e.requestId));
    expect(direct.avg_revenue).toBeCloseTo(directRevenue.reduce((a, e) => a + e.revenue, 0) / searches.length, 6);
    // Hours are whole rollup rows: the revenue graphs read the user event rollups.
    const sum = (xs: Event[]) => xs.reduce((a, e) => a + e.revenue, 0);
    expectPoints((await searchReport({ type: 'search_revenue', granularity: 'hour' })).points, perMinute(revenue, sum, HOUR));
    const directHourly = await searchReport({ type: 'search_revenue', direct: true, granularity: 'hour' });
    expect(directHourly.avg_revenue).toBeCloseTo(direct.avg_revenue, 6);
    expectPoints(directHourly.points, perMinute(directRevenue, sum, HOUR));
  });

  it('filters narrow every report alike: search type, top score, rating', async () => {
    const auto = searches.filter((s) => s.kind === 'autocomplete');
    expect((await searchReport({ type: 'search_usage_graph', filter: { search_type: 'autocomplete' } })).total_searches).toBe(auto.length);
    const confident = searches.filter((s) => s.topScore >= 0.5 && s.topScore < 0.9);
    expect((await searchReport({ type: 'search_metrics', filter: { top_score: { gte: 0.5, lt: 0.9 } } })).total_queries).toBe(confident.length);
    const liked = searches.filter((s) => (ratings.get(s.id) ?? -99) >= 2);
    expect((await searchReport({ type: 'search_metrics', filter: { query_rating: { gte: 2 } } })).total_queries).toBe(liked.length);
  });
});

describe('RAG and recommendation reports against the stream', () => {
  it('RAG usage, listing, details, ratings, click-through, conversion, revenue, per user', async () => {
    expect((await ragReport({ type: 'rag_usage' })).total_queries).toBe(rags.length);
    const graph = await ragReport({ type: 'rag_usage_graph', granularity: 'minute' });
    expectPoints(graph.points, perMinute(rags, (xs) => xs.length));
    const chosen = rags.filter((g) => g.ragType === 'all_chunks');
    expect((await ragReport({ type: 'rag_usage', filter: { rag_type: 'all_chunks' } })).total_queries).toBe(chosen.length);
    const one = rags[3]!;
    expect(await ragReport({ type: 'rag_query_details', request_id: one.id })).toMatchObject({ id: one.id, user_message: one.message, rag_type: one.ragType });
    const rated = rags.filter((g) => ratings.has(g.id)).map((g) => ratings.get(g.id)!);
    const shares = await ragReport({ type: 'rag_query_ratings' });
    expect(shares.total_positive_ratings).toBe(rated.filter((x) => x >= 1).length);
    expect(shares.total_negative_ratings).toBe(rated.filter((x) => x <= 0).length);
    expect((await ragReport({ type: 'chat_average_rating', granularity: 'minute' })).avg_chat_rating).toBeCloseTo(mean(rated), 6);
    const ids = rags.map((g) => g.id);
    expect((await ragReport({ type: 'ctr_metrics_over_time', granularity: 'minute' })).total_ctr).toBeCloseTo(ctr(ids), 6);
    expect((await ragReport({ type: 'chat_conversion_rate', granularity: 'minute' })).conversion_rate).toBeCloseTo(conversion(ids), 6);
    expect((await ragReport({ type: 'messages_per_user', granularity: 'minute' })).avg_messages_per_user).toBeCloseTo(userRate(rags), 6);
    const perUserHourly = await ragReport({ type: 'messages_per_user' });
    expect(perUserHourly.avg_messages_per_user).toBeCloseTo(userRate(rags), 6);
    expectPoints(perUserHourly.points, perMinute(rags.filter((a) => a.userId !== null), userRate, HOUR));
    const ragIds = new Set(ids);
    const linked = events.filter((e) => e.requestId !== null && ragIds.has(e.requestId));
    const funnel = await ragReport({ type: 'event_funnel' });
    expect(new Map((funnel.event_names as { event_name: string; event_count: number }[]).map((e) => [e.event_name, e.event_count]))).toEqual(
      countBy(linked, (e) => e.name),
    );
    const popular = await ragReport({ type: 'popular_chats' });
    expect(popular.top_queries).toEqual(topCounts(countBy(rags, (g) => g.message)).map(([query, count]) => ({ query, count })));
    const direct = await ragReport({ type: 'chat_revenue', direct: true, granularity: 'minute' });
    const directRevenue = linked.filter((e) => e.type === 'purchase').reduce((a, e) => a + e.revenue, 0);
    expect(direct.avg_revenue).toBeCloseTo(directRevenue / rags.length, 6);
    const directHourly = await ragReport({ type: 'chat_revenue', direct: true, granularity: 'hour' });
    expect(directHourly.avg_revenue).toBeCloseTo(direct.avg_revenue, 6);
    const linkedPurchases = linked.filter((e) => e.type === 'purchase');
    expectPoints(directHourly.points, perMinute(linkedPurchases, (xs) => xs.reduce((a, e) => a + e.revenue, 0), HOUR));
  });

  it('topics: answers per topic, follow-ups, one topic in detail, its events', async () => {
    const inTopics = rags.filter((g) => g.topicId !== null);
    const topics = await ragReport({ type: 'topic_queries' });
    const counts = new Map((topics.topics as { topic_id: string; message_count: number }[]).map((t) => [t.topic_id, t.message_count]));
    expect(counts).toEqual(countBy(inTopics, (g) => g.topicId!));
    const topic = topicIds[0]!;
    const details = await ragReport({ type: 'topic_details', topic_id: topic });
    expect(new Set(details.messages.map((m: { id: string }) => m.id))).toEqual(new Set(inTopics.filter((g) => g.topicId === topic).map((g) => g.id)));
    const answersOfTopic = new Set(inTopics.filter((g) => g.topicId === topic).map((g) => g.id));
    const topicEvents = await ragReport({ type: 'events_for_topic', topic_id: topic });
    expect(new Set(topicEvents.events.map((e: { id: string }) => e.id))).toEqual(new Set(events.filter((e) => e.requestId !== null && answersOfTopic.has(e.requestId)).map((e) => e.id)));
    // A follow-up is an answer of a topic that is not the topic's first answer.
    const firsts = new Set<string>();
    for (const id of topicIds) {
      const first = inTopics.filter((g) => g.topicId === id).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))[0];
      if (first) firsts.add(first.id);
    }
    const followups = await ragReport({ type: 'followup_queries' });
    const total = (followups.top_queries as { count: number }[]).reduce((a, q) => a + q.count, 0);
    const expectedTop = topCounts(countBy(inTopics.filter((g) => !firsts.has(g.id)), (g) => g.message));
    expect(total).toBe(expectedTop.reduce((a, [, c]) => a + c, 0));
  });

  it('recommendations: usage, per user, click-through, conversion, low confidence, details, funnel', async () => {
    const usage = await recReport({ type: 'recommendation_usage_graph', granularity: 'minute' });
    expect(usage.total_requests).toBe(recs.length);
    expectPoints(usage.points, perMinute(recs, (xs) => xs.length));
    expect((await recReport({ type: 'recommendations_per_user', granularity: 'minute' })).avg_recommendations_per_user).toBeCloseTo(userRate(recs), 6);
    const perUserHourly = await recReport({ type: 'recommendations_per_user' });
    expect(perUserHourly.avg_recommendations_per_user).toBeCloseTo(userRate(recs), 6);
    expectPoints(perUserHourly.points, perMinute(recs.filter((r) => r.userId !== null), userRate, HOUR));
    const ids = recs.map((c) => c.id);
    expect((await recReport({ type: 'recommendations_ctr_rate', granularity: 'minute' })).total_ctr).toBeCloseTo(ctr(ids), 6);
    expect((await recReport({ type: 'recommendation_conversion_rate', granularity: 'minute' })).conversion_rate).toBeCloseTo(conversion(ids), 6);
    const groups = recs.filter((c) => c.recType === 'Group');
    const low = groups.filter((c) => c.topScore < 0.2).sort((a, b) => a.topScore - b.topScore || (a.id < b.id ? -1 : 1));
    const lowAnswer = await recReport({ type: 'low_confidence_recommendations', threshold: 0.2, filter: { recommendation_type: 'Group' } });
    expect(lowAnswer.queries.map((x: { id: string }) => x.id)).toEqual(low.slice(0, 10).map((c) => c.id));
    expect(await recReport({ type: 'query_details', request_id: recs[5]!.id })).toMatchObject({ id: recs[5]!.id, recommendation_type: recs[5]!.recType });
    const listed = await recReport({ type: 'recommendation_queries', filter: { recommendation_type: 'Group' }, sort_by: 'top_score', sort_order: 'desc' });
    expect(listed.queries.map((x: { top_score: number }) => x.top_score)).toEqual([...groups].sort((a, b) => b.topScore - a.topScore).slice(0, 10).map((c) => c.topScore));
    const recIds = new Set(ids);
    const funnel = await recReport({ type: 'event_funnel' });
    expect(new Map((funnel.event_names as { event_name: string; event_count: number }[]).map((e) => [e.event_name, e.event_count]))).toEqual(
      countBy(events.filter((e) => e.requestId !== null && recIds.has(e.requestId)), (e) => e.name),
    );
  });
});

describe('click-through reports, top datasets and the event listing against the stream', () => {
  it('search and recommendation click-through metrics and listings', async () => {
    const ids = searches.map((s) => s.id);
    const idSet = new Set(ids);
    const clicks = events.filter((e) => e.type === 'click' && e.requestId !== null && idSet.has(e.requestId));
    const m = await ctrReport({ type: 'search_ctr_metrics' });
    const withClicks = ids.filter(hasClick).length;
    expect(m.searches_with_clicks).toBe(withClicks);
    expect(m.percent_searches_with_clicks).toBeCloseTo((100 * withClicks) / ids.length, 6);
    expect(m.percent_searches_without_clicks).toBeCloseTo((100 * (ids.length - withClicks)) / ids.length, 6);
    expect(m.avg_position_of_click).toBeCloseTo(mean(clicks.map((e) => e.position!)), 6);
    const page = await ctrReport({ type: 'searches_with_clicks', page: 1 });
    for (const s of page.queries as { request_id: string }[]) expect(hasClick(s.request_id)).toBe(true);
    const without = await ctrReport({ type: 'searches_without_clicks', page: 1 });
    for (const s of without.queries as { request_id: string }[]) expect(hasClick(s.request_id)).toBe(false);
    const recIds = recs.map((c) => c.id);
    const r = await ctrReport({ type: 'recommendation_ctr_metrics' });
    expect(r.recommendations_with_clicks).toBe(recIds.filter(hasClick).length);
  });

  it('top datasets of the organization by searches', async () => {
    const res = await tenant.org.post('/api/analytics/top', { type: 'search' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((d: { dataset_id: string; total_queries: number }) => [d.dataset_id, d.total_queries])).toEqual([
      [tenant.datasetId, searches.length],
      [otherDatasetId, otherSearches],
    ]);
  });

  it('lists the events of one user, all pages, newest first', async () => {
    const someone = events.find((e) => e.userId !== null)!.userId!;
    const mine = events.filter((e) => e.userId === someone);
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const res = await ds.post('/api/analytics/events/all', { page, filter: { user_id: someone } });
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.events.map((e: { id: string }) => e.id));
      if (res.body.events.length < 10) break;
    }
    expect(new Set(seen)).toEqual(new Set(mine.map((e) => e.id)));
    expect(seen.length).toBe(mine.length);
  });
});
