/**
 * Click-through reports (`POST /api/analytics/events/ctr`) and the organization's top datasets
 * (`POST /api/analytics/top`) against the real service, on either store. Searches,
 * recommendations, RAG answers, ratings and user events are seeded straight into the stack's
 * store (their writers are other routes and jobs); every answer is compared with an oracle
 * computed here from the seeded rows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { UserEvent } from '../../core/domain/user-events.js';
import { openPgStore } from '../../store/postgres/pg-store.js';
import type { Store } from '../../store/repository.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { rng } from '../helpers/random-corpus.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Whole seconds: the reports print times to the second. */
const NOW = Math.floor(Date.now() / 1000) * 1000;

let stack: Stack;
let t: Tenant;
let other: Tenant;
let store: Store;
/** Datasets of t's organization: t.datasetId first, then the ones made here. */
const orgDatasets: { id: string; trackingId: string | null }[] = [];
let deletedDataset: string;

/** The same rows every run. */
const rand = rng(15);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const KINDS = ['search', 'autocomplete', 'search_over_groups'] as const;
const METHODS = ['bm25', 'semantic', 'hybrid'] as const;
const QUERIES = ['red shoes', 'wool coat', 'socks', 'hat'];
const COMPONENTS = ['grid', 'modal', null];

const searches: SearchRecord[] = [];
const recommendations: RecommendationRecord[] = [];
const events: UserEvent[] = [];
/** Latest rating of each search id. */
const ratings = new Map<string, number>();

function searchRecord(datasetId: string, createdAt: number): SearchRecord {
  const component = pick(COMPONENTS);
  return {
    id: randomUUID(),
    datasetId,
    kind: pick(KINDS),
    searchMethod: pick(METHODS),
    query: pick(QUERIES),
    requestParams: { query: 'x' },
    latencyMs: 5,
    topScore: Math.round(rand() * 1000) / 1000,
    results: [
      { id: randomUUID(), score: 0.9 },
      { id: randomUUID(), score: 0.5 },
    ],
    resultCount: 2,
    userId: `u${Math.floor(rand() * 5)}`,
    metadata: component === null ? null : { component_name: component },
    createdAt,
  };
}

function recommendationRecord(datasetId: string, createdAt: number): RecommendationRecord {
  const component = pick(COMPONENTS);
  return {
    id: randomUUID(),
    datasetId,
    recommendationType: pick(['Chunk', 'Group'] as const),
    positiveIds: [randomUUID()],
    negativeIds: [],
    positiveTrackingIds: ['p1'],
    negativeTrackingIds: [],
    requestParams: {},
    results: [{ id: randomUUID(), score: 0.7 }],
    topScore: Math.round(rand() * 1000) / 1000,
    userId: null,
    metadata: component === null ? null : { component_name: component },
    createdAt,
  };
}

function ragRecord(datasetId: string, createdAt: number): RagRecord {
  return {
    id: randomUUID(),
    datasetId,
    ragType: 'all_chunks',
    userMessage: 'why',
    searchId: null,
    topicId: null,
    results: [],
    llmResponse: 'because',
    topScore: 0,
    userId: null,
    metadata: null,
    promptTokens: 1,
    completionTokens: 1,
    latencyMs: 1,
    createdAt,
  };
}

function userEvent(datasetId: string, type: UserEvent['eventType'], request: { id: string; type: 'search' | 'recommendation' } | null, createdAt: number, position?: number): UserEvent {
  const chunkId = randomUUID();
  return {
    id: randomUUID(),
    datasetId,
    eventType: type,
    eventName: type,
    items: type === 'click' ? [JSON.stringify({ chunk_id: chunkId, position })] : type === 'purchase' ? [JSON.stringify({ tracking_id: 't', revenue: 3 })] : ['x'],
    metadata: null,
    userId: null,
    isConversion: type !== 'view',
    requestId: request?.id ?? null,
    requestType: request?.type ?? null,
    location: null,
    position: type === 'click' ? position! : null,
    clickedChunkId: type === 'click' ? chunkId : null,
    revenue: type === 'purchase' ? 3 : 0,
    createdAt,
    updatedAt: createdAt,
  };
}

