/**
 * The published `trieve-ts-sdk` pointed at quarry, beyond keys, datasets, chunks and groups:
 * analytics reports, user events, CTR and ratings, experiments, topics, messages, generation from
 * chosen chunks and CSV/JSONL files. Every figure a report returns is compared with what the test
 * computed from what it sent; the LLM is the fake OpenAI-compatible server.
 */
import { TrieveSDK } from 'trieve-ts-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startFakeLlm, type FakeLlm, type FakeLlmBody } from '../helpers/fake-llm.js';
import { createOrganization, unique } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

// The SDK's generated types do not resolve under NodeNext (its index.d.ts re-exports
// "./types.gen" without an extension), so the shapes used here are restated from
// node_modules/trieve-ts-sdk/dist/types.gen.d.ts: they are what the SDK promises its callers.
/** SDK `ChunkMetadata` (the fields read here). */
interface ChunkMetadata { id: string; chunk_html?: string | null; tracking_id?: string | null; tag_set?: string[] | null; link?: string | null; num_value?: number | null; metadata?: unknown }
/** SDK `DatasetAnalytics` (search_metrics). */
interface DatasetAnalytics { avg_latency: number; p50: number; p95: number; p99: number; total_negative_ratings: number; total_positive_ratings: number; total_queries: number }
/** SDK `EventData`. */
interface EventData { created_at: string; dataset_id: string; event_name: string; event_type: string; id: string; is_conversion?: boolean | null; items: string[]; metadata?: unknown; request_id?: string | null; request_type?: string | null; updated_at: string; user_id?: string | null }
/** SDK `Experiment`. */
interface Experiment { area: string; control_name: string; control_split: number; created_at: string; dataset_id: string; id: string; name: string; t1_name: string; t1_split: number; updated_at: string }
/** SDK `HeadQueryResponse`. */
interface HeadQueryResponse { queries: { count: number; query: string }[] }
/** SDK `Message`. */
interface Message { completion_tokens?: number | null; content: string; created_at: string; dataset_id: string; deleted: boolean; id: string; prompt_tokens?: number | null; role: string; sort_order: number; topic_id: string; updated_at: string }
/** SDK `QueryCountResponse`. */
interface QueryCountResponse { total_queries: { search_count: number; search_method: string; search_type: string }[] }
/** SDK `RagQueryEvent`. */
interface RagQueryEvent { created_at: string; dataset_id: string; id: string; llm_response: string; rag_type: string; results: unknown[]; search_id: string; top_score: number; topic_id: string; user_id: string; user_message: string }
/** SDK `RagQueryResponse`. */
interface RagQueryResponse { queries: RagQueryEvent[] }
/** SDK `RecommendationEvent`. */
interface RecommendationEvent { created_at: string; dataset_id: string; id: string; negative_ids: string[]; negative_tracking_ids: string[]; positive_ids: string[]; positive_tracking_ids: string[]; recommendation_type: string; request_params: unknown; results: unknown[]; top_score: number; user_id: string }
/** SDK `SearchCTRMetrics`. */
interface SearchCTRMetrics { avg_position_of_click: number; percent_searches_with_clicks: number; percent_searches_without_clicks: number; searches_with_clicks: number }
/** SDK `SearchQueryEvent`. */
interface SearchQueryEvent { created_at: string; dataset_id: string; id: string; latency: number; query: string; query_rating?: { rating: number; note?: string | null } | null; request_params: unknown; results: unknown[]; search_type: string; top_score: number; user_id: string }
/** SDK `SearchQueryResponse`. */
interface SearchQueryResponse { queries: SearchQueryEvent[] }
/** SDK `SearchResponseBody` (V2). */
interface SearchResponseBody { id: string; chunks: { chunk: ChunkMetadata; score: number }[] }
/** SDK `Topic`. */
interface Topic { created_at: string; dataset_id: string; deleted: boolean; id: string; name: string; owner_id: string; updated_at: string }
/** SDK `FileData` (files of a dataset, by page). */
interface FileData { file_and_group_ids: { file: { id: string; file_name: string }; group_id?: string | null }[]; total_pages: number }
/** SDK `EventReturn` (the dataset's worker events). */
interface EventReturn { event_types: string[]; events: { created_at: string; dataset_id: string; event_data: string; event_type: string; id: string }[]; page_count: number }
/** SDK `FileDTO`. */
interface FileDTO { created_at: string; file_name: string; id: string; link?: string | null; metadata?: unknown; s3_url: string; size: number; updated_at: string }

let stack: Stack;
let llm: FakeLlm;
let orgId: string;
let ownerKey: string;
/** SDK with the owner key, scoped to the organization only. */
let owner: TrieveSDK;
/** The dataset of searches, events, recommendations and experiments. */
let analyticsDs: string;
let analytics: TrieveSDK;
/** The dataset answered by the fake model: topics, messages, generation, RAG reports. */
let ragDs: string;
let rag: TrieveSDK;
/** The dataset files are imported into. */
let filesDs: string;
let files: TrieveSDK;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SYSTEM = 'You are the SDK test assistant.';
const RAG_PROMPT = 'Answer from these documents:';
const analyticsTracking = unique('sdk-analytics');

/** An SDK scoped to one dataset of the organization, with the owner key. */
const scoped = (datasetId: string) => new TrieveSDK({ apiKey: ownerKey, baseUrl: stack.baseUrl, organizationId: orgId, datasetId });

beforeAll(async () => {
  llm = await startFakeLlm();
  stack = await startStack();
  orgId = await createOrganization(stack);
  const operator = new TrieveSDK({ apiKey: stack.adminKey, baseUrl: stack.baseUrl, organizationId: orgId });
  ownerKey = (await operator.createOrganizationApiKey({ name: 'sdk owner', role: 2 })).api_key;
  owner = new TrieveSDK({ apiKey: ownerKey, baseUrl: stack.baseUrl, organizationId: orgId });
  analyticsDs = (await owner.createDataset({ dataset_name: 'SDK analytics', tracking_id: analyticsTracking })).id;
  ragDs = (
    await owner.createDataset({
      dataset_name: 'SDK rag',
      server_configuration: { LLM_BASE_URL: llm.url, LLM_DEFAULT_MODEL: 'fake-model', SYSTEM_PROMPT: SYSTEM, RAG_PROMPT },
    })
  ).id;
  filesDs = (await owner.createDataset({ dataset_name: 'SDK files' })).id;
  analytics = scoped(analyticsDs);
  rag = scoped(ragDs);
  files = scoped(filesDs);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

/** Reads an SDK stream reader to its end (the whole body as text). */
async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const r = await reader.read();
    if (r.done) return text + decoder.decode();
    text += decoder.decode(r.value, { stream: true });
  }
}

