/**
 * POST /api/analytics/recommendations end to end: recommendation records and user events linked to
 * them seeded straight into the stack's store over four days, every report variant asked over
 * HTTP under several filters, granularities, pages and sorts, and each answer compared with the
 * figure computed here from the seeded rows. One real recommendation (POST /api/chunk/recommend)
 * proves that what the recorder stores is reported. Bad bodies are refused with 400/404.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecommendationRecord } from '../../core/domain/analytics.js';
import type { UserEvent, UserEventType } from '../../core/domain/user-events.js';
import type { Store } from '../../store/repository.js';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createKey, type Tenant } from '../helpers/fixtures.js';
import type { Stack } from '../helpers/stack.js';
import { expectRejected } from '../helpers/store-snapshot.js';
import {
  DAY,
  HOUR,
  MINUTE,
  byKeyThenId,
  expectPerUser,
  expectRefusals,
  expectShare,
  pointsOf,
  postReport,
  rng,
  startReportStack,
  stamp,
  stopReportStack,
  topTexts,
  userEvent as event,
  wireRange,
  within,
  type Bounds,
  type Granularity,
  type ReportStack,
} from './rag-analytics-fixtures.js';

let started: ReportStack | undefined;
let stack: Stack;
let tenant: Tenant;
let store: Store;
let ds: Client;
let datasetId: string;
/** Dataset B: the real recommendation (and an event that must not reach A's reports). */
let realDs: Client;
let realDatasetId: string;

const BASE = Date.UTC(2024, 4, 30, 0, 0, 0);
const COMPONENTS = ['rec-a', 'rec-b'];

/** A seeded recommendation as the oracle knows it. */
interface Rec {
  rec: RecommendationRecord;
  events: UserEvent[];
}

const recs: Rec[] = [];

async function seed(): Promise<void> {
  const random = rng(1502);
  const all: UserEvent[] = [];
  for (let i = 0; i < 40; i++) {
    // Across a month boundary, so month buckets split.
    const createdAt = BASE + (i % 4) * DAY + ((i * 5) % 24) * HOUR + (i % 60) * MINUTE + i;
    const group = i % 4 === 3;
    const rec: RecommendationRecord = {
      id: randomUUID(),
      datasetId,
      recommendationType: group ? 'Group' : 'Chunk',
      positiveIds: [randomUUID()],
      negativeIds: i % 2 === 0 ? [randomUUID()] : [],
      positiveTrackingIds: i % 3 === 0 ? [`t-${i}`] : [],
      negativeTrackingIds: [],
      requestParams: { limit: i, strategy: i % 2 === 0 ? 'average_vector' : 'best_score' },
      results: [{ id: randomUUID(), score: 0.5 }],
      // Two decimals: ties in top score are broken by id.
      topScore: Math.round(random() * 100) / 100,
      userId: i % 4 === 1 ? null : `user-${i % 5}`,
      metadata: i % 6 === 0 ? null : { component_name: COMPONENTS[i % 2] },
      createdAt,
    };
    const linked = (type: UserEventType, at: number, extra: Partial<UserEvent> = {}) =>
      event({ eventType: type, createdAt: createdAt + at, datasetId, requestId: rec.id, requestType: 'recommendation', ...extra });
    const mine: UserEvent[] = [];
    if (i % 2 === 0) mine.push(linked('click', MINUTE, { eventName: 'Click', position: 1 + (i % 4), clickedChunkId: randomUUID() }));
    if (i % 5 === 0) mine.push(linked('click', 2 * MINUTE, { eventName: 'Click', position: 3, clickedChunkId: randomUUID() }));
    if (i % 3 === 0) mine.push(linked('add_to_cart', 3 * MINUTE, { eventName: 'Add to cart', items: ['sku'], isConversion: true }));
    if (i % 7 === 1) mine.push(linked('view', 4 * MINUTE, { eventName: 'View', items: ['sku'] }));
    recs.push({ rec, events: mine });
    all.push(...mine);
  }
  all.push(event({ eventType: 'view', eventName: 'View', createdAt: BASE, datasetId }));
  all.push(event({ eventType: 'click', eventName: 'Click', createdAt: BASE, datasetId: realDatasetId, requestId: recs[0]!.rec.id, position: 1 }));
  await store.analytics.insertRecommendations(recs.map((r) => r.rec));
  expect(await store.userEvents.insertMany(all)).toBe(all.length);
}

