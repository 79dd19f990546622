/**
 * POST /api/analytics/rag end to end: RAG answers, topics, ratings and user events seeded straight
 * into the stack's store over four days, every report variant asked over HTTP under several
 * filters, granularities, pages and sorts, and each answer compared with the figure computed here
 * from the seeded rows. One real answer (POST /api/chunk/generate against a fake model) proves
 * that what the recorder stores is reported. Bad bodies are refused with 400/404 and a message.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RagRecord } from '../../core/domain/rag.js';
import type { QueryRating, UserEvent, UserEventType } from '../../core/domain/user-events.js';
import type { Store } from '../../store/repository.js';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createKey, type Tenant } from '../helpers/fixtures.js';
import type { Stack } from '../helpers/stack.js';
import { expectRejected } from '../helpers/store-snapshot.js';
import {
  DAY,
  HOUR,
  MINUTE,
  byCodePoint,
  byKeyThenId,
  expectPerUser,
  expectRefusals,
  expectShare,
  pointsOf,
  postReport,
  ratio,
  rng,
  rounded,
  stamp,
  startReportStack,
  stopReportStack,
  topTexts,
  userEvent as event,
  wireRange,
  within,
  writeStore,
  type Bounds,
  type Granularity,
  type ReportStack,
} from './rag-analytics-fixtures.js';

let started: ReportStack | undefined;
let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
let store: Store;
/** Dataset A: the seeded rows. */
let ds: Client;
let datasetId: string;
/** Dataset B: the real answer (and an event that must not reach A's reports). */
let realDs: Client;
let realDatasetId: string;

const BASE = Date.UTC(2024, 2, 1, 0, 0, 0);
const MESSAGES = ['how do ducks fly', 'what do geese eat', 'Apple', 'apple', 'where do swans sleep', 'b'];
const COMPONENTS = ['chat-a', 'chat-b'];