/** Clicks and other events for a record: about 45% get 1..3 clicks; some get a view or purchase instead. */
function eventsFor(datasetId: string, record: { id: string; createdAt: number }, type: 'search' | 'recommendation'): void {
  const r = rand();
  if (r < 0.45) {
    const n = 1 + Math.floor(rand() * 3);
    for (let j = 0; j < n; j++) events.push(userEvent(datasetId, 'click', { id: record.id, type }, record.createdAt + (j + 1) * 60_000, 1 + Math.floor(rand() * 10)));
  } else if (r < 0.65) {
    events.push(userEvent(datasetId, pick(['view', 'purchase', 'add_to_cart'] as const), { id: record.id, type }, record.createdAt + 1000));
  }
}

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
  other = await createTenant(stack);
  orgDatasets.push({ id: t.datasetId, trackingId: null });
  for (let i = 0; i < 11; i++) {
    const trackingId = i % 3 === 0 ? `shop-${i}` : null;
    orgDatasets.push({ id: await createDataset(stack, t.orgId, t.ownerKey, trackingId ? { tracking_id: trackingId } : {}), trackingId });
  }
  deletedDataset = await createDataset(stack, t.orgId, t.ownerKey);
  store = stack.databaseUrl ? await openPgStore(stack.databaseUrl, { poolSize: 2 }) : openSqliteStore(stack.dataDir);

  // The dataset under report: 70 searches and 30 recommendations over 20 days, a few at the same
  // instant (ties go by id).
  for (let i = 0; i < 70; i++) {
    const at = i % 10 === 4 ? searches[searches.length - 1]!.createdAt : NOW - i * 7 * HOUR - Math.floor(rand() * HOUR);
    searches.push(searchRecord(t.datasetId, at));
  }
  for (let i = 0; i < 30; i++) recommendations.push(recommendationRecord(t.datasetId, NOW - i * 16 * HOUR - Math.floor(rand() * HOUR)));
  for (const s of searches) eventsFor(t.datasetId, s, 'search');
  for (const r of recommendations) eventsFor(t.datasetId, r, 'recommendation');
  // Clicks that must not count: of another dataset naming these records, and unlinked ones.
  events.push(userEvent(orgDatasets[1]!.id, 'click', { id: searches[0]!.id, type: 'search' }, NOW, 1));
  events.push(userEvent(orgDatasets[1]!.id, 'click', { id: searches[1]!.id, type: 'search' }, NOW, 2));
  events.push(userEvent(orgDatasets[1]!.id, 'click', { id: recommendations[1]!.id, type: 'recommendation' }, NOW, 2));
  events.push(userEvent(t.datasetId, 'click', null, NOW, 4));
  // A click stamped hours before its search (another machine's clock) still counts, also when the
  // search is just inside a date range (15 days) and the click just outside it.
  events.push(userEvent(t.datasetId, 'click', { id: searches[51]!.id, type: 'search' }, searches[51]!.createdAt - 4 * HOUR, 3));

  // Ratings: some searches rated, one rated twice (the second wins).
  const rated = searches.filter((_, i) => i % 4 === 0);
  await store.analytics.rate(rated.map((s, i) => ({ kind: 'search', datasetId: t.datasetId, queryId: s.id, rating: (i % 3) - 1, note: null, metadata: null, createdAt: NOW })));
  for (const [i, s] of rated.entries()) ratings.set(s.id, (i % 3) - 1);
  await store.analytics.rate([{ kind: 'search', datasetId: t.datasetId, queryId: rated[0]!.id, rating: 5, note: 'better', metadata: null, createdAt: NOW + 1 }]);
  ratings.set(rated[0]!.id, 5);

  // The other datasets: a few records each (some outside the last week), for the top report.
  const extra: { searches: SearchRecord[]; recs: RecommendationRecord[]; rags: RagRecord[] } = { searches: [], recs: [], rags: [] };
  const counts = [0, 3, 3, 8, 1, 0, 2, 4, 6, 7, 12, 5];
  orgDatasets.forEach((d, i) => {
    if (i === 0) return;
    for (let k = 0; k < counts[i]!; k++) extra.searches.push(searchRecord(d.id, NOW - (k % 3 === 0 ? 10 * DAY : HOUR * (k + 1))));
    for (let k = 0; k < (i * 5) % 7; k++) extra.recs.push(recommendationRecord(d.id, NOW - k * 2 * DAY));
    for (let k = 0; k < (i * 3) % 5; k++) extra.rags.push(ragRecord(d.id, NOW - k * 3 * DAY));
  });
  for (let k = 0; k < 40; k++) extra.searches.push(searchRecord(other.datasetId, NOW - HOUR));
  for (let k = 0; k < 40; k++) extra.searches.push(searchRecord(deletedDataset, NOW - HOUR));
  for (let k = 0; k < 9; k++) extra.rags.push(ragRecord(other.datasetId, NOW - HOUR));
  for (let k = 0; k < 3; k++) extra.rags.push(ragRecord(t.datasetId, NOW - k * 4 * DAY));
  allSearches.push(...searches, ...extra.searches);
  allRecommendations.push(...recommendations, ...extra.recs);
  allRags.push(...extra.rags);

  await store.analytics.insertSearches(allSearches);
  await store.analytics.insertRecommendations(allRecommendations);
  await store.analytics.insertRags(allRags);
  await store.userEvents.insertMany(events);
  const del = await t.org.del(`/api/dataset/${deletedDataset}`);
  expect(del.status, del.text).toBe(204);
}, 120_000);