beforeAll(async () => {
  started = await startReportStack({ SEMANTIC_ENABLED: false });
  ({ stack, tenant, store, ds, datasetId, realDs, realDatasetId } = started);
  await seed();
}, 120_000);

afterAll(async () => {
  await stopReportStack(started);
});

const report = (body: Record<string, unknown>, on: Client = ds): Promise<any> => postReport(on, '/api/analytics/recommendations', body);

/** A filter as the wire and the oracle both take it. */
interface Filter {
  wire: Record<string, unknown>;
  dates?: Bounds;
  type?: string;
  topScore?: Bounds;
  component?: string;
}

function filter(f: Omit<Filter, 'wire'>): Filter {
  const wire: Record<string, unknown> = {};
  if (f.dates) wire.date_range = wireRange(f.dates);
  if (f.type) wire.recommendation_type = f.type;
  if (f.topScore) wire.top_score = f.topScore;
  if (f.component) wire.component_name = f.component;
  return { ...f, wire };
}

const FILTERS: Filter[] = [
  filter({}),
  filter({ dates: { gte: BASE + DAY, lt: BASE + 3 * DAY } }),
  filter({ type: 'Chunk', dates: { gt: BASE + 6 * HOUR } }),
  filter({ type: 'Group' }),
  filter({ topScore: { gte: 0.25, lt: 0.75 } }),
  filter({ component: 'rec-b', topScore: { gt: 0.1 } }),
];
const GRANULARITIES: Granularity[] = ['hour', 'day', 'month', 'minute'];

const matches = (r: Rec, f: Filter): boolean =>
  within(r.rec.createdAt, f.dates) &&
  (f.type === undefined || r.rec.recommendationType === f.type) &&
  within(r.rec.topScore, f.topScore) &&
  (f.component === undefined || (r.rec.metadata as { component_name?: string } | null)?.component_name === f.component);
const selected = (f: Filter): Rec[] => recs.filter((r) => matches(r, f));
const hasClick = (r: Rec): boolean => r.events.some((e) => e.eventType === 'click');
const converts = (r: Rec): boolean => r.events.some((e) => e.isConversion);

/** The wire form of a recommendation. */
function recommendationEvent(r: RecommendationRecord): Record<string, unknown> {
  return {
    id: r.id,
    recommendation_type: r.recommendationType,
    positive_ids: r.positiveIds,
    negative_ids: r.negativeIds,
    positive_tracking_ids: r.positiveTrackingIds,
    negative_tracking_ids: r.negativeTrackingIds,
    request_params: r.requestParams,
    results: r.results,
    top_score: r.topScore,
    dataset_id: r.datasetId,
    created_at: stamp(r.createdAt),
    user_id: r.userId ?? '',
    metadata: r.metadata,
  };
}