/** A seeded topic as the oracle knows it. */
interface SeedTopic {
  id: string;
  name: string;
  ownerId: string;
  component: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A seeded answer as the oracle knows it. */
interface Answer {
  rec: RagRecord;
  hallucination: number;
  detected: string[];
  /** The latest RAG rating, or null (unrated, or rated through the search route only). */
  rating: { rating: number; note: string | null; metadata: unknown } | null;
  events: UserEvent[];
}

const topics: SeedTopic[] = [];
const answers: Answer[] = [];
/** Every user event of dataset A. */
const events: UserEvent[] = [];

/** Seeds topics, answers, ratings and events into dataset A (and one stray event into B). */
async function seed(): Promise<void> {
  const random = rng(1501);
  // Seven topics through the API (the seventh never gets an answer), then dated by SQL.
  for (let k = 0; k < 7; k++) {
    const component = k % 3 === 2 ? null : COMPONENTS[k % 2]!;
    const res = await ds.post('/api/topic', { owner_id: `owner-${k % 3}`, name: `Topic ${k}`, metadata: component === null ? null : { component_name: component } });
    expect(res.status, res.text).toBe(200);
    topics.push({ id: res.body.id, name: `Topic ${k}`, ownerId: `owner-${k % 3}`, component, createdAt: BASE + k * 11 * HOUR + k * 1000, updatedAt: BASE + 4 * DAY + k });
  }
  await writeStore(
    stack,
    topics.map((t) => ['UPDATE topics SET created_at = ?, updated_at = ? WHERE id = ?', t.createdAt, t.updatedAt, t.id] as const),
  );

  for (let i = 0; i < 48; i++) {
    const chosen = i % 3 === 0;
    const createdAt = BASE + (i % 4) * DAY + ((i * 7) % 24) * HOUR + (i % 60) * MINUTE + i;
    const rec: RagRecord = {
      id: randomUUID(),
      datasetId,
      ragType: chosen ? 'chosen_chunks' : 'all_chunks',
      userMessage: MESSAGES[(i * 5 + Math.floor(i / 7)) % MESSAGES.length]!,
      searchId: chosen ? null : randomUUID(),
      topicId: chosen ? null : topics[i % 6]!.id,
      results: [{ id: randomUUID(), score: Math.round(random() * 1000) / 1000 }],
      llmResponse: `answer ${i}`,
      topScore: Math.round(random() * 1000) / 1000,
      userId: i % 4 === 3 ? null : `user-${i % 3}`,
      metadata: i % 5 === 0 ? null : { component_name: COMPONENTS[i % 2], n: i },
      promptTokens: 10 + i,
      completionTokens: 5 + i,
      latencyMs: 100 + i,
      createdAt,
    };
    const rating = i % 3 === 2 ? null : { rating: ((i * 7) % 5) - 1, note: i % 2 === 0 ? `note ${i}` : null, metadata: i % 4 === 0 ? { by: 'tester' } : null };
    const linked = (type: UserEventType, at: number, extra: Partial<UserEvent> = {}) =>
      event({ eventType: type, createdAt: createdAt + at, datasetId, requestId: rec.id, requestType: 'rag', userId: rec.userId, ...extra });
    const mine: UserEvent[] = [];
    if (i % 2 === 0) mine.push(linked('click', 5 * MINUTE, { eventName: 'click', position: 1 + (i % 3), clickedChunkId: randomUUID() }));
    if (i % 6 === 0) mine.push(linked('click', 6 * MINUTE, { eventName: 'click', position: 2, clickedChunkId: randomUUID() }));
    if (i % 3 === 0) mine.push(linked('add_to_cart', 10 * MINUTE, { eventName: 'Added to cart', items: ['sku-1'], isConversion: true }));
    if (i % 4 === 1) mine.push(linked('view', 2 * MINUTE, { eventName: 'View', items: ['sku-2'], metadata: { page: i } }));
    if (i % 5 === 2) mine.push(linked('purchase', 30 * MINUTE, { eventName: 'Purchase', items: [JSON.stringify({ tracking_id: 'sku-1', revenue: 10 + i })], revenue: 10 + i, isConversion: true }));
    answers.push({ rec, hallucination: Math.round(random() * 10) / 10, detected: i % 4 === 0 ? [`claim ${i}`] : [], rating, events: mine });
    events.push(...mine);
  }
  // Unlinked events, a purchase linked to a search of the dataset, one linked to nothing stored.
  const search = randomUUID();
  for (let k = 0; k < 3; k++) events.push(event({ eventType: 'purchase', eventName: 'Purchase', createdAt: BASE + k * DAY + 2 * HOUR, datasetId, revenue: 100 * (k + 1), isConversion: true }));
  events.push(event({ eventType: 'view', eventName: 'View', createdAt: BASE + HOUR, datasetId }));
  events.push(event({ eventType: 'purchase', eventName: 'Purchase', createdAt: BASE + DAY + 3 * HOUR, datasetId, requestId: search, requestType: 'search', revenue: 7, isConversion: true }));
  events.push(event({ eventType: 'purchase', eventName: 'Purchase', createdAt: BASE + 2 * DAY + 3 * HOUR, datasetId, requestId: randomUUID(), requestType: 'rag', revenue: 9, isConversion: true }));

  await store.analytics.insertRags(answers.map((a) => a.rec));
  await store.analytics.insertSearches([
    {
      id: search,
      datasetId,
      kind: 'search',
      searchMethod: 'bm25',
      query: 'ducks',
      requestParams: {},
      latencyMs: 3,
      topScore: 1,
      results: [],
      resultCount: 0,
      userId: null,
      metadata: null,
      createdAt: BASE + DAY,
    },
  ]);
  await writeStore(
    stack,
    answers.map((a) => ['UPDATE rag_queries SET hallucination_score = ?, detected_hallucinations = ? WHERE id = ?', a.hallucination, JSON.stringify(a.detected), a.rec.id] as const),
  );
  // Ratings: a first one replaced later (the latest wins), RAG ratings, ratings through the search
  // route (not RAG ratings: left out), and a rating of nothing stored.
  await store.analytics.rate([{ kind: 'rag', datasetId, queryId: answers[4]!.rec.id, rating: 3, note: 'first', metadata: null, createdAt: BASE }]);
  await store.analytics.rate([
    ...answers.flatMap((a, i): QueryRating[] =>
      a.rating === null
        ? i % 5 === 0
          ? [{ kind: 'search' as const, datasetId, queryId: a.rec.id, rating: 2, note: null, metadata: null, createdAt: BASE + 1 }]
          : []
        : [{ kind: 'rag' as const, datasetId, queryId: a.rec.id, rating: a.rating.rating, note: a.rating.note, metadata: a.rating.metadata, createdAt: BASE + 2 }],
    ),
    { kind: 'rag', datasetId, queryId: randomUUID(), rating: 1, note: null, metadata: null, createdAt: BASE + 2 },
  ]);
  // An event of dataset B naming an answer of A: never linked to it.
  const stray = event({ eventType: 'click', eventName: 'click', createdAt: BASE + HOUR, datasetId: realDatasetId, requestId: answers[1]!.rec.id, position: 1, clickedChunkId: randomUUID() });
  expect(await store.userEvents.insertMany([...events, stray])).toBe(events.length + 1);
}

beforeAll(async () => {
  llm = await startFakeLlm();
  started = await startReportStack({ LLM_BASE_URL: llm.url, LLM_API_KEY: 'sk-fake', LLM_DEFAULT_MODEL: 'fake-model', SEMANTIC_ENABLED: false });
  ({ stack, tenant, store, ds, datasetId, realDs, realDatasetId } = started);
  await seed();
}, 120_000);

afterAll(async () => {
  await stopReportStack(started);
  await llm?.close();
});

/** The report's answer (asserting 200). */
const report = (body: Record<string, unknown>, on: Client = ds): Promise<any> => postReport(on, '/api/analytics/rag', body);

/** A RAG filter: the wire body and the oracle's predicate. */
interface Filter {
  wire?: Record<string, unknown>;
  dates?: Bounds;
  ragType?: string;
  query?: string;
  rating?: Bounds;
  component?: string;
}

const matches = (a: Answer, f: Filter): boolean =>
  within(a.rec.createdAt, f.dates) &&
  (f.ragType === undefined || a.rec.ragType === f.ragType) &&
  (f.query === undefined || a.rec.userMessage === f.query) &&
  (f.rating === undefined || within(a.rating?.rating ?? null, f.rating)) &&
  (f.component === undefined || (a.rec.metadata as { component_name?: string } | null)?.component_name === f.component);

/** A filter as the oracle and the wire both take it. */
function filter(f: Omit<Filter, 'wire'>): Filter {
  const wire: Record<string, unknown> = {};
  if (f.dates) wire.date_range = wireRange(f.dates);
  if (f.ragType) wire.rag_type = f.ragType;
  if (f.query !== undefined) wire.query = f.query;
  if (f.rating) wire.query_rating = f.rating;
  if (f.component) wire.component_name = f.component;
  return { ...f, wire };
}

const FILTERS: Filter[] = [
  filter({}),
  filter({ dates: { gte: BASE + DAY, lt: BASE + 3 * DAY } }),
  filter({ dates: { gt: BASE + DAY + 5 * HOUR }, ragType: 'all_chunks' }),
  filter({ ragType: 'chosen_chunks', component: 'chat-a' }),
  filter({ query: 'apple' }),
  filter({ rating: { gte: 1 } }),
  filter({ rating: { gt: -1, lte: 0 }, dates: { lte: BASE + 2 * DAY } }),
  filter({ component: 'chat-b', dates: { gte: BASE + 12 * HOUR } }),
];
const GRANULARITIES: Granularity[] = ['hour', 'day', 'month', 'minute'];

const selected = (f: Filter): Answer[] => answers.filter((a) => matches(a, f));
const hasClick = (a: Answer): boolean => a.events.some((e) => e.eventType === 'click');
const converts = (a: Answer): boolean => a.events.some((e) => e.isConversion);

/** The wire form of an answer. */
function ragEvent(a: Answer): Record<string, unknown> {
  const r = a.rec;
  return {
    id: r.id,
    rag_type: r.ragType,
    user_message: r.userMessage,
    search_id: r.searchId,
    topic_id: r.topicId,
    results: r.results,
    llm_response: r.llmResponse,
    top_score: r.topScore,
    dataset_id: r.datasetId,
    created_at: stamp(r.createdAt),
    query_rating: a.rating,
    hallucination_score: a.hallucination,
    detected_hallucinations: a.detected,
    user_id: r.userId ?? '',
    metadata: r.metadata,
  };
}

describe('POST /api/analytics/rag: answers', () => {
  it('rag_queries: pages, sorts and click conditions over filtered answers', async () => {
    const sorts = [
      { sort_by: undefined, sort_order: undefined, key: (a: Answer) => a.rec.createdAt, desc: true },
      { sort_by: 'top_score', sort_order: 'asc', key: (a: Answer) => a.rec.topScore, desc: false },
      { sort_by: 'hallucination_score', sort_order: 'desc', key: (a: Answer) => a.hallucination, desc: true },
      { sort_by: 'created_at', sort_order: 'asc', key: (a: Answer) => a.rec.createdAt, desc: false },
    ];
    let nonEmpty = 0;
    for (const [n, f] of FILTERS.entries()) {
      const sort = sorts[n % sorts.length]!;
      for (const hasClicks of [undefined, true, false]) {
        const expected = selected(f)
          .filter((a) => hasClicks === undefined || hasClick(a) === hasClicks)
          .sort(byKeyThenId(sort.key, sort.desc, (a) => a.rec.id));
        for (const page of [undefined, 2]) {
          const body = await report({ type: 'rag_queries', filter: f.wire, page, has_clicks: hasClicks, sort_by: sort.sort_by, sort_order: sort.sort_order });
          const from = ((page ?? 1) - 1) * 10;
          expect(body).toEqual({ queries: expected.slice(from, from + 10).map(ragEvent) });
          if (body.queries.length > 0) nonEmpty++;
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(20);
    // Page 0 is page 1; null members are absent ones.
    expect(await report({ type: 'rag_queries', page: 0, filter: null, sort_by: null })).toEqual(await report({ type: 'rag_queries' }));
  });

  it('rag_usage and rag_usage_graph count the filtered answers', async () => {
    for (const [n, f] of FILTERS.entries()) {
      expect(await report({ type: 'rag_usage', filter: f.wire })).toEqual({ total_queries: selected(f).length });
      const g = GRANULARITIES[n % GRANULARITIES.length]!;
      expect(await report({ type: 'rag_usage_graph', filter: f.wire, granularity: g })).toEqual({
        points: pointsOf(selected(f), (a) => a.rec.createdAt, g, (b) => b.length),
      });
    }
    // Hour is the default bucket.
    expect((await report({ type: 'rag_usage_graph' })).points).toEqual(pointsOf(answers, (a) => a.rec.createdAt, 'hour', (b) => b.length));
  });

  it('rag_query_details: one answer with its latest rating and hallucinations, 404 for others', async () => {
    for (const a of [answers[0]!, answers[4]!, answers[5]!, answers[10]!]) {
      expect(await report({ type: 'rag_query_details', request_id: a.rec.id.toUpperCase() })).toEqual(ragEvent(a));
    }
    // The latest of two ratings wins; a rating through the search route is not a RAG rating.
    expect(answers[4]!.rating!.rating).not.toBe(3);
    expect(answers[5]!.rating).toBeNull();
    const res = await ds.post('/api/analytics/rag', { type: 'rag_query_details', request_id: randomUUID() });
    expect(res.status, res.text).toBe(404);
    expect(res.body.message).toMatch(/^Not Found: RAG query .* not found/);
    // Another dataset's answer is not found through this one.
    expect((await realDs.post('/api/analytics/rag', { type: 'rag_query_details', request_id: answers[0]!.rec.id })).status).toBe(404);
  });

  it('rag_query_ratings: counts of positive and negative among the rated answers', async () => {
    for (const f of FILTERS) {
      const rated = selected(f).filter((a) => a.rating !== null);
      const body = await report({ type: 'rag_query_ratings', filter: f.wire });
      expect(body.total_positive_ratings).toBe(rated.filter((a) => a.rating!.rating >= 1).length);
      expect(body.total_negative_ratings).toBe(rated.filter((a) => a.rating!.rating <= 0).length);
    }
    expect(answers.some((a) => a.rating !== null && a.rating.rating >= 1) && answers.some((a) => a.rating !== null && a.rating.rating <= 0)).toBe(true);
  });

  it('followup_queries: messages after the first answer of their topic; popular_chats: every message', async () => {
    const firstOfTopic = new Set<string>();
    for (const t of topics) {
      const first = answers.filter((a) => a.rec.topicId === t.id).sort((x, y) => x.rec.createdAt - y.rec.createdAt || byCodePoint(x.rec.id, y.rec.id))[0];
      if (first) firstOfTopic.add(first.rec.id);
    }
    for (const f of FILTERS) {
      const followups = selected(f).filter((a) => a.rec.topicId !== null && !firstOfTopic.has(a.rec.id));
      expect(await report({ type: 'followup_queries', filter: f.wire })).toEqual({ top_queries: topTexts(followups.map((a) => a.rec.userMessage)) });
      expect(await report({ type: 'popular_chats', filter: f.wire })).toEqual({ top_queries: topTexts(selected(f).map((a) => a.rec.userMessage)) });
    }
    // Code-point order breaks ties ("Apple" before "apple"); page 2 is past the six messages.
    const all = (await report({ type: 'popular_chats' })).top_queries.map((q: { query: string }) => q.query);
    expect(all).toHaveLength(MESSAGES.length);
    expect((await report({ type: 'popular_chats', page: 2 })).top_queries).toEqual([]);
    expect((await report({ type: 'followup_queries', page: 2 })).top_queries).toEqual([]);
  });

  it('ctr, conversion, messages per user and average rating over time', async () => {
    for (const [n, f] of FILTERS.entries()) {
      const g = GRANULARITIES[(n + 1) % GRANULARITIES.length]!;
      const sel = selected(f);
      const at = (a: Answer) => a.rec.createdAt;
      const ctr = await report({ type: 'ctr_metrics_over_time', filter: f.wire, granularity: g });
      expectShare(ctr.total_ctr, ctr.points, sel, at, g, hasClick);

      const conversion = await report({ type: 'chat_conversion_rate', filter: f.wire, granularity: g });
      expectShare(conversion.conversion_rate, conversion.points, sel, at, g, converts);

      const perUser = await report({ type: 'messages_per_user', filter: f.wire, granularity: g });
      expectPerUser(perUser.avg_messages_per_user, perUser.points, sel, at, g, (a) => a.rec.userId);

      const rated = sel.filter((a) => a.rating !== null);
      const mean = (b: Answer[]) => ratio(b.reduce((s, a) => s + a.rating!.rating, 0), b.length);
      const rating = await report({ type: 'chat_average_rating', filter: f.wire, granularity: g });
      expect(rating.avg_chat_rating).toBeCloseTo(mean(rated), 9);
      expect(rounded(rating.points)).toEqual(rounded(pointsOf(rated, (a) => a.rec.createdAt, g, mean)));
    }
  });

  it('event_funnel counts the events linked to the filtered answers by name', async () => {
    for (const f of FILTERS) {
      const names = selected(f).flatMap((a) => a.events.map((e) => e.eventName));
      const expected = topTexts(names, 1).map((q) => ({ event_name: q.query, event_count: q.count }));
      expect(await report({ type: 'event_funnel', filter: f.wire })).toEqual({ event_names: expected });
    }
  });

  it('chat_revenue: purchases per bucket, all of them or only those linked to a search or answer', async () => {
    const linkedIds = new Set(answers.map((a) => a.rec.id));
    for (const [n, f] of FILTERS.entries()) {
      const g = GRANULARITIES[n % GRANULARITIES.length]!;
      for (const direct of [undefined, false, true]) {
        const purchases = events.filter((e) => e.eventType === 'purchase' && within(e.createdAt, f.dates) && (!direct || linkedIds.has(e.requestId ?? '')));
        const body = await report({ type: 'chat_revenue', filter: f.wire, granularity: g, direct });
        const points = pointsOf(purchases, (e) => e.createdAt, g, (b) => b.reduce((s, e) => s + e.revenue, 0));
        expect(rounded(body.points)).toEqual(rounded(points));
        expect(body.avg_revenue).toBeCloseTo(ratio(purchases.reduce((s, e) => s + e.revenue, 0), selected(f).length), 9);
      }
    }
  });
});

describe('POST /api/analytics/rag: topics', () => {
  const answersOf = (t: SeedTopic) => answers.filter((a) => a.rec.topicId === t.id);
  const summary = (t: SeedTopic) => ({
    id: t.id,
    topic_id: t.id,
    name: t.name,
    dataset_id: datasetId,
    owner_id: t.ownerId,
    metadata: t.component === null ? null : { component_name: t.component },
    message_count: answersOf(t).length,
    created_at: stamp(t.createdAt),
    updated_at: stamp(t.updatedAt),
  });

  it('topic_queries: topics with answers, filtered, sorted and paged', async () => {
    const cases = [
      { filter: undefined, dates: undefined, component: undefined, sort_by: undefined, sort_order: undefined },
      { filter: { component_name: 'chat-a' }, dates: undefined, component: 'chat-a', sort_by: 'message_count', sort_order: 'asc' },
      { filter: { date_range: wireRange({ gte: BASE + 11 * HOUR }) }, dates: { gte: BASE + 11 * HOUR }, component: undefined, sort_by: 'message_count', sort_order: 'desc' },
      { filter: { date_range: wireRange({ lt: BASE + 40 * HOUR }) }, dates: { lt: BASE + 40 * HOUR }, component: undefined, sort_by: 'created_at', sort_order: 'asc' },
    ];
    for (const c of cases) {
      const key = (t: SeedTopic) => (c.sort_by === 'message_count' ? answersOf(t).length : t.createdAt);
      const desc = c.sort_order !== 'asc';
      const expected = topics
        .filter((t) => answersOf(t).length > 0 && within(t.createdAt, c.dates) && (c.component === undefined || t.component === c.component))
        .sort((x, y) => (desc ? key(y) - key(x) : key(x) - key(y)) || byCodePoint(x.id, y.id))
        .map(summary);
      expect(expected.length).toBeGreaterThan(0);
      expect(await report({ type: 'topic_queries', filter: c.filter, sort_by: c.sort_by, sort_order: c.sort_order })).toEqual({ topics: expected });
      expect(await report({ type: 'topic_queries', filter: c.filter, sort_by: c.sort_by, sort_order: c.sort_order, page: 2 })).toEqual({ topics: [] });
    }
  });

  it('topic_details: the topic and its answers oldest first; a topic without answers; 404 for unknown ones', async () => {
    for (const t of topics) {
      const messages = answersOf(t)
        .sort((x, y) => x.rec.createdAt - y.rec.createdAt || byCodePoint(x.rec.id, y.rec.id))
        .map(ragEvent);
      expect(await report({ type: 'topic_details', topic_id: t.id })).toEqual({ topic: summary(t), messages });
    }
    expect(answersOf(topics[6]!)).toHaveLength(0);
    const res = await ds.post('/api/analytics/rag', { type: 'topic_details', topic_id: randomUUID() });
    expect(res.status, res.text).toBe(404);
    expect(res.body.message).toMatch(/^Not Found: topic .* not found/);
    expect((await realDs.post('/api/analytics/rag', { type: 'topic_details', topic_id: topics[0]!.id })).status).toBe(404);
  });

  it('topics_over_time: topics with matching answers per bucket of their creation', async () => {
    for (const [n, f] of FILTERS.entries()) {
      const g = GRANULARITIES[n % GRANULARITIES.length]!;
      const answerFilter: Filter = { ...f, dates: undefined, component: undefined };
      const counted = topics.filter(
        (t) => within(t.createdAt, f.dates) && (f.component === undefined || t.component === f.component) && answersOf(t).some((a) => matches(a, answerFilter)),
      );
      const body = await report({ type: 'topics_over_time', filter: f.wire, granularity: g });
      expect(body).toEqual({ total_topics: counted.length, points: pointsOf(counted, (t) => t.createdAt, g, (b) => b.length) });
    }
  });

  it('events_for_topic: the events linked to the topic\'s answers, newest first', async () => {
    let seen = 0;
    for (const t of topics) {
      const expected = answersOf(t)
        .flatMap((a) => a.events)
        .sort((x, y) => y.createdAt - x.createdAt || byCodePoint(x.id, y.id));
      const body = await report({ type: 'events_for_topic', topic_id: t.id });
      expect(body.events.map((e: { id: string }) => e.id)).toEqual(expected.map((e) => e.id));
      for (const [k, e] of body.events.entries()) {
        expect(e).toMatchObject({ event_type: expected[k]!.eventType, event_name: expected[k]!.eventName, request_id: expected[k]!.requestId, is_conversion: expected[k]!.isConversion, dataset_id: datasetId });
      }
      seen += expected.length;
    }
    expect(seen).toBeGreaterThan(10);
    expect((await ds.post('/api/analytics/rag', { type: 'events_for_topic', topic_id: randomUUID() })).status).toBe(404);
  });
});

describe('POST /api/analytics/rag: a recorded answer', () => {
  it('reports the answer the recorder stored for POST /api/chunk/generate', async () => {
    const created = await realDs.post('/api/chunk', [{ chunk_html: '<p>Ducks quack.</p>' }, { chunk_html: '<p>Geese honk.</p>' }]);
    expect(created.status, created.text).toBe(200);
    const chunkIds = created.body.chunk_metadata.map((c: { id: string }) => c.id);
    llm.script({ reply: 'Ducks quack [1].' });
    const res = await realDs.post('/api/chunk/generate', {
      prev_messages: [{ role: 'user', content: 'Which bird quacks?' }],
      chunk_ids: chunkIds,
      stream_response: false,
      user_id: 'real-user',
      metadata: { component_name: 'widget' },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.headers.get('tr-queryid')!;
    const event = await eventually({ what: `answer ${id} reported`, timeoutMs: 20_000 }, async () => {
      const r = await realDs.post('/api/analytics/rag', { type: 'rag_query_details', request_id: id });
      return r.status === 200 ? r.body : undefined;
    });
    expect(event).toMatchObject({
      id,
      rag_type: 'chosen_chunks',
      user_message: 'Which bird quacks?',
      search_id: null,
      topic_id: null,
      results: chunkIds.map((c: string) => ({ id: c, score: 0 })),
      llm_response: 'Ducks quack [1].',
      top_score: 0,
      dataset_id: realDatasetId,
      query_rating: null,
      hallucination_score: 0,
      detected_hallucinations: [],
      user_id: 'real-user',
      metadata: { component_name: 'widget' },
    });
    expect(Math.abs(Date.parse(`${event.created_at.replace(' ', 'T')}Z`) - Date.now())).toBeLessThan(5 * 60_000);
    expect(await report({ type: 'rag_usage', filter: { component_name: 'widget' } }, realDs)).toEqual({ total_queries: 1 });
    expect(await report({ type: 'rag_queries', filter: { rag_type: 'chosen_chunks' } }, realDs)).toEqual({ queries: [event] });
    expect(await report({ type: 'popular_chats' }, realDs)).toEqual({ top_queries: [{ query: 'Which bird quacks?', count: 1 }] });
    expect(await report({ type: 'messages_per_user', granularity: 'day' }, realDs)).toMatchObject({ avg_messages_per_user: 1 });
    // The stray event of this dataset names an answer of the other: no answer here has events.
    expect(await report({ type: 'event_funnel' }, realDs)).toEqual({ event_names: [] });
    await store.analytics.rate([{ kind: 'rag', datasetId: realDatasetId, queryId: id, rating: 1, note: 'good', metadata: null, createdAt: Date.now() }]);
    expect((await report({ type: 'rag_query_details', request_id: id }, realDs)).query_rating).toEqual({ rating: 1, note: 'good', metadata: null });
    expect(await report({ type: 'rag_query_ratings' }, realDs)).toEqual({ total_positive_ratings: 1, total_negative_ratings: 0 });
  });
});

describe('POST /api/analytics/rag: refusals', () => {
  it('refuses bad bodies with 400 and a message naming the problem, writing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ type: 'nope' }, /type: must be one of rag_queries, rag_usage, .*popular_chats/],
      [{}, /type: must be one of/],
      [[{ type: 'rag_usage' }], /body must be a JSON object/],
      [{ type: 'rag_queries', filter: { rag_type: 'some_chunks' } }, /rag_type must be one of chosen_chunks, all_chunks/],
      [{ type: 'rag_queries', filter: { date_range: { gt: '2024-03-05', lt: '2024-03-01' } } }, /date_range is empty/],
      [{ type: 'rag_queries', filter: { date_range: { gt: 'yesterday' } } }, /filter\.date_range\.gt: Invalid timestamp/],
      [{ type: 'rag_queries', filter: { query_rating: { gte: 'high' } } }, /filter\.query_rating\.gte/],
      [{ type: 'rag_queries', filter: 'all' }, /filter:/],
      [{ type: 'rag_queries', page: -1 }, /page must be 0 or more/],
      [{ type: 'rag_queries', sort_by: 'latency' }, /sort_by must be one of hallucination_score, top_score, created_at/],
      [{ type: 'rag_queries', has_clicks: 'yes' }, /has_clicks/],
      [{ type: 'rag_usage_graph', granularity: 'week' }, /granularity/],
      [{ type: 'topic_queries', sort_by: 'top_score' }, /sort_by must be one of created_at, message_count/],
      [{ type: 'rag_query_details' }, /request_id/],
      [{ type: 'rag_query_details', request_id: 'abc' }, /request_id: must be a UUID/],
      [{ type: 'chat_revenue', direct: 'yes' }, /direct/],
      [{ type: 'events_for_topic', topic_id: 7 }, /topic_id/],
    ];
    await expectRefusals(ds, '/api/analytics/rag', cases);
    await expectRejected(stack, () => ds.post('/api/analytics/rag', { type: 'rag_queries', page: -3 }), 400, /page/);
  });

  it('is for admins of the dataset', async () => {
    const readKey = await createKey(stack, tenant.orgId, { role: 0 });
    const res = await client(stack.baseUrl, { authorization: readKey, 'tr-dataset': datasetId }).post('/api/analytics/rag', { type: 'rag_usage' });
    expect(res.status, res.text).toBe(403);
    expect((await client(stack.baseUrl, { authorization: tenant.ownerKey }).post('/api/analytics/rag', { type: 'rag_usage' })).status).toBe(400);
  });
});