const allSearches: SearchRecord[] = [];
const allRecommendations: RecommendationRecord[] = [];
const allRags: RagRecord[] = [];

afterAll(async () => {
  await store?.close();
  await stack?.stop();
});

/** `YYYY-MM-DD HH:MM:SS` (UTC), as the reports print times. */
const printed = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
/** A wire timestamp of epoch ms. */
const wire = (ms: number): string => new Date(ms).toISOString();

/** The valid clicks of each record of the dataset under report. */
function clicksOf(recordId: string): UserEvent[] {
  return events
    .filter((e) => e.datasetId === t.datasetId && e.eventType === 'click' && e.requestId === recordId)
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

interface Range {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}
const inRange = (v: number, r: Range | undefined): boolean =>
  !r || ((r.gt === undefined || v > r.gt) && (r.gte === undefined || v >= r.gte) && (r.lt === undefined || v < r.lt) && (r.lte === undefined || v <= r.lte));

/** A search filter as the test holds it (epoch ms) and as the wire sends it. */
interface SearchFilter {
  date?: Range;
  search_type?: string;
  search_method?: string;
  query?: string;
  query_rating?: Range;
  top_score?: Range;
  component_name?: string;
}

function wireFilter(f: SearchFilter & { recommendation_type?: string }): Record<string, unknown> {
  const { date, ...rest } = f;
  const out: Record<string, unknown> = { ...rest };
  if (date) out.date_range = Object.fromEntries(Object.entries(date).map(([k, v]) => [k, wire(v as number)]));
  return out;
}

const component = (metadata: unknown): string | undefined => (metadata as { component_name?: string } | null)?.component_name;

function matchingSearches(f: SearchFilter): SearchRecord[] {
  return searches.filter(
    (s) =>
      inRange(s.createdAt, f.date) &&
      (f.search_type === undefined || s.kind === f.search_type) &&
      (f.search_method === undefined || s.searchMethod === f.search_method) &&
      (f.query === undefined || s.query === f.query) &&
      inRange(s.topScore, f.top_score) &&
      (f.component_name === undefined || component(s.metadata) === f.component_name) &&
      (!f.query_rating || (ratings.has(s.id) && inRange(ratings.get(s.id)!, f.query_rating))),
  );
}

function matchingRecommendations(f: { date?: Range; recommendation_type?: string; top_score?: Range; component_name?: string }): RecommendationRecord[] {
  return recommendations.filter(
    (r) =>
      inRange(r.createdAt, f.date) &&
      (f.recommendation_type === undefined || r.recommendationType === f.recommendation_type) &&
      inRange(r.topScore, f.top_score) &&
      (f.component_name === undefined || component(r.metadata) === f.component_name),
  );
}

/** Metrics of a set of records as the oracle computes them. */
function metricsOf(records: readonly { id: string }[]): { withClicks: number; percentWith: number; percentWithout: number; avg: number } {
  const clicked = records.filter((r) => clicksOf(r.id).length > 0);
  const positions = records.flatMap((r) => clicksOf(r.id).map((c) => c.position!));
  const percentWith = records.length === 0 ? 0 : (clicked.length * 100) / records.length;
  return {
    withClicks: clicked.length,
    percentWith,
    percentWithout: records.length === 0 ? 0 : 100 - percentWith,
    avg: positions.length === 0 ? 0 : positions.reduce((a, b) => a + b, 0) / positions.length,
  };
}

const newestFirst = <T extends { id: string; createdAt: number }>(xs: readonly T[]): T[] =>
  [...xs].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/**
 * The rows of a `*_with_clicks` listing: one per click linked to one of `records`, newest click
 * first (ties by event id); the clicked chunks here are ids of no stored chunk, so shown as null.
 */
function clickRows<R extends { id: string }>(records: readonly R[], show: (r: R) => Record<string, unknown>): Record<string, unknown>[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  return events
    .filter((e) => e.datasetId === t.datasetId && e.eventType === 'click' && e.requestId !== null && byId.has(e.requestId))
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((e) => ({ ...show(byId.get(e.requestId!)!), created_at: printed(e.createdAt), clicked_chunk: { chunk: null, position: e.position } }));
}

/** A search as `searches_with_clicks` shows it, before the click's fields. */
const clickedSearch = (s: SearchRecord) => ({ request_id: s.id, query: s.query, results: s.results });
/** A search as `searches_without_clicks` shows it. */
const unclickedSearch = (s: SearchRecord) => ({ request_id: s.id, query: s.query, created_at: printed(s.createdAt) });

/** A recommendation's id lists as the reference shows them: null when empty. */
const recommendationIds = (r: RecommendationRecord) => {
  const list = (ids: readonly string[]) => (ids.length === 0 ? null : ids);
  return {
    positive_ids: list(r.positiveIds),
    negative_ids: list(r.negativeIds),
    positive_tracking_ids: list(r.positiveTrackingIds),
    negative_tracking_ids: list(r.negativeTrackingIds),
  };
};

/** Every page of a listing variant, until an empty one; checks each page holds at most 10. */
async function allPages(type: string, filter: Record<string, unknown>, key: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let page = 1; page < 50; page++) {
    const res = await t.ds.post('/api/analytics/events/ctr', { type, filter, page });
    expect(res.status, res.text).toBe(200);
    const rows = res.body[key] as unknown[];
    expect(rows.length).toBeLessThanOrEqual(10);
    if (rows.length === 0) return out;
    out.push(...rows);
  }
  throw new Error('too many pages');
}

