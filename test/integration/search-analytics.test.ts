/**
 * Search analytics reports (`POST /api/analytics/search`) and ratings (`PUT /api/analytics/search`,
 * `PUT /api/analytics/rag`) against the real processes. A few thousand searches, RAG answers and
 * user events are written straight into the stack's store (the routes that write them belong to
 * other modules), ratings go through the PUT routes, and a handful of real searches go through
 * `POST /api/chunk/search` and the recorder. Every report variant is then compared, under several
 * filters, granularities, pages and sorts, with the same figure computed here from the rows the
 * test wrote (the oracle).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedResult, SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { UserEvent } from '../../core/domain/user-events.js';
import { LATENCY_RELATIVE_ERROR } from '../../store/latency-histogram.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/repository.js';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { rng } from '../helpers/random-corpus.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { userEvent } from '../helpers/user-event.js';

let stack: Stack;
let store: Store;
let t: Tenant;
/** A second dataset of the same organization: its rows must never show in the first one's reports. */
let other: Client;
let otherId: string;

// ---------- seeded data ----------

/** The same rows on every run. */
const rnd = rng(15);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
/** Skewed towards the first items (so head queries have clear counts, with some ties further down). */
const pickSkewed = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * rnd() * xs.length)]!;

const KINDS: readonly SearchKind[] = ['search', 'search', 'search', 'autocomplete', 'search_over_groups', 'search_within_groups'];
const METHODS = ['semantic', 'fulltext', 'hybrid', 'bm25'] as const;
const QUERIES = Array.from({ length: 40 }, (_, i) => `query ${String.fromCharCode(97 + (i % 26))}${i}`);
const COMPONENTS = ['search-bar', 'sidebar', 'modal'];
const FIELDS = ['tag_set', 'num_value', 'metadata.brand', 'metadata.color', 'time_stamp', 'location', 'metadata.in_stock'];

/** Start of the seeded window: searches spread over ~100 days, across four calendar months. */
const BASE = Date.UTC(2025, 0, 5, 3, 0, 0);
const SPAN = 100 * 86_400_000;
const N_SEARCHES = 3000;

/** A filter condition of one kind on `field`, with values drawn from small pools (so they repeat). */
function condition(): Record<string, unknown> {
  const field = pick(FIELDS);
  switch (Math.floor(rnd() * 8)) {
    case 0:
      return { field, match_any: [pick(['red', 'blue', 'green', 'black']), pick(['a', 'b', 'c'])] };
    case 1:
      return { field, match_all: [pick([1, 2, 3, 4, 5])] };
    case 2:
      return { field, range: { gte: pick([0, 10, 20]), lt: pick([50, 100]) } };
    case 3:
      return { field, date_range: { gte: pick(['2024-01-01 00:00:00', '2024-06-01 00:00:00']) } };
    case 4:
      return { field, boolean: rnd() < 0.5 };
    case 5:
      return { field, geo_radius: { center: { lat: pick([1, 2]), lon: 3 }, radius: 10 } };
    case 6:
      return { field, geo_bounding_box: { top_left: { lat: 10, lon: 0 }, bottom_right: { lat: 0, lon: pick([10, 20]) } } };
    default:
      return { tracking_ids: [pick(['t1', 't2', 't3'])] };
  }
}

function filtersParam(): Record<string, unknown> | undefined {
  if (rnd() < 0.45) return undefined;
  const f: Record<string, unknown> = {};
  for (const clause of ['must', 'should', 'must_not']) {
    if (rnd() < 0.5) f[clause] = Array.from({ length: 1 + Math.floor(rnd() * 2) }, condition);
  }
  return f;
}

function seededSearch(datasetId: string): SearchRecord {
  const method = pick(METHODS);
  const query = pickSkewed(QUERIES);
  const resultCount = rnd() < 0.12 ? 0 : 1 + Math.floor(rnd() * 8);
  const topScore = resultCount === 0 ? 0 : Math.round(rnd() * 1e6) / 1e6;
  const results: RecordedResult[] = Array.from({ length: Math.min(resultCount, 3) }, (_, i) => ({ id: randomUUID(), score: topScore / (i + 1) }));
  const filters = filtersParam();
  const userId = rnd() < 0.2 ? null : `user-${Math.floor(rnd() * 60)}`;
  const component = rnd() < 0.3 ? null : pick(COMPONENTS);
  return {
    id: randomUUID(),
    datasetId,
    kind: pick(KINDS),
    searchMethod: method,
    query,
    requestParams: { query, search_type: method, page_size: 10, ...(filters ? { filters } : {}), ...(userId ? { user_id: userId } : {}) },
    latencyMs: Math.round((1 + rnd() * 400) * 1000) / 1000,
    topScore,
    results,
    resultCount,
    userId,
    metadata: component === null ? (rnd() < 0.5 ? null : { page: 'home' }) : { component_name: component, n: 1 },
    createdAt: BASE + Math.floor(rnd() * SPAN),
  };
}

/** A user event of the first dataset (or `datasetId`), linked to `requestId` when given. */
function event(over: Partial<UserEvent> & Pick<UserEvent, 'eventType' | 'createdAt'>, datasetId = t.datasetId): UserEvent {
  return userEvent({ datasetId, ...over });
}