/** Splits a topic message answer `<JSON chunks>||<completion>` (wire-format §4 Topics / messages). */
function splitAnswer(text: string): { chunks: Record<string, any>[]; completion: string } {
  const at = text.indexOf('||');
  expect(at, text).toBeGreaterThan(0);
  return { chunks: JSON.parse(text.slice(0, at)), completion: text.slice(at + 2) };
}

/** The SDK's own transport with TR-Dataset added: what `getAllAnalyticsEvents` would send if it named the dataset. */
function listEventsWithDataset(sdk: TrieveSDK, datasetId: string, data: Record<string, unknown>): Promise<{ events: EventData[] }> {
  return sdk.trieve.fetch('/api/analytics/events/all', 'post', { data, datasetId });
}

/** Groups and counts strings, most frequent first then by text (how head queries and funnels rank). */
function ranked(values: readonly string[]): { name: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

describe('search analytics, user events and CTR', () => {
  /** The searches sent, in order, with the id each answer carried. */
  const searches: { query: string; id: string; hits: number }[] = [];
  const QUERIES = ['red shoes', 'red shoes', 'wool coat', 'red shoes', 'purple zebra'];
  const chunkIds = new Map<string, string>();

  beforeAll(async () => {
    const made = await analytics.createChunk([
      { chunk_html: 'red running shoes', tracking_id: 'shoe' },
      { chunk_html: 'wool winter coat', tracking_id: 'coat' },
      { chunk_html: 'red wool hat', tracking_id: 'hat' },
    ]);
    for (const c of made.chunk_metadata as ChunkMetadata[]) chunkIds.set(c.tracking_id!, c.id);
    for (const query of QUERIES) {
      const res = (await analytics.search({ query, search_type: 'bm25', user_id: 'shopper-1' })) as SearchResponseBody;
      expect(res.id).toMatch(UUID);
      searches.push({ query, id: res.id, hits: res.chunks.length });
    }
    expect(searches.at(-1)!.hits).toBe(0);
    // Searches are recorded in the background: wait until all are reported.
    await eventually({ what: 'every search recorded', timeoutMs: 20_000 }, async () => {
      const m = (await analytics.getSearchAnalytics({ type: 'search_metrics' })) as DatasetAnalytics;
      return m.total_queries === QUERIES.length;
    });
  }, 60_000);

  it('search_metrics, head_queries, count_queries and search_usage_graph count what was searched', async () => {
    const metrics = (await analytics.getSearchAnalytics({ type: 'search_metrics' })) as DatasetAnalytics;
    expect(metrics).toMatchObject({ total_queries: QUERIES.length, total_positive_ratings: 0, total_negative_ratings: 0 });
    for (const k of ['avg_latency', 'p50', 'p95', 'p99'] as const) expect(typeof metrics[k]).toBe('number');

    const head = (await analytics.getSearchAnalytics({ type: 'head_queries', page: 1 })) as HeadQueryResponse;
    expect(head.queries).toEqual(ranked(QUERIES).map((q) => ({ query: q.name, count: q.count })));

    const counts = (await analytics.getSearchAnalytics({ type: 'count_queries' })) as QueryCountResponse;
    expect(counts.total_queries).toEqual([{ search_type: 'search', search_method: 'bm25', search_count: QUERIES.length }]);

    const usage = (await analytics.getSearchAnalytics({ type: 'search_usage_graph', granularity: 'day' })) as { total_searches: number; points: { point: number; time_stamp: string }[] };
    expect(usage.total_searches).toBe(QUERIES.length);
    expect(usage.points.reduce((a, p) => a + p.point, 0)).toBe(QUERIES.length);

    const latency = (await analytics.getSearchAnalytics({ type: 'latency_graph', granularity: 'day' })) as { points: { point: number; time_stamp: string }[] };
    expect(latency.points.length).toBeGreaterThan(0);
    for (const p of latency.points) expect(typeof p.time_stamp).toBe('string');
  });

  it('search_queries, no_result_queries and query_details return the SearchQueryEvent of each search', async () => {
    const listed = (await analytics.getSearchAnalytics({ type: 'search_queries', page: 1, sort_by: 'created_at', sort_order: 'asc' })) as SearchQueryResponse;
    expect(listed.queries.map((q) => q.id)).toEqual(searches.map((s) => s.id));
    expect(listed.queries.map((q) => q.query)).toEqual(QUERIES);
    for (const q of listed.queries) {
      expect(q).toMatchObject({ dataset_id: analyticsDs, search_type: 'search', user_id: 'shopper-1' });
      for (const k of ['created_at', 'id', 'latency', 'query', 'request_params', 'results', 'top_score']) expect(q, k).toHaveProperty(k);
      expect(Array.isArray(q.results)).toBe(true);
      expect(typeof q.latency).toBe('number');
      expect(typeof q.top_score).toBe('number');
    }

    const none = (await analytics.getSearchAnalytics({ type: 'no_result_queries', page: 1 })) as SearchQueryResponse;
    expect(none.queries.map((q) => q.query)).toEqual(['purple zebra']);

    const one = (await analytics.getSearchAnalytics({ type: 'query_details', request_id: searches[2]!.id })) as SearchQueryEvent;
    expect(one).toMatchObject({ id: searches[2]!.id, query: 'wool coat', dataset_id: analyticsDs });
    expect(one.results).toHaveLength(searches[2]!.hits);
  });

  it('rateSearchQuery stores the rating: query_details shows it, search_metrics counts it', async () => {
    await analytics.rateSearchQuery({ query_id: searches[0]!.id, rating: 1, note: 'good' });
    await analytics.rateSearchQuery({ query_id: searches[2]!.id, rating: 0 });
    const rated = await eventually({ what: 'the rating', timeoutMs: 10_000 }, async () => {
      const q = (await analytics.getSearchAnalytics({ type: 'query_details', request_id: searches[0]!.id })) as SearchQueryEvent;
      return q.query_rating ? q : undefined;
    });
    expect(rated.query_rating).toMatchObject({ rating: 1, note: 'good' });
    const metrics = await eventually({ what: 'both ratings counted', timeoutMs: 10_000 }, async () => {
      const m = (await analytics.getSearchAnalytics({ type: 'search_metrics' })) as DatasetAnalytics;
      return m.total_positive_ratings + m.total_negative_ratings === 100 ? m : undefined;
    });
    // Percentages of the rated searches (wire-format §4 Analytics: search_metrics).
    expect(metrics).toMatchObject({ total_positive_ratings: 50, total_negative_ratings: 50 });
  });

  /** Every event sent, for the oracles. */
  const sent: { event_type: string; event_name: string; request_id?: string; revenue?: number; position?: number; is_conversion: boolean }[] = [];

  it('sendAnalyticsEvent stores view, add_to_cart, click, purchase and filter_clicked events', async () => {
    const [s0, , s2] = searches;
    await analytics.sendAnalyticsEvent({ event_type: 'view', event_name: 'product page', items: [chunkIds.get('shoe')!], user_id: 'shopper-1', metadata: { page: 'pdp' } });
    sent.push({ event_type: 'view', event_name: 'product page', is_conversion: false });
    await analytics.sendAnalyticsEvent({
      event_type: 'click',
      event_name: 'result click',
      clicked_items: { chunk_id: chunkIds.get('shoe')!, position: 2 },
      request: { request_id: s0!.id, request_type: 'search' },
      user_id: 'shopper-1',
    });
    sent.push({ event_type: 'click', event_name: 'result click', request_id: s0!.id, position: 2, is_conversion: true });
    await analytics.sendAnalyticsEvent({
      event_type: 'add_to_cart',
      event_name: 'cart add',
      items: [chunkIds.get('shoe')!],
      request: { request_id: s0!.id, request_type: 'search' },
      user_id: 'shopper-1',
    });
    sent.push({ event_type: 'add_to_cart', event_name: 'cart add', request_id: s0!.id, is_conversion: true });
    await analytics.sendAnalyticsEvent({
      event_type: 'purchase',
      event_name: 'checkout',
      items: [
        { tracking_id: 'shoe', revenue: 120 },
        { tracking_id: 'hat', revenue: 30.5 },
      ],
      request: { request_id: s2!.id, request_type: 'search' },
      user_id: 'shopper-1',
    });
    sent.push({ event_type: 'purchase', event_name: 'checkout', request_id: s2!.id, revenue: 150.5, is_conversion: true });
    await analytics.sendAnalyticsEvent({ event_type: 'filter_clicked', event_name: 'colour filter', items: { 'match_any::tag_set': 'red' }, user_id: 'shopper-2' });
    // The reference defaults is_conversion to true for every type but view (models.rs, EventTypes::FilterClicked).
    sent.push({ event_type: 'filter_clicked', event_name: 'colour filter', is_conversion: true });

    const listed = await listEventsWithDataset(analytics, analyticsDs, { page: 1 });
    expect(listed.events).toHaveLength(sent.length);
    const byName = new Map(listed.events.map((e) => [e.event_name, e]));
    for (const s of sent) {
      const e = byName.get(s.event_name)!;
      expect(e, s.event_name).toBeDefined();
      expect(e).toMatchObject({ event_type: s.event_type, dataset_id: analyticsDs });
      // filter_clicked's default is checked last, below.
      if (s.event_type !== 'filter_clicked') expect(e.is_conversion, s.event_name).toBe(s.is_conversion);
      expect(e.id).toMatch(UUID);
      expect(typeof e.created_at).toBe('string');
      expect(typeof e.updated_at).toBe('string');
      if (s.request_id) expect(e).toMatchObject({ request_id: s.request_id, request_type: 'search' });
    }
    expect(byName.get('product page')!.items).toEqual([chunkIds.get('shoe')]);
    // Clicked item and purchase items are kept as JSON strings, the filter in metadata (as the reference stores them).
    expect(byName.get('result click')!.items).toEqual([JSON.stringify({ chunk_id: chunkIds.get('shoe'), position: 2 })]);
    expect(byName.get('checkout')!.items.map((i) => JSON.parse(i) as unknown)).toEqual([
      { tracking_id: 'shoe', revenue: 120 },
      { tracking_id: 'hat', revenue: 30.5 },
    ]);
    expect(byName.get('colour filter')!.items).toEqual([]);
    expect(JSON.parse(byName.get('colour filter')!.metadata as string)).toEqual({ 'match_any::tag_set': 'red' });
    const clicks = await listEventsWithDataset(analytics, analyticsDs, { filter: { event_type: 'click' } });
    expect(clicks.events.map((e) => e.event_name)).toEqual(['result click']);
    const ofUser = await listEventsWithDataset(analytics, analyticsDs, { filter: { user_id: 'shopper-2' } });
    expect(ofUser.events.map((e) => e.event_name)).toEqual(['colour filter']);
    expect(byName.get('colour filter')!.is_conversion).toBe(true);
  });

  it('getAllAnalyticsEvents, which names no dataset, is refused with a message naming TR-Dataset', async () => {
    // The SDK method sends Authorization and TR-Organization only. The reference's handler needs
    // the dataset too (it answers 500 there), so the method cannot work against either service:
    // what quarry owes is a clear refusal, not a 500 or another dataset's events.
    await expect(analytics.getAllAnalyticsEvents({ page: 1 })).rejects.toThrow(/TR-Dataset/);
  });

  it('sendCTRAnalytics (deprecated click) and getCTRAnalytics report the clicks linked to searches', async () => {
    await analytics.sendCTRAnalytics({ ctr_type: 'search', request_id: searches[1]!.id, clicked_chunk_id: chunkIds.get('shoe')!, position: 4 });
    sent.push({ event_type: 'click', event_name: 'click', request_id: searches[1]!.id, position: 4, is_conversion: true });

    const clicks = sent.filter((s) => s.event_type === 'click');
    const withClicks = new Set(clicks.map((c) => c.request_id));
    const expected: SearchCTRMetrics = {
      searches_with_clicks: withClicks.size,
      percent_searches_with_clicks: (withClicks.size * 100) / searches.length,
      percent_searches_without_clicks: 100 - (withClicks.size * 100) / searches.length,
      avg_position_of_click: clicks.reduce((a, c) => a + c.position!, 0) / clicks.length,
    };
    const metrics = (await analytics.getCTRAnalytics({ type: 'search_ctr_metrics' })) as SearchCTRMetrics;
    expect(metrics.searches_with_clicks).toBe(expected.searches_with_clicks);
    expect(metrics.percent_searches_with_clicks).toBeCloseTo(expected.percent_searches_with_clicks, 9);
    expect(metrics.percent_searches_without_clicks).toBeCloseTo(expected.percent_searches_without_clicks, 9);
    expect(metrics.avg_position_of_click).toBeCloseTo(expected.avg_position_of_click, 9);
  });

  it('getCTRAnalytics searches_with_clicks / searches_without_clicks have the SDK shapes', async () => {
    const withRes = (await analytics.getCTRAnalytics({ type: 'searches_with_clicks', page: 1 })) as { queries: Record<string, any>[] };
    expect(withRes.queries).toHaveLength(2);
    for (const q of withRes.queries) {
      // SearchQueriesWithClicksCTRResponse: request_id, query, created_at, results, clicked_chunk {chunk, position}.
      expect(Object.keys(q).sort()).toEqual(['clicked_chunk', 'created_at', 'query', 'request_id', 'results']);
      expect(q.query).toBe('red shoes');
      expect(q.clicked_chunk.chunk.id).toBe(chunkIds.get('shoe'));
      expect([2, 4]).toContain(q.clicked_chunk.position);
    }
    expect(withRes.queries.map((q) => q.request_id).sort()).toEqual([searches[0]!.id, searches[1]!.id].sort());
    const withoutRes = (await analytics.getCTRAnalytics({ type: 'searches_without_clicks', page: 1 })) as { queries: Record<string, any>[] };
    expect(withoutRes.queries).toHaveLength(searches.length - 2);
    for (const q of withoutRes.queries) expect(Object.keys(q).sort()).toEqual(['created_at', 'query', 'request_id']);
    expect(withoutRes.queries.map((q) => q.request_id).sort()).toEqual(searches.slice(2).map((s) => s.id).sort());
  });

  it('event_funnel, search_conversion_rate, search_revenue and ctr_metrics_over_time follow the events sent', async () => {
    const funnel = (await analytics.getSearchAnalytics({ type: 'event_funnel' })) as { event_names: { event_name: string; event_count: number }[] };
    expect(funnel.event_names).toEqual(ranked(sent.map((s) => s.event_name)).map((r) => ({ event_name: r.name, event_count: r.count })));

    const converted = new Set(sent.filter((s) => s.is_conversion && s.request_id).map((s) => s.request_id));
    const conv = (await analytics.getSearchAnalytics({ type: 'search_conversion_rate', granularity: 'day' })) as { conversion_rate: number };
    expect(conv.conversion_rate).toBeCloseTo(converted.size / searches.length, 9);

    const revenue = (await analytics.getSearchAnalytics({ type: 'search_revenue', direct: true, granularity: 'day' })) as { avg_revenue: number; points: { point: number }[] };
    expect(revenue.avg_revenue).toBeCloseTo(150.5 / searches.length, 6);
    expect(revenue.points.reduce((a, p) => a + p.point, 0)).toBeCloseTo(150.5, 6);

    const ctr = (await analytics.getSearchAnalytics({ type: 'ctr_metrics_over_time', granularity: 'day' })) as { total_ctr: number };
    expect(ctr.total_ctr).toBeCloseTo(2 / searches.length, 9);
  });

  it('getTopDatasets ranks the organization\'s datasets by searches', async () => {
    const top = await owner.getTopDatasets({ organizationId: orgId, type: 'search' });
    expect(top).toEqual([{ dataset_id: analyticsDs, dataset_tracking_id: analyticsTracking, total_queries: searches.length }]);
  });

  /** The recommendation made through the SDK. */
  let rec: { id: string; chunks: { chunk: { id: string }; score: number }[] };

  it('getRecommendedChunks is recorded and reported by getRecommendationAnalytics', async () => {
    rec = (await analytics.getRecommendedChunks({ positive_tracking_ids: ['shoe'], recommend_type: 'bm25', user_id: 'shopper-1' })) as typeof rec;
    expect(rec.id).toMatch(UUID);
    const shown = await eventually({ what: 'the recommendation recorded', timeoutMs: 20_000 }, async () => {
      try {
        return (await analytics.getRecommendationAnalytics({ type: 'query_details', request_id: rec.id })) as RecommendationEvent;
      } catch {
        return undefined;
      }
    });
    expect(shown).toMatchObject({ id: rec.id, recommendation_type: 'Chunk', positive_tracking_ids: ['shoe'], positive_ids: [], negative_ids: [], negative_tracking_ids: [], dataset_id: analyticsDs, user_id: 'shopper-1' });
    const listed = (await analytics.getRecommendationAnalytics({ type: 'recommendation_queries', page: 1 })) as { queries: RecommendationEvent[] };
    expect(listed.queries.map((q) => q.id)).toEqual([rec.id]);
    const usage = (await analytics.getRecommendationAnalytics({ type: 'recommendation_usage_graph', granularity: 'day' })) as { total_requests: number };
    expect(usage.total_requests).toBe(1);
    const low = (await analytics.getRecommendationAnalytics({ type: 'low_confidence_recommendations', threshold: shown.top_score + 1 })) as { queries: RecommendationEvent[] };
    expect(low.queries.map((q) => q.id)).toEqual([rec.id]);
    const top = await owner.getTopDatasets({ organizationId: orgId, type: 'recommendation' });
    expect(top).toEqual([{ dataset_id: analyticsDs, dataset_tracking_id: analyticsTracking, total_queries: 1 }]);
  });

  it('getCTRAnalytics recommendation_ctr_metrics / recommendations_with_clicks report a click on the recommendation', async () => {
    const clicked = rec.chunks[0]!.chunk.id;
    await analytics.sendAnalyticsEvent({ event_type: 'click', event_name: 'rec click', clicked_items: { chunk_id: clicked, position: 1 }, request: { request_id: rec.id, request_type: 'recommendation' } });
    const metrics = (await analytics.getCTRAnalytics({ type: 'recommendation_ctr_metrics' })) as Record<string, number>;
    expect(metrics).toEqual({ recommendations_with_clicks: 1, percent_recommendations_with_clicks: 100, percent_recommendations_without_clicks: 0, avg_position_of_click: 1 });
    const withClicks = (await analytics.getCTRAnalytics({ type: 'recommendations_with_clicks', page: 1 })) as { recommendations: Record<string, any>[] };
    expect(withClicks.recommendations).toHaveLength(1);
    // RecommendationsWithClicksCTRResponse: request_id, created_at, results, clicked_chunk {chunk, position}, the id lists.
    expect(withClicks.recommendations[0]).toMatchObject({ request_id: rec.id, positive_tracking_ids: ['shoe'], clicked_chunk: { chunk: { id: clicked }, position: 1 } });
    const without = (await analytics.getCTRAnalytics({ type: 'recommendations_without_clicks', page: 1 })) as { recommendations: unknown[] };
    expect(without.recommendations).toEqual([]);
  });
});

describe('experiments', () => {
  it('createExperiment, getExperiments, getExperiment, getTreatment, updateExperiment, deleteExperiment', async () => {
    const config = { area: 'search', t1_name: 'blue', t1_split: 1, control_name: 'red', control_split: 0 };
    const created: Experiment = await analytics.createExperiment({ name: 'Button colour', experiment_config: config });
    expect(created).toMatchObject({ name: 'Button colour', dataset_id: analyticsDs, ...config });
    expect(created.id).toMatch(UUID);
    // The spec's experiment timestamp shape.
    expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(created.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

    expect(await analytics.getExperiments()).toEqual([created]);
    expect(await analytics.getExperiment(created.id)).toEqual(created);

    // t1_split 1: every user is in t1; asking again gives the same arm.
    const first = await analytics.getTreatment({ experiment_id: created.id, user_id: 'user-a' });
    expect(first).toEqual({ experiment_id: created.id, user_id: 'user-a', treatment_name: 'blue' });
    expect(await analytics.getTreatment({ experiment_id: created.id, user_id: 'user-a' })).toEqual(first);

    const next = { area: 'search', t1_name: 'green', t1_split: 0, control_name: 'grey', control_split: 1 };
    const updated = await analytics.updateExperiment({ id: created.id, name: 'Button colour v2', experiment_config: next });
    expect(updated).toMatchObject({ id: created.id, name: 'Button colour v2', ...next, created_at: created.created_at });
    expect(await analytics.getExperiment(created.id)).toMatchObject({ name: 'Button colour v2', t1_name: 'green', control_name: 'grey' });
    expect(await analytics.getTreatment({ experiment_id: created.id, user_id: 'user-b' })).toEqual({ experiment_id: created.id, user_id: 'user-b', treatment_name: 'grey' });

    await analytics.deleteExperiment(created.id);
    await expect(analytics.getExperiment(created.id)).rejects.toThrow(/Not Found/);
    expect(await analytics.getExperiments()).toEqual([]);
  });
});

describe('generation from chosen chunks', () => {
  let ids: string[];
  const conversation = [
    { role: 'user' as const, content: 'Which bird quacks?' },
    { role: 'assistant' as const, content: 'Let me look.' },
    { role: 'user' as const, content: 'Tell me which one quacks.' },
  ];
  let streamedQueryId: string;

  beforeAll(async () => {
    const made = await rag.createChunk(['Ducks quack loudly.', 'Geese honk at dawn.'].map((chunk_html, i) => ({ chunk_html, tracking_id: `bird-${i}` })));
    ids = (made.chunk_metadata as ChunkMetadata[]).map((c) => c.id);
  });

  /** The text of every message the model received. */
  const promptText = (body: FakeLlmBody) => body.messages.map((m) => String(m.content)).join('\n');

  it('ragOnChunk without streaming answers the scripted text as a JSON string', async () => {
    llm.script({ reply: 'Ducks quack [1].' });
    const before = llm.requests.length;
    const answer = await rag.ragOnChunk({ prev_messages: conversation, chunk_ids: [ids[0]!], stream_response: false, user_id: 'rag-user' });
    expect(answer).toBe('Ducks quack [1].');
    expect(llm.requests.length).toBe(before + 1);
    const sent = llm.requests.at(-1)!.body;
    expect(sent.model).toBe('fake-model');
    expect(sent.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expect(promptText(sent)).toContain('Ducks quack loudly.');
    expect(promptText(sent)).not.toContain('Geese honk');
    expect(String(sent.messages.at(-1)!.content)).toContain('Tell me which one quacks.');
  });

  it('ragOnChunk with the default (streaming) answers the raw text', async () => {
    llm.script({ reply: 'Geese honk at dawn [1].', tokenDelayMs: 2 });
    const answer = await rag.ragOnChunk({ prev_messages: conversation, chunk_ids: [ids[1]!] });
    expect(answer).toBe('Geese honk at dawn [1].');
  });

  it('ragOnChunkReaderWithQueryId streams the scripted text and names the RAG record', async () => {
    llm.script({ reply: 'Ducks quack [1], geese honk [2].', tokenDelayMs: 2 });
    const { reader, queryId } = await rag.ragOnChunkReaderWithQueryId({ prev_messages: conversation, chunk_ids: ids, user_id: 'rag-user' });
    expect(await readAll(reader)).toBe('Ducks quack [1], geese honk [2].');
    expect(queryId).toMatch(UUID);
    streamedQueryId = queryId!;
    const sent = llm.requests.at(-1)!.body;
    expect(sent.stream).toBe(true);
    expect(promptText(sent)).toContain('Ducks quack loudly.');
    expect(promptText(sent)).toContain('Geese honk at dawn.');
  });

  it('getRagAnalytics reports the three answers; rateRagQuery is counted', async () => {
    const usage = await eventually({ what: 'three RAG answers recorded', timeoutMs: 20_000 }, async () => {
      const u = (await rag.getRagAnalytics({ type: 'rag_usage' })) as { total_queries: number };
      return u.total_queries === 3 ? u : undefined;
    });
    expect(usage).toEqual({ total_queries: 3 });
    const listed = (await rag.getRagAnalytics({ type: 'rag_queries', page: 1, sort_by: 'created_at', sort_order: 'asc' })) as RagQueryResponse;
    expect(listed.queries.map((q) => q.llm_response)).toEqual(['Ducks quack [1].', 'Geese honk at dawn [1].', 'Ducks quack [1], geese honk [2].']);
    for (const q of listed.queries) {
      expect(q).toMatchObject({ rag_type: 'chosen_chunks', dataset_id: ragDs, user_message: 'Tell me which one quacks.' });
      // Every required field of the SDK's RagQueryEvent (metadata and query_rating are optional).
      for (const k of ['created_at', 'dataset_id', 'detected_hallucinations', 'hallucination_score', 'id', 'llm_response', 'rag_type', 'results', 'search_id', 'top_score', 'topic_id', 'user_id', 'user_message']) expect(q, k).toHaveProperty(k);
    }
    expect([listed.queries[0]!.user_id, listed.queries[2]!.user_id]).toEqual(['rag-user', 'rag-user']);
    // Streaming: the stored record is the one TR-QueryID names (quarry's documented fix of the reference quirk).
    const details = (await rag.getRagAnalytics({ type: 'rag_query_details', request_id: streamedQueryId })) as RagQueryEvent;
    expect(details).toMatchObject({ id: streamedQueryId, llm_response: 'Ducks quack [1], geese honk [2].' });

    const top = await owner.getTopDatasets({ organizationId: orgId, type: 'rag' });
    expect(top).toEqual([{ dataset_id: ragDs, dataset_tracking_id: null, total_queries: 3 }]);

    await rag.rateRagQuery({ query_id: streamedQueryId, rating: 1 });
    const ratings = await eventually({ what: 'the RAG rating', timeoutMs: 10_000 }, async () => {
      const r = (await rag.getRagAnalytics({ type: 'rag_query_ratings' })) as { total_positive_ratings: number; total_negative_ratings: number };
      return r.total_positive_ratings + r.total_negative_ratings > 0 ? r : undefined;
    });
    // Counts, not shares: the reference's rag_query_ratings is countIf(...) (unlike search_metrics' percentages).
    expect(ratings).toEqual({ total_positive_ratings: 1, total_negative_ratings: 0 });
  });
});

describe('topics and messages', () => {
  const OWNER = unique('sdk-owner');
  let topic: Topic;
  /** getAllTopics typed as the SDK declares it. */
  const topicsOf = async (ownerId: string) => (await rag.getAllTopics({ ownerId })) as Topic[];
  /** getAllMessagesForTopic typed as the SDK declares it. */
  const messagesOf = async (topicId: string) => (await rag.getAllMessagesForTopic({ messagesTopicId: topicId })) as Message[];

  beforeAll(async () => {
    await rag.createChunk([
      { chunk_html: 'Cats eat fish and chicken every day.', tracking_id: 'cats' },
      { chunk_html: 'Dogs eat meat and bones.', tracking_id: 'dogs' },
      { chunk_html: 'Parrots eat seeds and fruit.', tracking_id: 'parrots' },
    ]);
  });

  it('createTopic with a name, and with a first message named by the model', async () => {
    topic = await rag.createTopic({ owner_id: OWNER, name: 'Pets' });
    expect(Object.keys(topic).sort()).toEqual(['created_at', 'dataset_id', 'deleted', 'id', 'name', 'owner_id', 'updated_at']);
    expect(topic).toMatchObject({ name: 'Pets', owner_id: OWNER, dataset_id: ragDs, deleted: false });
    llm.script({ reply: 'Feeding Cats' });
    const named = await rag.createTopic({ owner_id: OWNER, first_user_message: 'what should my cat eat?' });
    expect(named.name).toBe('Feeding Cats');
    expect(JSON.stringify(llm.requests.at(-1)!.body.messages)).toContain('what should my cat eat?');
    const listed = await topicsOf(OWNER);
    expect(listed.map((t) => t.id).sort()).toEqual([topic.id, named.id].sort());
    await rag.deleteTopic({ topicId: named.id });
    expect((await topicsOf(OWNER)).map((t) => t.id)).toEqual([topic.id]);
  });

  it('createMessageReaderWithQueryId streams <chunks>||<completion>; createMessage answers it whole', async () => {
    llm.script({ reply: 'Cats eat fish [1].', tokenDelayMs: 2 });
    const { reader, queryId } = await rag.createMessageReaderWithQueryId({ topic_id: topic.id, new_message_content: 'what do cats eat', search_type: 'bm25', page_size: 2 });
    const streamed = await readAll(reader);
    expect(queryId).toMatch(UUID);
    const first = splitAnswer(streamed);
    expect(first.completion).toBe('Cats eat fish [1].');
    expect(first.chunks[0]).toMatchObject({ tracking_id: 'cats', chunk_html: 'Cats eat fish and chicken every day.' });
    expect(String(llm.requests.at(-1)!.body.messages.at(-1)!.content)).toContain('Cats eat fish and chicken every day.');

    llm.script({ reply: 'Dogs eat meat [1].' });
    const whole = await rag.createMessage({ topic_id: topic.id, new_message_content: 'what do dogs eat', search_type: 'bm25', page_size: 1, llm_options: { stream_response: false } });
    expect(typeof whole).toBe('string');
    const second = splitAnswer(whole);
    expect(second.completion).toBe('Dogs eat meat [1].');
    expect(second.chunks.map((c) => c.tracking_id)).toEqual(['dogs']);
    // The model got the first turn as history.
    const history = llm.requests.at(-1)!.body.messages.map((m) => ({ role: m.role, content: m.content }));
    expect(history.slice(0, 3)).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'what do cats eat' },
      { role: 'assistant', content: 'Cats eat fish [1].' },
    ]);

    const stored = await messagesOf(topic.id);
    expect(stored.map((m) => [m.sort_order, m.role, m.content])).toEqual([
      [1, 'user', 'what do cats eat'],
      [2, 'assistant', streamed],
      [3, 'user', 'what do dogs eat'],
      [4, 'assistant', whole],
    ]);
    for (const m of stored) expect(m).toMatchObject({ topic_id: topic.id, dataset_id: ragDs, deleted: false });
  });

  it('getMessageById returns one stored message', async () => {
    const stored = await messagesOf(topic.id);
    expect(await rag.getMessageById({ messageId: stored[2]!.id })).toEqual(stored[2]);
  });

  it('editMessage replaces a question and its answer; regenerateMessage replaces the last answer', async () => {
    const before = await messagesOf(topic.id);
    llm.script({ reply: 'Parrots eat seeds [1].' });
    const edited = await rag.editMessage({ topic_id: topic.id, message_sort_order: 3, new_message_content: 'what do parrots eat', search_type: 'bm25', page_size: 1 });
    expect(splitAnswer(edited).completion).toBe('Parrots eat seeds [1].');
    let after = await messagesOf(topic.id);
    expect(after.map((m) => [m.sort_order, m.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'assistant'],
    ]);
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(after[2]!.content).toBe('what do parrots eat');
    expect(after[3]!.content).toBe(edited);

    llm.script({ reply: 'Seeds and fruit [1].' });
    const regenerated = await rag.regenerateMessage({ topic_id: topic.id, search_type: 'bm25', page_size: 1 });
    expect(splitAnswer(regenerated).completion).toBe('Seeds and fruit [1].');
    expect(String(llm.requests.at(-1)!.body.messages.at(-1)!.content)).toMatch(/^Here's my prompt: what do parrots eat/);
    after = await messagesOf(topic.id);
    expect(after).toHaveLength(4);
    expect(after[3]!.content).toBe(regenerated);

    llm.script({ reply: 'Fruit too [1].', tokenDelayMs: 2 });
    const streamedAgain = await readAll(await rag.regenerateMessageReader({ topic_id: topic.id, search_type: 'bm25', page_size: 1 }));
    expect(splitAnswer(streamedAgain).completion).toBe('Fruit too [1].');
    expect((await messagesOf(topic.id)).map((m) => m.content)).toEqual([...after.slice(0, 3).map((m) => m.content), streamedAgain]);
  });

  it('updateTopic renames; cloneTopic copies the topic with its messages to another owner', async () => {
    await rag.updateTopic({ topic_id: topic.id, name: 'Pet food' });
    expect((await topicsOf(OWNER)).find((t) => t.id === topic.id)).toMatchObject({ name: 'Pet food' });
    const other = unique('sdk-clone-owner');
    const clone = await rag.cloneTopic({ topic_id: topic.id, owner_id: other, name: 'Cloned' });
    expect(clone).toMatchObject({ owner_id: other, name: 'Cloned', dataset_id: ragDs, deleted: false });
    expect(clone.id).not.toBe(topic.id);
    expect((await topicsOf(other)).map((t) => t.id)).toEqual([clone.id]);
    const original = await messagesOf(topic.id);
    const copied = await messagesOf(clone.id);
    expect(copied.map((m) => [m.sort_order, m.role, m.content])).toEqual(original.map((m) => [m.sort_order, m.role, m.content]));
    expect(copied.every((m) => m.topic_id === clone.id)).toBe(true);
    await rag.deleteTopic({ topicId: clone.id });
    expect(await topicsOf(other)).toEqual([]);
  });

  it('getRagAnalytics topic_details lists the topic\'s answers', async () => {
    const details = await eventually({ what: 'the topic\'s answers recorded', timeoutMs: 20_000 }, async () => {
      const d = (await rag.getRagAnalytics({ type: 'topic_details', topic_id: topic.id })) as { topic: Record<string, unknown>; messages: RagQueryEvent[] };
      return d.messages.length >= 2 ? d : undefined;
    });
    for (const m of details.messages) expect(m).toMatchObject({ topic_id: topic.id, rag_type: 'all_chunks' });
    expect(details.topic).toMatchObject({ topic_id: topic.id, owner_id: OWNER, name: 'Pet food', dataset_id: ragDs });
    // TopicQuery of the SDK (metadata optional); quarry adds message_count.
    expect(Object.keys(details.topic)).toEqual(expect.arrayContaining(['created_at', 'dataset_id', 'id', 'name', 'owner_id', 'topic_id', 'updated_at']));
    expect(details.topic.id).toBe(topic.id);
  });
});

describe('files', () => {
  /** Waits until the file's import has ended (quarry reports `status` on GET /api/file). */
  const finished = (fileId: string) =>
    eventually({ what: `file ${fileId} imported`, timeoutMs: 30_000 }, async () => {
      const f = (await files.getFile({ fileId })) as unknown as Record<string, any>;
      return f.status === 'done' || f.status === 'failed' ? f : undefined;
    });

  const csv = 'sku,title,price,tags\r\nA-1,Trail boot,129.5,hiking\r\nA-2,Linen shirt,49,summer\r\n';
  let csvFileId: string;

  it('createPresignedUrlForCsvJsonl + PUT imports a CSV with its mappings; getFile describes it', async () => {
    const created = await files.createPresignedUrlForCsvJsonl({
      file_name: 'products.csv',
      description: 'spring catalogue',
      link: 'https://shop.example/catalogue',
      metadata: { source: 'erp' },
      tag_set: ['catalogue'],
      group_tracking_id: 'spring',
      mappings: [
        { csv_jsonl_field: 'sku', chunk_req_payload_field: 'tracking_id' },
        { csv_jsonl_field: 'price', chunk_req_payload_field: 'num_value' },
        { csv_jsonl_field: 'tags', chunk_req_payload_field: 'tag_set' },
      ],
    });
    expect(created.file_metadata).toMatchObject({ file_name: 'products.csv', dataset_id: filesDs, link: 'https://shop.example/catalogue', metadata: { source: 'erp' } });
    expect(created.file_metadata.id).toMatch(UUID);
    csvFileId = created.file_metadata.id;
    const put = await fetch(created.presigned_put_url, { method: 'PUT', body: csv });
    expect(put.status, await put.text()).toBe(200);
    const done = await finished(csvFileId);
    expect(done.status).toBe('done');

    const file = (await files.getFile({ fileId: csvFileId })) as FileDTO;
    expect(file).toMatchObject({ id: csvFileId, file_name: 'products.csv', size: Buffer.byteLength(csv), link: 'https://shop.example/catalogue' });
    expect(typeof file.s3_url).toBe('string');
    expect(await (await fetch(file.s3_url)).text()).toBe(csv);

    const boot = (await files.getChunkByTrackingId({ trackingId: 'A-1' })) as ChunkMetadata;
    expect(JSON.parse(boot.chunk_html!)).toEqual({ sku: 'A-1', title: 'Trail boot', price: '129.5', tags: 'hiking' });
    expect(boot.num_value).toBe(129.5);
    expect([...(boot.tag_set as string[])].sort()).toEqual(['catalogue', 'hiking']);
    expect(boot.link).toBe('https://shop.example/catalogue');
    expect(boot.metadata).toMatchObject({ source: 'erp', sku: 'A-1', title: 'Trail boot' });
    expect(((await files.getChunkByTrackingId({ trackingId: 'A-2' })) as ChunkMetadata).num_value).toBe(49);
  });

  it('a JSONL upload makes <group_tracking_id>|<row> chunks', async () => {
    const created = await files.createPresignedUrlForCsvJsonl({ file_name: 'shelf.jsonl', group_tracking_id: 'shelf' });
    const put = await fetch(created.presigned_put_url, { method: 'PUT', body: '{"name":"first","n":1}\n{"name":"second","n":2}\n' });
    expect(put.status).toBe(200);
    expect((await finished(created.file_metadata.id)).status).toBe('done');
    const rows = await files.getChunksByTrackingIds({ tracking_ids: ['shelf|0', 'shelf|1'] });
    expect((rows as ChunkMetadata[]).map((c) => JSON.parse(c.chunk_html!))).toEqual([
      { name: 'first', n: 1 },
      { name: 'second', n: 2 },
    ]);
  });

  it('uploadFile (base64) splits a document into chunks of the file\'s group', async () => {
    const text = '# Care\n\nOil the leather boots monthly.\n';
    const res = await files.uploadFile({ base64_file: Buffer.from(text).toString('base64'), file_name: 'care.md', group_tracking_id: 'care' });
    expect(res.file_metadata).toMatchObject({ file_name: 'care.md', dataset_id: filesDs });
    const done = await finished(res.file_metadata.id);
    expect(done.status, done.failure).toBe('done');
    const first = (await files.getChunkByTrackingId({ trackingId: 'care|0' })) as ChunkMetadata;
    expect(first.chunk_html).toContain('Oil the leather boots monthly.');
    await files.deleteFile({ fileId: res.file_metadata.id, deleteChunks: true });
    await expect(files.getChunkByTrackingId({ trackingId: 'care|0' })).rejects.toThrow(/Not Found/);
  });

  it('getFilesForDataset lists both files with their groups', async () => {
    const listed = (await files.getFilesForDataset({ page: 1 })) as FileData;
    expect(listed.total_pages).toBe(1);
    expect(listed.file_and_group_ids.map((f) => f.file.file_name).sort()).toEqual(['products.csv', 'shelf.jsonl']);
    const csvEntry = listed.file_and_group_ids.find((f) => f.file.id === csvFileId)!;
    expect(csvEntry.group_id).toMatch(UUID);
    const group = (await files.getGroup({ groupId: csvEntry.group_id! })) as Record<string, unknown>;
    expect(group).toMatchObject({ name: 'products.csv', tracking_id: 'spring', file_id: csvFileId });
  });

  it('scrollFiles lists the files with their chunk groups, by id, a cursor at a time', async () => {
    type Scrolled = { file_with_chunk_groups: { id: string; file_name: string; dataset_id: string; chunk_groups: { id: string; name: string }[] | null }[]; next_cursor: string | null };
    const listed = ((await files.getFilesForDataset({ page: 1 })) as FileData).file_and_group_ids;
    const groupOf = new Map(listed.map((f) => [f.file.id, f.group_id]));
    const page = (await files.scrollFiles({ pageSize: 10 })) as Scrolled;
    expect(page.next_cursor).toBeNull();
    expect(page.file_with_chunk_groups.map((f) => f.file_name).sort()).toEqual(['products.csv', 'shelf.jsonl']);
    const ids = page.file_with_chunk_groups.map((f) => f.id);
    expect(ids).toEqual([...ids].sort());
    for (const f of page.file_with_chunk_groups) {
      expect(f.dataset_id).toBe(filesDs);
      expect(f.chunk_groups).toEqual([expect.objectContaining({ id: groupOf.get(f.id), name: f.file_name })]);
    }
    // One at a time: the cursor is the next file's id, and the last page has none. The SDK sends
    // no query parameters at all (its fetch fills path parameters only, so scrollFiles' cursor and
    // pageSize never leave it): its transport gets them in the path here.
    const scroll = async (query: string) => (await files.trieve.fetch(`/api/dataset/scroll_files?${query}` as '/api/dataset/scroll_files', 'get', { datasetId: filesDs })) as Scrolled;
    const first = await scroll('page_size=1');
    expect(first.file_with_chunk_groups.map((f) => f.id)).toEqual([ids[0]]);
    expect(first.next_cursor).toBe(ids[1]);
    const second = await scroll(`page_size=1&cursor=${first.next_cursor!}`);
    expect(second.file_with_chunk_groups.map((f) => f.id)).toEqual([ids[1]]);
    expect(second.next_cursor).toBeNull();
  });

  it('getEventsForDataset reports the CSV import, filtered by the reference\'s event types too', async () => {
    const all = (await files.getEventsForDataset({ page: 1, page_size: 50 })) as EventReturn;
    expect(all.events.some((e) => e.event_data.includes(csvFileId))).toBe(true);
    // Every type the dataset has events of, as the reference lists them for a filter menu.
    expect(all.event_types).toEqual([...new Set(all.events.map((e) => e.event_type))].sort());
    // The reference's name and quarry's select the same events; a type quarry never records, none.
    const done = (await files.getEventsForDataset({ event_types: ['csv_jsonl_processing_completed'], page: 1, page_size: 50 })) as EventReturn;
    expect(done.events.some((e) => e.event_data.includes(csvFileId))).toBe(true);
    expect(done.events.every((e) => e.event_type === 'file_import_finished')).toBe(true);
    const ours = (await files.getEventsForDataset({ event_types: ['file_import_finished'] as never, page: 1, page_size: 50 })) as EventReturn;
    expect(ours.events).toEqual(done.events);
    const never = (await files.getEventsForDataset({ event_types: ['crawl_started'], page: 1, page_size: 50 })) as EventReturn;
    expect(never.events).toEqual([]);
    expect(never.page_count).toBe(0);
    await expect(files.getEventsForDataset({ event_types: ['csv_done'] as never, page: 1, page_size: 50 })).rejects.toThrow(/unknown event type \\"csv_done\\"/);
  });

  it('deleteFile with deleteChunks removes the file and its chunks', async () => {
    await files.deleteFile({ fileId: csvFileId, deleteChunks: true });
    await expect(files.getFile({ fileId: csvFileId })).rejects.toThrow(/Not Found/);
    await expect(files.getChunkByTrackingId({ trackingId: 'A-1' })).rejects.toThrow(/Not Found/);
    expect(((await files.getFilesForDataset({ page: 1 })) as FileData).file_and_group_ids.map((f) => f.file.file_name)).toEqual(['shelf.jsonl']);
  });
});