const SEARCH_FILTERS: SearchFilter[] = [
  {},
  { date: { gte: NOW - 7 * DAY } },
  { date: { gt: NOW - 15 * DAY, lte: NOW - 3 * DAY } },
  { search_type: 'autocomplete' },
  { search_method: 'semantic', component_name: 'grid' },
  { query: 'socks' },
  { query_rating: { gte: 1 } },
  { query_rating: { lte: 0 } },
  { top_score: { gt: 0.5 } },
  { component_name: 'modal', date: { lt: NOW - 2 * DAY } },
];

describe('POST /api/analytics/events/ctr (searches)', () => {
  it('seeded enough to mean something', () => {
    const m = metricsOf(searches);
    expect(m.withClicks).toBeGreaterThan(10);
    expect(m.withClicks).toBeLessThan(searches.length - 10);
  });

  it.each(SEARCH_FILTERS.map((f) => [JSON.stringify(f), f] as const))('search_ctr_metrics %s', async (_, f) => {
    const res = await t.ds.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics', filter: wireFilter(f) });
    expect(res.status, res.text).toBe(200);
    const m = metricsOf(matchingSearches(f));
    expect(res.body.searches_with_clicks).toBe(m.withClicks);
    expect(res.body.percent_searches_with_clicks).toBeCloseTo(m.percentWith, 9);
    expect(res.body.percent_searches_without_clicks).toBeCloseTo(m.percentWithout, 9);
    expect(res.body.avg_position_of_click).toBeCloseTo(m.avg, 9);
  });

  it.each(SEARCH_FILTERS.slice(0, 5).map((f) => [JSON.stringify(f), f] as const))('searches with and without clicks %s', async (_, f) => {
    const matching = newestFirst(matchingSearches(f));
    expect(await allPages('searches_with_clicks', wireFilter(f), 'queries')).toEqual(clickRows(matching, clickedSearch));
    expect(await allPages('searches_without_clicks', wireFilter(f), 'queries')).toEqual(
      matching.filter((s) => clicksOf(s.id).length === 0).map(unclickedSearch),
    );
  });

  it('page 0 is page 1, no body filter is every search, and null reads as absent', async () => {
    const one = await t.ds.post('/api/analytics/events/ctr', { type: 'searches_with_clicks', page: 1 });
    const zero = await t.ds.post('/api/analytics/events/ctr', { type: 'searches_with_clicks', page: 0, filter: null });
    expect(one.status, one.text).toBe(200);
    expect(zero.body).toEqual(one.body);
    const metrics = await t.ds.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics', filter: { date_range: null, search_type: null } });
    expect(metrics.body.searches_with_clicks).toBe(metricsOf(searches).withClicks);
  });

  it('an empty selection answers zeros and empty pages', async () => {
    const f = { query: 'nothing like this' };
    const m = await t.ds.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics', filter: f });
    expect(m.body).toEqual({ searches_with_clicks: 0, percent_searches_with_clicks: 0, percent_searches_without_clicks: 0, avg_position_of_click: 0 });
    const l = await t.ds.post('/api/analytics/events/ctr', { type: 'searches_without_clicks', filter: f });
    expect(l.body).toEqual({ queries: [] });
  });

  it("another dataset's report sees none of these records", async () => {
    const res = await other.ds.post('/api/analytics/events/ctr', { type: 'searches_with_clicks' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ queries: [] });
  });
});