/** A rating as the oracle keeps it (the latest sent for a search). */
interface Rating {
  rating: number;
  note: string | null;
  metadata: unknown;
}

const searches: SearchRecord[] = [];
const events: UserEvent[] = [];
const ratings = new Map<string, Rating>();
const rags: RagRecord[] = [];
let otherSearches: SearchRecord[] = [];
/** Ids of the searches sent through POST /api/chunk/search. */
const liveIds: string[] = [];

// ---------- the oracle ----------

/** A `SearchAnalyticsFilter` as sent on the wire (dates as ISO strings). */
interface WireFilter {
  date_range?: { gt?: string; gte?: string; lt?: string; lte?: string };
  search_type?: string;
  search_method?: string;
  query?: string;
  query_rating?: { gt?: number; gte?: number; lt?: number; lte?: number };
  top_score?: { gt?: number; gte?: number; lt?: number; lte?: number };
  component_name?: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function inRange(v: number | undefined, r: { gt?: number; gte?: number; lt?: number; lte?: number } | undefined): boolean {
  if (!r) return true;
  if (v === undefined) return false;
  return (r.gt === undefined || v > r.gt) && (r.gte === undefined || v >= r.gte) && (r.lt === undefined || v < r.lt) && (r.lte === undefined || v <= r.lte);
}

function dateBounds(f: WireFilter | undefined): { gt?: number; gte?: number; lt?: number; lte?: number } | undefined {
  const d = f?.date_range;
  if (!d) return undefined;
  const ms = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s));
  return { gt: ms(d.gt), gte: ms(d.gte), lt: ms(d.lt), lte: ms(d.lte) };
}

const METHOD_ALIASES: Record<string, string> = { full_text: 'fulltext', BM25: 'bm25' };

function matches(s: SearchRecord, f: WireFilter = {}): boolean {
  const meta = s.metadata as Record<string, unknown> | null;
  return (
    inRange(s.createdAt, dateBounds(f)) &&
    (f.search_type === undefined || s.kind === f.search_type) &&
    (f.search_method === undefined || s.searchMethod === (METHOD_ALIASES[f.search_method] ?? f.search_method)) &&
    (f.query === undefined || s.query === f.query) &&
    inRange(ratings.get(s.id)?.rating, f.query_rating) &&
    inRange(s.topScore, f.top_score) &&
    (f.component_name === undefined || meta?.component_name === f.component_name)
  );
}

const selected = (f?: WireFilter): SearchRecord[] => searches.filter((s) => matches(s, f));