describe('POST /api/analytics/recommendations', () => {
  it('low_confidence_recommendations: below the threshold, lowest top score first, paged', async () => {
    let nonEmpty = 0;
    for (const f of FILTERS) {
      for (const threshold of [undefined, 0.5, 0.2]) {
        const expected = selected(f)
          .filter((r) => threshold === undefined || r.rec.topScore < threshold)
          .sort(byKeyThenId((r) => r.rec.topScore, false, (r) => r.rec.id));
        for (const page of [1, 2]) {
          const body = await report({ type: 'low_confidence_recommendations', filter: f.wire, threshold, page });
          expect(body).toEqual({ queries: expected.slice((page - 1) * 10, page * 10).map((r) => recommendationEvent(r.rec)) });
          if (body.queries.length > 0) nonEmpty++;
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(15);
  });

  it('recommendation_queries: sorted, with or without clicks, paged', async () => {
    const sorts = [
      { sort_by: undefined, sort_order: undefined, key: (r: Rec) => r.rec.createdAt, desc: true },
      { sort_by: 'top_score', sort_order: 'desc', key: (r: Rec) => r.rec.topScore, desc: true },
      { sort_by: 'top_score', sort_order: 'asc', key: (r: Rec) => r.rec.topScore, desc: false },
      { sort_by: 'created_at', sort_order: 'asc', key: (r: Rec) => r.rec.createdAt, desc: false },
    ];
    for (const [n, f] of FILTERS.entries()) {
      for (const [k, hasClicks] of [undefined, true, false].entries()) {
        const sort = sorts[(n + k) % sorts.length]!;
        const expected = selected(f)
          .filter((r) => hasClicks === undefined || hasClick(r) === hasClicks)
          .sort(byKeyThenId(sort.key, sort.desc, (r) => r.rec.id));
        for (const page of [undefined, 2]) {
          const body = await report({ type: 'recommendation_queries', filter: f.wire, has_clicks: hasClicks, sort_by: sort.sort_by, sort_order: sort.sort_order, page });
          const from = ((page ?? 1) - 1) * 10;
          expect(body).toEqual({ queries: expected.slice(from, from + 10).map((r) => recommendationEvent(r.rec)) });
        }
      }
    }
  });

  it('query_details: one recommendation, 404 for unknown ones and other datasets\'', async () => {
    for (const r of [recs[0]!, recs[3]!, recs[7]!]) expect(await report({ type: 'query_details', request_id: r.rec.id })).toEqual(recommendationEvent(r.rec));
    const res = await ds.post('/api/analytics/recommendations', { type: 'query_details', request_id: randomUUID() });
    expect(res.status, res.text).toBe(404);
    expect(res.body.message).toMatch(/^Not Found: recommendation .* not found/);
    expect((await realDs.post('/api/analytics/recommendations', { type: 'query_details', request_id: recs[0]!.rec.id })).status).toBe(404);
  });

  it('usage, per user, CTR and conversion over time', async () => {
    for (const [n, f] of FILTERS.entries()) {
      const g = GRANULARITIES[n % GRANULARITIES.length]!;
      const sel = selected(f);
      expect(await report({ type: 'recommendation_usage_graph', filter: f.wire, granularity: g })).toEqual({
        total_requests: sel.length,
        points: pointsOf(sel, (r) => r.rec.createdAt, g, (b) => b.length),
      });
      const at = (r: Rec) => r.rec.createdAt;
      const perUser = await report({ type: 'recommendations_per_user', filter: f.wire, granularity: g });
      expectPerUser(perUser.avg_recommendations_per_user, perUser.points, sel, at, g, (r) => r.rec.userId);
      const ctr = await report({ type: 'recommendations_ctr_rate', filter: f.wire, granularity: g });
      expectShare(ctr.total_ctr, ctr.points, sel, at, g, hasClick);
      const conversion = await report({ type: 'recommendation_conversion_rate', filter: f.wire, granularity: g });
      expectShare(conversion.conversion_rate, conversion.points, sel, at, g, converts);
    }
    // Hour is the default bucket; the seeded days straddle the end of May.
    const usage = await report({ type: 'recommendation_usage_graph', granularity: 'month' });
    expect(usage.points.map((p: { time_stamp: string }) => p.time_stamp)).toEqual(['2024-05-01 00:00:00', '2024-06-01 00:00:00']);
    expect((await report({ type: 'recommendation_usage_graph' })).points).toEqual(pointsOf(recs, (r) => r.rec.createdAt, 'hour', (b) => b.length));
  });

  it('event_funnel counts the events linked to the filtered recommendations by name', async () => {
    for (const f of FILTERS) {
      const expected = topTexts(selected(f).flatMap((r) => r.events.map((e) => e.eventName))).map((q) => ({ event_name: q.query, event_count: q.count }));
      expect(await report({ type: 'event_funnel', filter: f.wire })).toEqual({ event_names: expected });
    }
  });

  it('reports the recommendation the recorder stored for POST /api/chunk/recommend', async () => {
    const created = await realDs.post(
      '/api/chunk',
      ['ducks quack on the pond', 'ducks swim on the lake', 'geese honk at dawn'].map((chunk_html, i) => ({ chunk_html, tracking_id: `c${i}` })),
    );
    expect(created.status, created.text).toBe(200);
    const res = await realDs.post('/api/chunk/recommend', { positive_tracking_ids: ['c0'], recommend_type: 'bm25', user_id: 'real-user', metadata: { component_name: 'widget' } });
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    const shown = await eventually({ what: `recommendation ${id} reported`, timeoutMs: 20_000 }, async () => {
      const r = await realDs.post('/api/analytics/recommendations', { type: 'query_details', request_id: id });
      return r.status === 200 ? r.body : undefined;
    });
    const chunks = res.body.chunks as { chunk: { id: string }; score: number }[];
    expect(shown).toMatchObject({
      id,
      recommendation_type: 'Chunk',
      positive_ids: [],
      negative_ids: [],
      positive_tracking_ids: ['c0'],
      negative_tracking_ids: [],
      results: chunks.map((c) => ({ id: c.chunk.id, score: c.score })),
      top_score: chunks[0]?.score ?? 0,
      dataset_id: realDatasetId,
      user_id: 'real-user',
      metadata: { component_name: 'widget' },
    });
    expect(shown.request_params).toMatchObject({ positive_tracking_ids: ['c0'], recommend_type: 'bm25' });
    expect(await report({ type: 'recommendation_queries', filter: { component_name: 'widget' } }, realDs)).toEqual({ queries: [shown] });
    expect(await report({ type: 'recommendation_usage_graph', granularity: 'day' }, realDs)).toMatchObject({ total_requests: 1 });
    expect(await report({ type: 'recommendations_per_user' }, realDs)).toMatchObject({ avg_recommendations_per_user: 1 });
    // The stray event of this dataset names a recommendation of the other: nothing links here.
    expect(await report({ type: 'recommendations_ctr_rate' }, realDs)).toMatchObject({ total_ctr: 0 });
    expect(await report({ type: 'event_funnel' }, realDs)).toEqual({ event_names: [] });
  });

  it('refuses bad bodies with 400 and a message, and non-admins', async () => {
    const cases: [unknown, RegExp][] = [
      [{ type: 'recommendations' }, /type: must be one of low_confidence_recommendations, recommendation_queries, .*event_funnel/],
      [{ type: 42 }, /type: must be one of/],
      [{ type: 'recommendation_queries', filter: { recommendation_type: 'chunk' } }, /recommendation_type must be one of Chunk, Group/],
      [{ type: 'recommendation_queries', filter: { top_score: { gt: 0.9, lt: 0.1 } } }, /range is empty/],
      [{ type: 'recommendation_queries', filter: { date_range: { gte: '2024-06-02', lte: '2024-06-01' } } }, /date_range is empty/],
      [{ type: 'recommendation_queries', filter: { top_score: { gt: 'x' } } }, /filter\.top_score\.gt/],
      [{ type: 'recommendation_queries', page: -2 }, /page must be 0 or more/],
      [{ type: 'recommendation_queries', sort_by: 'latency' }, /sort_by must be one of created_at, top_score/],
      [{ type: 'low_confidence_recommendations', threshold: 'low' }, /threshold/],
      [{ type: 'recommendations_ctr_rate', granularity: 'year' }, /granularity/],
      [{ type: 'query_details', request_id: 'x' }, /request_id: must be a UUID/],
    ];
    await expectRefusals(ds, '/api/analytics/recommendations', cases);
    await expectRejected(stack, () => ds.post('/api/analytics/recommendations', { type: 'event_funnel', filter: { component_name: 5 } }), 400, /component_name/);
    const readKey = await createKey(stack, tenant.orgId, { role: 0 });
    expect((await client(stack.baseUrl, { authorization: readKey, 'tr-dataset': datasetId }).post('/api/analytics/recommendations', { type: 'event_funnel' })).status).toBe(403);
  });
});