describe('POST /api/analytics/events/ctr (recommendations)', () => {
  const FILTERS = [{}, { date: { gte: NOW - 7 * DAY } }, { recommendation_type: 'Group' }, { component_name: 'grid', top_score: { lte: 0.6 } }];

  it.each(FILTERS.map((f) => [JSON.stringify(f), f] as const))('recommendation_ctr_metrics and pages %s', async (_, f) => {
    const res = await t.ds.post('/api/analytics/events/ctr', { type: 'recommendation_ctr_metrics', filter: wireFilter(f) });
    expect(res.status, res.text).toBe(200);
    const matching = matchingRecommendations(f);
    const m = metricsOf(matching);
    expect(res.body.recommendations_with_clicks).toBe(m.withClicks);
    expect(res.body.percent_recommendations_with_clicks).toBeCloseTo(m.percentWith, 9);
    expect(res.body.percent_recommendations_without_clicks).toBeCloseTo(m.percentWithout, 9);
    expect(res.body.avg_position_of_click).toBeCloseTo(m.avg, 9);
    const sorted = newestFirst(matching);
    expect(await allPages('recommendations_with_clicks', wireFilter(f), 'recommendations')).toEqual(
      clickRows(sorted, (r) => ({ ...recommendationIds(r), request_id: r.id, results: r.results })),
    );
    expect(await allPages('recommendations_without_clicks', wireFilter(f), 'recommendations')).toEqual(
      sorted.filter((r) => clicksOf(r.id).length === 0).map((r) => ({ ...recommendationIds(r), request_id: r.id, created_at: printed(r.createdAt) })),
    );
  });
});