const GRAN_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
function bucketOf(ms: number, granularity = 'hour'): number {
  if (granularity === 'month') {
    const d = new Date(ms);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  return Math.floor(ms / GRAN_MS[granularity]!) * GRAN_MS[granularity]!;
}
const stamp = (ms: number): string => iso(ms).slice(0, 19).replace('T', ' ');

/** Groups `items` by bucket of `at(item)`, oldest first, and reduces each group to a point. */
function series<T>(items: readonly T[], at: (x: T) => number, granularity: string | undefined, point: (group: T[]) => number) {
  const groups = new Map<number, T[]>();
  for (const x of items) {
    const b = bucketOf(at(x), granularity);
    let g = groups.get(b);
    if (!g) groups.set(b, (g = []));
    g.push(x);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([b, g]) => ({ time_stamp: stamp(b), point: point(g) }));
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);
const clicksByRequest = (): Set<string> => new Set(events.filter((e) => e.eventType === 'click' && e.datasetId === t.datasetId).map((e) => e.requestId!));
const conversionsByRequest = (): Set<string> => new Set(events.filter((e) => e.isConversion && e.datasetId === t.datasetId).map((e) => e.requestId!));
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** The 1-based nearest rank: ceil(pct/100 · n) (pct · n is an integer, so the division rounds correctly). */
const nearestRank = (pct: number, n: number): number => Math.max(1, Math.ceil((pct * n) / 100));
/** JSON with object keys sorted (how the report keys object values, the same on both engines). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** A search as `SearchQueryEvent`. */
function wireEvent(s: SearchRecord): Record<string, unknown> {
  const r = ratings.get(s.id);
  return {
    id: s.id,
    search_type: s.kind,
    query: s.query,
    request_params: s.requestParams,
    latency: s.latencyMs,
    top_score: s.topScore,
    results: s.results,
    dataset_id: s.datasetId,
    created_at: stamp(s.createdAt),
    query_rating: r ? { rating: r.rating, note: r.note, metadata: r.metadata } : null,
    user_id: s.userId ?? '',
    metadata: s.metadata,
  };
}

const page = <T>(xs: readonly T[], p = 1): T[] => xs.slice((Math.max(1, p) - 1) * 10, Math.max(1, p) * 10);

// ---------- calls ----------

async function report(body: Record<string, unknown>): Promise<any> {
  const res = await t.ds.post('/api/analytics/search', body);
  expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(200);
  return res.body;
}

/** Points compared by time stamp exactly and value to 6 decimals (engines sum floats in their own order). */
function expectPoints(actual: { time_stamp: string; point: number }[], expected: { time_stamp: string; point: number }[]): void {
  expect(actual.map((p) => p.time_stamp)).toEqual(expected.map((p) => p.time_stamp));
  actual.forEach((p, i) => expect(p.point, p.time_stamp).toBeCloseTo(expected[i]!.point, 6));
}

async function until(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}\n${stack.output().slice(-3000)}`);
}

/** Ranges used by several reports: the seeded window split in two, and the first month alone. */
const FIRST_HALF: WireFilter = { date_range: { gte: iso(BASE), lt: iso(BASE + SPAN / 2) } };
const JANUARY: WireFilter = { date_range: { gte: '2025-01-01 00:00:00', lte: '2025-01-31 23:59:59.999' } };
const SEEDED: WireFilter = { date_range: { gte: iso(BASE), lt: iso(BASE + SPAN) } };

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
  otherId = await createDataset(stack, t.orgId, t.ownerKey);
  other = t.ds.with({ 'tr-dataset': otherId });
  store = await openStore({ dataDir: stack.dataDir, databaseUrl: stack.databaseUrl });

  for (let i = 0; i < N_SEARCHES; i++) searches.push(seededSearch(t.datasetId));
  // Same shapes in the other dataset, at the same times: a report that forgets the dataset shows them.
  otherSearches = Array.from({ length: 300 }, () => seededSearch(otherId));
  expect(await store.analytics.insertSearches([...searches, ...otherSearches])).toBe(N_SEARCHES + 300);
  for (let i = 0; i < 4; i++) {
    rags.push({
      id: randomUUID(),
      datasetId: t.datasetId,
      ragType: 'all_chunks',
      userMessage: `question ${i}`,
      searchId: null,
      topicId: null,
      results: [],
      llmResponse: 'answer',
      topScore: 0,
      userId: null,
      metadata: null,
      promptTokens: 1,
      completionTokens: 1,
      latencyMs: 10,
      createdAt: BASE + i * 86_400_000,
    });
  }
  await store.analytics.insertRags(rags);

  // User events: clicks (positions), conversions, purchases with revenue (linked to searches, to
  // RAG answers, or to nothing), views and add-to-carts; some in the other dataset.
  for (const s of searches) {
    const r = rnd();
    const at = s.createdAt + Math.floor(rnd() * 3_600_000);
    if (r < 0.35) {
      for (let k = 0; k < 1 + Math.floor(rnd() * 3); k++) {
        events.push(event({ eventType: 'click', eventName: 'click', requestId: s.id, requestType: 'search', position: 1 + Math.floor(rnd() * 10), clickedChunkId: randomUUID(), isConversion: rnd() < 0.4, createdAt: at + k }));
      }
    } else if (r < 0.45) {
      events.push(event({ eventType: 'view', eventName: pick(['viewed product', 'viewed page']), items: ['x'], requestId: s.id, requestType: 'search', createdAt: at }));
    } else if (r < 0.52) {
      events.push(event({ eventType: 'add_to_cart', eventName: 'added to cart', items: ['x'], requestId: s.id, requestType: 'search', isConversion: true, createdAt: at }));
    }
    if (rnd() < 0.08) {
      const revenue = Math.round(rnd() * 10_000) / 100;
      events.push(event({ eventType: 'purchase', eventName: 'purchase', items: [JSON.stringify({ tracking_id: 'p', revenue })], requestId: s.id, requestType: 'search', isConversion: true, revenue, createdAt: at }));
    }
  }
  for (let i = 0; i < 60; i++) {
    const revenue = Math.round(rnd() * 5000) / 100;
    const rag = i % 3 === 0 ? pick(rags) : undefined;
    events.push(
      event({
        eventType: 'purchase',
        eventName: 'purchase',
        revenue,
        isConversion: true,
        requestId: rag?.id ?? (i % 3 === 1 ? randomUUID() : null),
        requestType: rag || i % 3 === 1 ? 'rag' : null,
        createdAt: BASE + Math.floor(rnd() * SPAN),
      }),
    );
  }
  // Linked across datasets (the other dataset's events naming this dataset's searches and back): never linked.
  for (let i = 0; i < 50; i++) {
    const s = searches[i]!;
    events.push(event({ eventType: 'click', eventName: 'click', requestId: s.id, requestType: 'search', position: 1, isConversion: true, createdAt: s.createdAt }, otherId));
    events.push(event({ eventType: 'click', eventName: 'stray click', requestId: otherSearches[i]!.id, requestType: 'search', position: 2, createdAt: s.createdAt }));
    events.push(event({ eventType: 'purchase', eventName: 'purchase', revenue: 1000, isConversion: true, requestId: s.id, requestType: 'search', createdAt: s.createdAt }, otherId));
    events.push(event({ eventType: 'purchase', eventName: 'stray purchase', revenue: 7, isConversion: true, requestId: otherSearches[i]!.id, requestType: 'search', createdAt: s.createdAt }));
  }
  expect(await store.userEvents.insertMany(events)).toBe(events.length);

  // Ratings through the routes: some searches rated twice (the latest wins), notes and metadata on some.
  const rated = searches.filter(() => rnd() < 0.07);
  const sends: { id: string; body: Record<string, unknown> }[] = [];
  for (const s of rated) {
    const body: Record<string, unknown> = { query_id: s.id, rating: Math.floor(rnd() * 7) - 2 };
    if (rnd() < 0.3) body.note = `note for ${s.query}`;
    if (rnd() < 0.3) body.metadata = { reason: pick(['good', 'bad']), n: 1 };
    sends.push({ id: s.id, body });
  }
  const again: typeof sends = rated.slice(0, 20).map((s) => ({ id: s.id, body: { query_id: s.id, rating: 5, note: 'changed my mind' } }));
  // Twelve at a time; the second ratings only once the first have answered (204 = committed).
  for (const round of [sends, again]) {
    for (let i = 0; i < round.length; i += 12) {
      await Promise.all(
        round.slice(i, i + 12).map(async ({ id, body }) => {
          const res = await t.ds.put('/api/analytics/search', body);
          expect(res.status, res.text).toBe(204);
          ratings.set(id, { rating: body.rating as number, note: (body.note as string | undefined) ?? null, metadata: body.metadata ?? null });
        }),
      );
    }
  }
  // A RAG rating of a RAG answer and ratings of the other dataset's searches: no search of this dataset's.
  expect((await t.ds.put('/api/analytics/rag', { query_id: rags[0]!.id, rating: -1 })).status).toBe(204);
  for (const res of await Promise.all(otherSearches.slice(0, 40).map((s) => other.put('/api/analytics/search', { query_id: s.id, rating: 1 })))) expect(res.status).toBe(204);
  // A rating of this dataset's search sent to the other dataset: not this search's rating.
  expect((await other.put('/api/analytics/search', { query_id: searches.find((s) => !ratings.has(s.id))!.id, rating: 1 })).status).toBe(204);

  // Real searches through the service and its recorder.
  const chunks = await t.ds.post(
    '/api/chunk',
    Array.from({ length: 12 }, (_, i) => ({ tracking_id: `c${i}`, chunk_html: `aspirin study ${i} fever`, tag_set: [`t${i % 3}`] })),
  );
  expect(chunks.status, chunks.text).toBe(200);
  const bodies = [
    { search_type: 'bm25', query: 'aspirin', user_id: 'live-user', metadata: { component_name: 'live' } },
    { search_type: 'bm25', query: 'aspirin', user_id: 'live-user', metadata: { component_name: 'live' }, filters: { must: [{ field: 'tag_set', match_any: ['t1'] }] } },
    { search_type: 'fulltext', query: 'fever study', metadata: { component_name: 'live' } },
    { search_type: 'BM25', query: 'nothingmatcheswhatsoever', user_id: 'live-user-2', metadata: { component_name: 'live' } },
    { search_type: 'bm25', query: 'aspirin', metadata: { component_name: 'live' }, filters: { must_not: [{ field: 'tag_set', match_all: ['t2'] }] } },
  ];
  for (const b of bodies) {
    const res = await t.ds.post('/api/chunk/search', b);
    expect(res.status, res.text).toBe(200);
    liveIds.push(res.body.id);
  }
  const read = () => queryStore<Record<string, any>>(stack, `SELECT * FROM search_queries WHERE dataset_id = ? AND id IN (${liveIds.map(() => '?').join(', ')})`, t.datasetId, ...liveIds);
  await until('the live searches recorded', async () => (await read()).length === liveIds.length, 30_000);
  for (const r of await read()) {
    searches.push({
      id: r.id,
      datasetId: r.dataset_id,
      kind: r.search_type,
      searchMethod: r.search_method,
      query: r.query,
      requestParams: JSON.parse(r.request_params),
      latencyMs: r.latency,
      topScore: r.top_score,
      results: JSON.parse(r.results),
      resultCount: r.result_count,
      userId: r.user_id,
      metadata: r.metadata === null ? null : JSON.parse(r.metadata),
      createdAt: r.created_at,
    });
  }
}, 120_000);

afterAll(async () => {
  await store?.close();
  await stack?.stop();
});

const LIVE: WireFilter = { component_name: 'live' };

describe('POST /api/analytics/search', () => {
  it('latency_graph and search_usage_graph: a point per non-empty bucket', async () => {
    for (const [filter, granularity] of [
      [SEEDED, undefined],
      [FIRST_HALF, 'day'],
      [{}, 'month'],
      [{ ...SEEDED, search_type: 'autocomplete', component_name: 'sidebar' }, 'day'],
      [{ ...JANUARY, search_method: 'full_text' }, 'minute'],
    ] as const) {
      const rows = selected(filter);
      expect(rows.length).toBeGreaterThan(0);
      const latency = await report({ type: 'latency_graph', filter, granularity });
      expectPoints(latency.points, series(rows, (s) => s.createdAt, granularity, (g) => g.reduce((a, s) => a + s.latencyMs, 0) / g.length));
      const usage = await report({ type: 'search_usage_graph', filter, granularity });
      expect(usage.total_searches).toBe(rows.length);
      expectPoints(usage.points, series(rows, (s) => s.createdAt, granularity, (g) => g.length));
    }
    // Nothing matches: no points.
    expect(await report({ type: 'latency_graph', filter: { query: 'never searched' } })).toEqual({ points: [] });
    expect(await report({ type: 'search_usage_graph', filter: { query: 'never searched' }, granularity: 'day' })).toEqual({ total_searches: 0, points: [] });
  });

  it('search_metrics: count, latency average and nearest-rank percentiles, rating shares', async () => {
    // The oldest n seeded searches: sizes where p·n/100 is an integer (and one where it is not), so an off-by-one rank shows.
    const byTime = [...searches].sort((a, b) => a.createdAt - b.createdAt);
    const oldest = (n: number): WireFilter => ({ date_range: { gte: iso(byTime[0]!.createdAt), lt: iso(byTime[n]!.createdAt) } });
    for (const n of [200, 20, 7]) expect(byTime[n]!.createdAt).toBeGreaterThan(byTime[n - 1]!.createdAt);
    for (const filter of [{}, SEEDED, oldest(200), oldest(20), oldest(7), { ...FIRST_HALF, search_method: 'bm25' }, { query_rating: { gte: 1 } }, { top_score: { gt: 0.2, lte: 0.7 }, search_type: 'search' }, LIVE] as WireFilter[]) {
      const rows = selected(filter);
      const lat = rows.map((s) => s.latencyMs).sort((a, b) => a - b);
      const rated = rows.filter((s) => ratings.has(s.id));
      const at = (pct: number) => lat[nearestRank(pct, lat.length) - 1]!;
      const got = await report({ type: 'search_metrics', filter });
      expect(got.total_queries, JSON.stringify(filter)).toBe(rows.length);
      expect(got.avg_latency).toBeCloseTo(lat.reduce((a, b) => a + b, 0) / lat.length, 6);
      // Narrowed by date, type and method only, the rollups answer: percentiles from their latency
      // histogram, within its relative error (0.005 ms below 0.01 ms); otherwise exact.
      if (['query', 'query_rating', 'top_score', 'component_name'].some((k) => k in filter)) expect([got.p99, got.p95, got.p50]).toEqual([at(99), at(95), at(50)]);
      else for (const pct of [99, 95, 50] as const) expect(Math.abs(got[`p${pct}`] - at(pct))).toBeLessThanOrEqual(LATENCY_RELATIVE_ERROR * at(pct) + 0.005 + 1e-9);
      expect(got.total_positive_ratings).toBeCloseTo(ratio(100 * rated.filter((s) => ratings.get(s.id)!.rating >= 1).length, rated.length), 9);
      expect(got.total_negative_ratings).toBeCloseTo(ratio(100 * rated.filter((s) => ratings.get(s.id)!.rating <= 0).length, rated.length), 9);
    }
    expect(await report({ type: 'search_metrics', filter: { query: 'never searched' } })).toEqual({
      total_queries: 0,
      avg_latency: 0,
      p99: 0,
      p95: 0,
      p50: 0,
      total_positive_ratings: 0,
      total_negative_ratings: 0,
    });
  });

  it('head_queries: most searched texts, ties by text, 10 a page', async () => {
    for (const [filter, p] of [
      [{}, 1],
      [{}, 2],
      [{}, 0],
      [{ search_type: 'search', ...FIRST_HALF }, 3],
      [{}, 40],
    ] as const) {
      const counts = new Map<string, number>();
      for (const s of selected(filter)) counts.set(s.query, (counts.get(s.query) ?? 0) + 1);
      const expected = [...counts].sort((a, b) => b[1] - a[1] || byText(a[0], b[0])).map(([query, count]) => ({ query, count }));
      expect(await report({ type: 'head_queries', filter, page: p })).toEqual({ queries: page(expected, p) });
    }
  });

  it('low_confidence_queries, no_result_queries and search_queries list SearchQueryEvents', async () => {
    for (const [filter, threshold, p] of [
      [SEEDED, 0.3, 1],
      [SEEDED, 0.3, 2],
      [{ search_method: 'semantic' }, undefined, 1],
      [{ component_name: 'modal', top_score: { gte: 0.1 } }, 0.5, 2],
    ] as const) {
      const expected = selected(filter)
        .filter((s) => threshold === undefined || s.topScore < threshold)
        .sort((a, b) => a.topScore - b.topScore || byText(a.id, b.id));
      expect(await report({ type: 'low_confidence_queries', filter, threshold, page: p })).toEqual({ queries: page(expected, p).map(wireEvent) });
    }
    for (const [filter, p] of [
      [{}, 1],
      [{}, 3],
      [LIVE, 1],
    ] as const) {
      const expected = selected(filter)
        .filter((s) => s.resultCount === 0)
        .sort((a, b) => b.createdAt - a.createdAt || byText(a.id, b.id));
      expect(expected.length).toBeGreaterThan(0);
      expect(await report({ type: 'no_result_queries', filter, page: p })).toEqual({ queries: page(expected, p).map(wireEvent) });
    }
    const clicked = clicksByRequest();
    const cases: [WireFilter, Record<string, unknown>][] = [
      [{}, {}],
      [SEEDED, { sort_by: 'latency', sort_order: 'asc', page: 2 }],
      [{ search_type: 'autocomplete' }, { sort_by: 'top_score' }],
      [FIRST_HALF, { has_clicks: true, page: 3 }],
      [FIRST_HALF, { has_clicks: false, sort_by: 'created_at', sort_order: 'asc' }],
      [{ search_method: 'BM25', query_rating: { lt: 1 } }, { has_clicks: true, sort_by: 'latency' }],
    ];
    for (const [filter, opts] of cases) {
      const key = (opts.sort_by as 'created_at' | 'latency' | 'top_score' | undefined) ?? 'created_at';
      const value = (s: SearchRecord) => (key === 'created_at' ? s.createdAt : key === 'latency' ? s.latencyMs : s.topScore);
      const dir = opts.sort_order === 'asc' ? 1 : -1;
      const expected = selected(filter)
        .filter((s) => opts.has_clicks === undefined || clicked.has(s.id) === opts.has_clicks)
        .sort((a, b) => dir * (value(a) - value(b)) || byText(a.id, b.id));
      expect(expected.length).toBeGreaterThan(0);
      const got = await report({ type: 'search_queries', filter, ...opts });
      expect(got, JSON.stringify(opts)).toEqual({ queries: page(expected, opts.page as number | undefined).map(wireEvent) });
    }
  });

  it('count_queries: per search type and method, optionally one per (user, query)', async () => {
    for (const [filter, collapsed] of [
      [{}, false],
      [{}, true],
      [{ ...FIRST_HALF, component_name: 'search-bar' }, true],
      [LIVE, true],
    ] as const) {
      const groups = new Map<string, Set<string> | number>();
      for (const s of selected(filter)) {
        const key = JSON.stringify([s.kind, s.searchMethod]);
        if (collapsed) {
          const set = (groups.get(key) as Set<string> | undefined) ?? new Set<string>();
          set.add(JSON.stringify([s.userId ?? s.id, s.query]));
          groups.set(key, set);
        } else {
          groups.set(key, ((groups.get(key) as number | undefined) ?? 0) + 1);
        }
      }
      const expected = [...groups]
        .map(([key, v]) => {
          const [search_type, search_method] = JSON.parse(key) as [string, string];
          return { search_type, search_method, search_count: typeof v === 'number' ? v : v.size };
        })
        .sort((a, b) => b.search_count - a.search_count || byText(a.search_type, b.search_type) || byText(a.search_method, b.search_method));
      expect(await report({ type: 'count_queries', filter, count_collapsed_queries: collapsed })).toEqual({ total_queries: expected });
    }
    // The live searches: "aspirin" by live-user twice collapses to one; anonymous searches are each their own user.
    const live = await report({ type: 'count_queries', filter: { ...LIVE, search_method: 'bm25' }, count_collapsed_queries: true });
    expect(live).toEqual({ total_queries: [{ search_type: 'search', search_method: 'bm25', search_count: 3 }] });
  });

  it('query_details: a search with its rating; 404 for another dataset\'s or an unknown id', async () => {
    const ratedOne = searches.find((s) => ratings.get(s.id)?.note != null && ratings.get(s.id)?.metadata != null)!;
    const unrated = searches.find((s) => !ratings.has(s.id) && s.userId === null)!;
    const live = searches.find((s) => s.id === liveIds[1])!;
    for (const s of [ratedOne, unrated, live]) expect(await report({ type: 'query_details', request_id: s.id })).toEqual(wireEvent(s));
    expect(wireEvent(live)).toMatchObject({ search_type: 'search', query: 'aspirin', user_id: 'live-user', query_rating: null, metadata: { component_name: 'live' } });
    for (const id of [otherSearches[0]!.id, randomUUID()]) {
      const res = await t.ds.post('/api/analytics/search', { type: 'query_details', request_id: id });
      expect(res.status, res.text).toBe(404);
      expect(res.body.message).toContain(id);
    }
  });

  it('popular_filters: clause, field and condition kind of the filters used, with their common values', async () => {
    for (const filter of [{}, FIRST_HALF, { search_type: 'search', component_name: 'sidebar' }] as WireFilter[]) {
      const tally = new Map<string, { clause: string; field: string; filter_type: string; count: number; values: Map<string, number> }>();
      for (const s of selected(filter)) {
        const filters = (s.requestParams as { filters?: Record<string, Record<string, unknown>[]> }).filters;
        const uses = new Map<string, { clause: string; field: string; filter_type: string; values: Set<string> }>();
        for (const clause of ['must', 'should', 'must_not']) {
          for (const c of filters?.[clause] ?? []) {
            const kinds = 'field' in c ? Object.keys(c).filter((k) => k !== 'field') : ['tracking_ids'];
            for (const kind of kinds) {
              const field = 'field' in c ? (c.field as string) : kind;
              const filterType = 'field' in c ? kind : 'has_id';
              const v = c[kind];
              const values = Array.isArray(v) ? v : [v];
              const key = JSON.stringify([clause, field, filterType]);
              const u = uses.get(key) ?? { clause, field, filter_type: filterType, values: new Set<string>() };
              for (const x of values) u.values.add(typeof x === 'string' ? x : canonicalJson(x));
              uses.set(key, u);
            }
          }
        }
        for (const [key, u] of uses) {
          const e = tally.get(key) ?? { clause: u.clause, field: u.field, filter_type: u.filter_type, count: 0, values: new Map<string, number>() };
          e.count++;
          for (const v of u.values) e.values.set(v, (e.values.get(v) ?? 0) + 1);
          tally.set(key, e);
        }
      }
      const expected = [...tally.values()]
        .sort((a, b) => b.count - a.count || byText(a.clause, b.clause) || byText(a.field, b.field) || byText(a.filter_type, b.filter_type))
        .map((e) => ({
          clause: e.clause,
          field: e.field,
          filter_type: e.filter_type,
          count: e.count,
          common_values: Object.fromEntries([...e.values].sort((a, b) => b[1] - a[1] || byText(a[0], b[0])).slice(0, 10)),
        }));
      expect(expected.length).toBeGreaterThan(5);
      const got = await report({ type: 'popular_filters', filter });
      expect(got.popular_filters.map((f: any) => ({ ...f, common_values: Object.entries(f.common_values) }))).toEqual(
        expected.map((f) => ({ ...f, common_values: Object.entries(f.common_values) })),
      );
    }
    // The recorder's rows are walked too.
    const live = await report({ type: 'popular_filters', filter: LIVE });
    expect(live.popular_filters).toEqual([
      { clause: 'must', field: 'tag_set', filter_type: 'match_any', count: 1, common_values: { t1: 1 } },
      { clause: 'must_not', field: 'tag_set', filter_type: 'match_all', count: 1, common_values: { t2: 1 } },
    ]);
  });

  it('ctr_metrics_over_time and search_conversion_rate: shares of searches with linked clicks / conversions', async () => {
    const clicked = clicksByRequest();
    const converted = conversionsByRequest();
    for (const [filter, granularity] of [
      [SEEDED, 'day'],
      [{}, 'month'],
      [{ ...JANUARY, search_type: 'search', component_name: 'sidebar' }, undefined],
    ] as const) {
      const rows = selected(filter);
      const ctr = await report({ type: 'ctr_metrics_over_time', filter, granularity });
      expect(ctr.total_ctr).toBeCloseTo(ratio(rows.filter((s) => clicked.has(s.id)).length, rows.length), 9);
      expectPoints(ctr.points, series(rows, (s) => s.createdAt, granularity, (g) => g.filter((s) => clicked.has(s.id)).length / g.length));
      const conv = await report({ type: 'search_conversion_rate', filter, granularity });
      expect(conv.conversion_rate).toBeCloseTo(ratio(rows.filter((s) => converted.has(s.id)).length, rows.length), 9);
      expectPoints(conv.points, series(rows, (s) => s.createdAt, granularity, (g) => g.filter((s) => converted.has(s.id)).length / g.length));
    }
  });

  it('searches_per_user and search_average_rating', async () => {
    for (const [filter, granularity] of [
      [SEEDED, 'month'],
      [FIRST_HALF, 'day'],
      [{ search_method: 'hybrid', query_rating: { gte: -1 } }, 'month'],
      [{}, undefined],
    ] as const) {
      const rows = selected(filter);
      const withUser = rows.filter((s) => s.userId !== null);
      const perUser = (g: SearchRecord[]) => g.length / new Set(g.map((s) => s.userId)).size;
      const spu = await report({ type: 'searches_per_user', filter, granularity });
      expect(spu.avg_searches_per_user).toBeCloseTo(withUser.length === 0 ? 0 : perUser(withUser), 9);
      expectPoints(spu.points, series(withUser, (s) => s.createdAt, granularity, perUser));
      const rated = rows.filter((s) => ratings.has(s.id));
      const avg = (g: SearchRecord[]) => g.reduce((a, s) => a + ratings.get(s.id)!.rating, 0) / g.length;
      const rating = await report({ type: 'search_average_rating', filter, granularity });
      expect(rated.length).toBeGreaterThan(0);
      expect(rating.avg_search_rating).toBeCloseTo(avg(rated), 9);
      expectPoints(rating.points, series(rated, (s) => s.createdAt, granularity, avg));
    }
  });

  it('event_funnel: the dataset\'s user events in the range by name', async () => {
    for (const filter of [{}, FIRST_HALF, JANUARY] as WireFilter[]) {
      const range = dateBounds(filter);
      const counts = new Map<string, number>();
      for (const e of events) if (e.datasetId === t.datasetId && inRange(e.createdAt, range)) counts.set(e.eventName, (counts.get(e.eventName) ?? 0) + 1);
      const expected = [...counts].sort((a, b) => b[1] - a[1] || byText(a[0], b[0])).map(([event_name, event_count]) => ({ event_name, event_count }));
      expect(expected.length).toBeGreaterThan(3);
      expect(await report({ type: 'event_funnel', filter })).toEqual({ event_names: expected });
    }
  });

  it('search_revenue: purchases per bucket over the searches; direct counts only linked purchases', async () => {
    const ids = new Set(searches.map((s) => s.id));
    for (const [filter, direct, granularity] of [
      [SEEDED, false, 'month'],
      [SEEDED, true, 'month'],
      [{ ...FIRST_HALF, search_type: 'autocomplete' }, true, 'day'],
      [{}, undefined, undefined],
    ] as const) {
      const range = dateBounds(filter);
      const purchases = events.filter(
        (e) => e.datasetId === t.datasetId && e.eventType === 'purchase' && inRange(e.createdAt, range) && (!direct || (e.requestId !== null && ids.has(e.requestId))),
      );
      const total = purchases.reduce((a, e) => a + e.revenue, 0);
      const got = await report({ type: 'search_revenue', filter, direct, granularity });
      expect(got.avg_revenue).toBeCloseTo(ratio(total, selected(filter).length), 6);
      expectPoints(got.points, series(purchases, (e) => e.createdAt, granularity, (g) => g.reduce((a, e) => a + e.revenue, 0)));
    }
    // Direct revenue is less than all revenue: unlinked purchases and purchases naming no known record exist.
    const all = await report({ type: 'search_revenue', filter: SEEDED });
    const direct = await report({ type: 'search_revenue', filter: SEEDED, direct: true });
    expect(direct.avg_revenue).toBeLessThan(all.avg_revenue);
  });

  it('refuses bad bodies with 400 and a message naming the problem', async () => {
    const bad: [unknown, RegExp][] = [
      [{ type: 'nope' }, /type must be one of latency_graph, .*search_revenue/],
      [{}, /type must be one of/],
      [[1, 2], /type must be one of/],
      [{ type: 'search_metrics', filter: { search_type: 'rag' } }, /filter\.search_type: search_type must be one of/],
      [{ type: 'search_metrics', filter: { search_method: 'vector' } }, /filter\.search_method/],
      [{ type: 'latency_graph', filter: { date_range: { gte: '2025-02-01', lt: '2025-01-01' } } }, /date_range is empty/],
      [{ type: 'latency_graph', filter: { date_range: { gte: 'yesterday' } } }, /filter\.date_range\.gte: Invalid timestamp/],
      [{ type: 'latency_graph', granularity: 'week' }, /granularity/],
      [{ type: 'head_queries', page: -1 }, /page must be 0 or more/],
      [{ type: 'head_queries', page: 1.5 }, /page/],
      [{ type: 'search_queries', sort_by: 'query' }, /sort_by must be one of created_at, latency, top_score/],
      [{ type: 'search_queries', has_clicks: 'yes' }, /has_clicks/],
      [{ type: 'search_metrics', filter: { query_rating: { gte: 1.5 } } }, /filter\.query_rating\.gte/],
      [{ type: 'search_metrics', filter: { top_score: { gt: 0.9, lt: 0.1 } } }, /range is empty/],
      [{ type: 'search_metrics', filter: 'all' }, /filter/],
      [{ type: 'query_details' }, /request_id/],
      [{ type: 'query_details', request_id: 'not-a-uuid' }, /request_id: must be a UUID/],
      [{ type: 'low_confidence_queries', threshold: 'low' }, /threshold/],
    ];
    for (const [body, message] of bad) {
      const res = await t.ds.post('/api/analytics/search', body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    // Admin only: a read key is refused.
    const readKey = await createKey(stack, t.orgId, { role: 0 }, t.ownerKey);
    const read = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId });
    expect((await read.post('/api/analytics/search', { type: 'search_metrics' })).status).toBe(403);
    expect((await read.put('/api/analytics/search', { query_id: randomUUID(), rating: 1 })).status).toBe(403);
  });
});

describe('PUT /api/analytics/search and /api/analytics/rag', () => {
  it('stores the latest rating of a query before answering 204; no existence check', async () => {
    const id = randomUUID();
    for (const [path, kind] of [
      ['/api/analytics/search', 'search'],
      ['/api/analytics/rag', 'rag'],
    ] as const) {
      expect((await t.ds.put(path, { query_id: id, rating: 3, note: 'ok', metadata: { a: [1] } })).status).toBe(204);
      const rows = await queryStore<Record<string, any>>(stack, 'SELECT * FROM query_ratings WHERE query_id = ?', id);
      expect(rows).toEqual([{ query_id: id, kind, dataset_id: t.datasetId, rating: 3, note: 'ok', metadata: '{"a":[1]}', created_at: expect.any(Number) }]);
    }
    expect((await t.ds.put('/api/analytics/rag', { query_id: id, rating: -2147483648 })).status).toBe(204);
    const [row] = await queryStore<Record<string, any>>(stack, 'SELECT rating, note, metadata FROM query_ratings WHERE query_id = ?', id);
    expect(row).toEqual({ rating: -2147483648, note: null, metadata: null });
  });

  it('refuses bad ratings with 400 and writes nothing', async () => {
    const id = randomUUID();
    const bad: [unknown, RegExp][] = [
      [{ rating: 1 }, /query_id/],
      [{ query_id: 'x', rating: 1 }, /query_id: must be a UUID/],
      [{ query_id: id }, /rating/],
      [{ query_id: id, rating: 1.5 }, /rating must be an integer/],
      [{ query_id: id, rating: 2147483648 }, /rating must be at most 2147483647/],
      [{ query_id: id, rating: '5' }, /rating/],
      [{ query_id: id, rating: 1, note: 'x'.repeat(4097) }, /note: must be at most 4096 bytes/],
      [{ query_id: id, rating: 1, note: 'a\u0000b' }, /note: must not contain the NUL character/],
      [{ query_id: id, rating: 1, note: 5 }, /note/],
    ];
    for (const path of ['/api/analytics/search', '/api/analytics/rag']) {
      for (const [body, message] of bad) {
        const res = await t.ds.put(path, body);
        expect(res.status, `${path} ${JSON.stringify(body)} → ${res.text}`).toBe(400);
        expect(res.body.message).toMatch(message);
      }
    }
    expect(await queryStore(stack, 'SELECT * FROM query_ratings WHERE query_id = ?', id)).toEqual([]);
  });
});