describe('POST /api/analytics/top', () => {
  /** The oracle: t's organization's live datasets by records in range, top 10. */
  function top(records: readonly { datasetId: string; createdAt: number }[], range?: Range) {
    const live = new Map(orgDatasets.map((d) => [d.id, d.trackingId]));
    const counts = new Map<string, number>();
    for (const r of records) if (live.has(r.datasetId) && inRange(r.createdAt, range)) counts.set(r.datasetId, (counts.get(r.datasetId) ?? 0) + 1);
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 10)
      .map(([id, n]) => ({ dataset_id: id, dataset_tracking_id: live.get(id) ?? null, total_queries: n }));
  }

  const CASES: [string, Range | undefined][] = [
    ['search', undefined],
    ['search', { gte: NOW - 7 * DAY }],
    // Three hours whose bounds cut hours: the counts of the partial edge hours come from the
    // records, the whole hours between from the rollups; one of the searches an hour apart
    // (NOW - 1 h, 2 h, 3 h) falls in the edges.
    ['search', { gte: NOW - 3.5 * HOUR, lt: NOW - 0.5 * HOUR }],
    ['rag', undefined],
    ['rag', { gt: NOW - 5 * DAY }],
    ['recommendation', undefined],
    ['recommendation', { lt: NOW - DAY }],
  ];

  it.each(CASES)('%s in %j', async (type, range) => {
    const records = type === 'search' ? allSearches : type === 'rag' ? allRags : allRecommendations;
    const expected = top(records, range);
    expect(expected.length).toBeGreaterThan(2);
    const body: Record<string, unknown> = { type };
    if (range) body.date_range = Object.fromEntries(Object.entries(range).map(([k, v]) => [k, wire(v as number)]));
    const res = await t.org.post('/api/analytics/top', body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it('lists ten at most, and no dataset of another organization or deleted', async () => {
    const res = await t.org.post('/api/analytics/top', { type: 'search' });
    expect(res.body).toHaveLength(10);
    const ids = (res.body as { dataset_id: string }[]).map((d) => d.dataset_id);
    expect(ids).not.toContain(other.datasetId);
    expect(ids).not.toContain(deletedDataset);
    const theirs = await other.org.post('/api/analytics/top', { type: 'search' });
    expect(theirs.body).toEqual([{ dataset_id: other.datasetId, dataset_tracking_id: null, total_queries: 40 }]);
  });
});

describe('refusals', () => {
  const CTR_BAD: [string, unknown, RegExp][] = [
    ['unknown type', { type: 'clicks_per_day' }, /type must be one of search_ctr_metrics/],
    ['no type', { filter: {} }, /type/],
    ['type of the wrong type', { type: 7 }, /type must be one of/],
    ['not an object', ['search_ctr_metrics'], /body|expected object/i],
    ['negative page', { type: 'searches_with_clicks', page: -1 }, /page must be 0 or more/],
    ['page not a number', { type: 'searches_without_clicks', page: 'two' }, /page/],
    ['inverted date range', { type: 'search_ctr_metrics', filter: { date_range: { gt: '2024-02-01', lt: '2024-01-01' } } }, /date_range is empty/],
    ['bad timestamp', { type: 'search_ctr_metrics', filter: { date_range: { gte: 'last week' } } }, /Invalid timestamp/],
    ['bad search_type', { type: 'searches_with_clicks', filter: { search_type: 'rag_stuff' } }, /search_type must be one of/],
    ['bad recommendation_type', { type: 'recommendation_ctr_metrics', filter: { recommendation_type: 'chunk' } }, /recommendation_type must be Chunk or Group/],
    ['filter not an object', { type: 'search_ctr_metrics', filter: 'all' }, /filter/],
    ['inverted rating range', { type: 'search_ctr_metrics', filter: { query_rating: { gt: 3, lt: 1 } } }, /range is empty/],
  ];

  it.each(CTR_BAD)('ctr: %s → 400', async (_, body, message) => {
    const res = await t.ds.post('/api/analytics/events/ctr', body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  const TOP_BAD: [string, unknown, RegExp][] = [
    ['unknown type', { type: 'clicks' }, /type must be one of search, rag, recommendation/],
    ['no type', {}, /type/],
    ['type of the wrong type', { type: ['search'] }, /type must be one of/],
    ['inverted date range', { type: 'rag', date_range: { gte: '2024-02-01', lte: '2024-01-01 00:00:00' } }, /date_range is empty/],
    ['date range not an object', { type: 'search', date_range: 5 }, /date_range/],
  ];

  it.each(TOP_BAD)('top: %s → 400', async (_, body, message) => {
    const res = await t.org.post('/api/analytics/top', body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it('top needs TR-Organization; ctr needs TR-Dataset; both need an admin', async () => {
    const bare: Client = client(stack.baseUrl, { authorization: t.ownerKey });
    let res = await bare.post('/api/analytics/top', { type: 'search' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(/TR-Organization header is required/);
    res = await bare.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(/TR-Dataset header is required/);
    const readKey = await createKey(stack, t.orgId, { role: 0 });
    res = await client(stack.baseUrl, { authorization: readKey, 'tr-organization': t.orgId }).post('/api/analytics/top', { type: 'search' });
    expect(res.status, res.text).toBe(403);
    res = await client(stack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId }).post('/api/analytics/events/ctr', { type: 'search_ctr_metrics' });
    expect(res.status, res.text).toBe(403);
  });

  it("another organization's id or dataset → 404", async () => {
    let res = await t.org.post('/api/analytics/top', { type: 'search' }, { 'tr-organization': other.orgId });
    expect(res.status, res.text).toBe(404);
    res = await t.ds.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics' }, { 'tr-dataset': other.datasetId });
    expect(res.status, res.text).toBe(404);
    res = await t.ds.post('/api/analytics/events/ctr', { type: 'search_ctr_metrics' }, { 'tr-dataset': randomUUID() });
    expect(res.status, res.text).toBe(404);
  });
});
