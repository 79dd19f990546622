/**
 * The published `trieve-ts-sdk` pointed at quarry, for the search and discovery surface: chunk
 * search (bm25, fulltext, semantic, hybrid), filters, highlights, typo correction, sort and
 * scoring options, pages, autocomplete, count, scroll, recommendations, suggested queries and the
 * group searches, in V2 through the SDK's methods and in V1 through the SDK's own fetch client.
 * Every answer is checked against a small corpus whose ranking is known in advance: every chunk
 * contains "specimen" once and has a different number of words, so a "specimen" search ranks them
 * shortest first whatever the BM25 constants; semantic scores follow the fake embedding model.
 */
import { TrieveSDK } from 'trieve-ts-sdk';
// The SDK's index.d.ts re-exports its types without file extensions, which NodeNext resolution
// cannot follow (its methods are `any` here): the types come from its generated file directly.
import type {
  AutocompleteReqPayload,
  ChunkFilter,
  ChunkGroup,
  ChunkMetadata,
  ChunkMetadataStringTagSet,
  ChunkMetadataWithScore,
  ContentChunkMetadata,
  CountChunkQueryResponseBody,
  CountChunksReqPayload,
  DeprecatedSearchOverGroupsResponseBody,
  GroupScoreChunk,
  RecommendChunksRequest,
  RecommendChunksResponseBody,
  RecommendGroupsReqPayload,
  RecommendGroupsResponseBody,
  ReturnQueuedChunk,
  ScoreChunk,
  ScrollChunksReqPayload,
  ScrollChunksResponseBody,
  SearchChunkQueryResponseBody,
  SearchChunksReqPayload,
  SearchOverGroupsReqPayload,
  SearchOverGroupsResponseBody,
  SearchResponseBody,
  SearchWithinGroupReqPayload,
  SearchWithinGroupResponseBody,
  SearchWithinGroupResults,
  SuggestedQueriesReqPayload,
  SuggestedQueriesResponse,
} from '../../node_modules/trieve-ts-sdk/dist/types.gen.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../core/domain/time.js';
import { eventually } from '../helpers/eventually.js';
import { cosine, FAKE_DIM, fakeRerankScore, fakeVector, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createOrganization, unique } from '../helpers/fixtures.js';
import { filterHolds, type OracleChunk } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** One chunk of the corpus, as sent. */
interface Entry {
  readonly tid: string;
  readonly text: string;
  readonly tags: string[];
  readonly num: number;
  readonly ts: string;
  readonly meta: { kind: string; rank: number; wild: boolean };
  readonly group: string | null;
  readonly loc: { lat: number; lon: number } | null;
  readonly weight?: number;
}

// Word counts 5, 6, ..., 14: the "specimen" ranking is this order. No stop words anywhere.
const CORPUS: readonly Entry[] = [
  { tid: 'z3', text: 'zebra zebra zebra grazing specimen', tags: ['animal', 'africa'], num: 42, ts: '2024-03-05T08:00:00', meta: { kind: 'mammal', rank: 4, wild: true }, group: 'g-africa', loc: { lat: -1.3, lon: 36.8 } },
  { tid: 'z2', text: 'zebra zebra grazing savanna river specimen', tags: ['animal', 'africa'], num: 7, ts: '2024-01-10T12:00:00', meta: { kind: 'mammal', rank: 9, wild: true }, group: 'g-africa', loc: { lat: -2.1, lon: 34.9 } },
  { tid: 'z1', text: 'zebra grazing savanna river plain dusk specimen', tags: ['animal', 'africa', 'grassland'], num: 93, ts: '2024-06-20T00:00:00', meta: { kind: 'mammal', rank: 1, wild: true }, group: 'g-africa', loc: null },
  { tid: 'h1', text: 'harbor lantern festival paper boats drifting calm specimen', tags: ['festival', 'harbor'], num: 15, ts: '2023-11-01T18:30:00', meta: { kind: 'event', rank: 7, wild: false }, group: 'g-harbor', loc: { lat: 51.5, lon: -0.1 } },
  { tid: 'h2', text: 'amber lantern glow quiet harbor water reflecting light specimen', tags: ['harbor'], num: 64, ts: '2024-02-14T09:15:00', meta: { kind: 'scene', rank: 2, wild: false }, group: 'g-harbor', loc: { lat: 51.4, lon: -0.2 } },
  { tid: 'm1', text: 'marmot whistles alpine meadow granite boulders summer morning sunshine specimen', tags: ['animal', 'alpine'], num: 28, ts: '2024-07-01T06:00:00', meta: { kind: 'mammal', rank: 6, wild: true }, group: 'g-alpine', loc: { lat: 46.5, lon: 7.9 } },
  { tid: 'm2', text: 'marmot colony burrows alpine granite slopes spring thaw cold winds specimen', tags: ['animal', 'alpine', 'grassland'], num: 81, ts: '2023-05-05T05:05:00', meta: { kind: 'mammal', rank: 3, wild: true }, group: 'g-alpine', loc: { lat: 46.6, lon: 8.0 }, weight: 3 },
  { tid: 'q1', text: 'quokka smiles island ferry tourists photograph cheerful marsupial creature rottnest beach specimen', tags: ['animal', 'island'], num: 3, ts: '2024-04-01T10:00:00', meta: { kind: 'marsupial', rank: 8, wild: true }, group: 'g-island', loc: { lat: -32.0, lon: 115.5 } },
  { tid: 'x1', text: 'lanternfish glow deep ocean trench bioluminescent creatures abyss darkness pressure cold silent specimen', tags: ['ocean'], num: 56, ts: '2022-12-31T23:59:00', meta: { kind: 'fish', rank: 5, wild: false }, group: null, loc: null },
  { tid: 'x2', text: 'barnacle clings rocky shore tide pools crab starfish urchin kelp seaweed anemone harbor specimen', tags: ['ocean', 'harbor'], num: 70, ts: '2024-05-15T15:45:00', meta: { kind: 'crustacean', rank: 10, wild: false }, group: 'g-harbor', loc: null },
];
const ORDER = CORPUS.map((e) => e.tid);
// The ranking oracle holds only if no two chunks have the same length.
if (new Set(CORPUS.map((e) => e.text.split(' ').length)).size !== CORPUS.length) throw new Error('corpus chunks must differ in word count');
const GROUPS = [
  { tracking_id: 'g-africa', name: 'Africa', description: 'savanna animals', tag_set: ['land'], metadata: { continent: 'africa' } },
  { tracking_id: 'g-harbor', name: 'Harbor', description: 'by the water', tag_set: ['water'], metadata: { continent: 'europe' } },
  { tracking_id: 'g-alpine', name: 'Alpine', description: 'mountains', tag_set: ['land'], metadata: { continent: 'europe' } },
  { tracking_id: 'g-island', name: 'Island', description: 'islands', tag_set: ['water'], metadata: { continent: 'oceania' } },
];

let stack: Stack;
let fake: FakeEmbeddings;
let llm: FakeLlm;
/** Response headers handed to a callback, as the SDK's fetch client passes them. */
type HeaderSink = (headers: Record<string, string>) => void;

/** The SDK methods under test with the signatures its functions/*.d.ts declare. */
interface SearchSurface {
  search(body: SearchChunksReqPayload, signal?: AbortSignal, parseHeaders?: HeaderSink): Promise<SearchResponseBody>;
  autocomplete(body: AutocompleteReqPayload): Promise<SearchResponseBody>;
  countChunksAboveThreshold(body: CountChunksReqPayload): Promise<CountChunkQueryResponseBody>;
  scroll(body: ScrollChunksReqPayload): Promise<ScrollChunksResponseBody>;
  getRecommendedChunks(body: RecommendChunksRequest): Promise<RecommendChunksResponseBody>;
  suggestedQueries(body: SuggestedQueriesReqPayload): Promise<SuggestedQueriesResponse>;
  searchOverGroups(body: SearchOverGroupsReqPayload): Promise<SearchOverGroupsResponseBody>;
  searchInGroup(body: SearchWithinGroupReqPayload): Promise<SearchWithinGroupResponseBody>;
  recommendedGroups(body: RecommendGroupsReqPayload): Promise<RecommendGroupsResponseBody>;
}

/** The SDK scoped to the corpus dataset (an owner key minted through the SDK). */
let client: TrieveSDK;
/** The same SDK object, typed by the SDK's declarations. */
let sdk: SearchSurface;
let datasetId: string;
/** Chunk id by tracking id, and tracking id by chunk id. */
const idOf = new Map<string, string>();
const tidOf = new Map<string, string>();
/** Group record by tracking id, as createChunkGroup answered it. */
const groupOf = new Map<string, ChunkGroup>();
/** The corpus as the shared filter oracle (test/helpers/search-oracle.ts) takes it. */
let oracleChunks: OracleChunk[];

const entryOf = (tid: string): Entry => CORPUS.find((e) => e.tid === tid)!;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Tracking ids of results, in the order returned. */
const tids = (chunks: readonly ScoreChunk[]): string[] => chunks.map((c) => (c.chunk as ChunkMetadata).tracking_id ?? '?');

/** Tracking ids of the corpus that pass a wire filter, in "specimen" rank order. */
const passing = (filter: ChunkFilter | undefined): string[] => oracleChunks.filter((c) => filterHolds(c, filter)).map((c) => c.trackingId!);

/** A search body for "specimen" (every chunk, ranked in corpus order) with the given extras. */
const specimen = (extra: Partial<SearchChunksReqPayload> = {}): SearchChunksReqPayload => ({ query: 'specimen', search_type: 'bm25', page_size: 20, ...extra });

/** Asserts a V2 chunk carries the corpus entry's fields, typed as ChunkMetadata declares them. */
function expectChunkOf(chunk: ChunkMetadata, tid: string): void {
  const e = entryOf(tid);
  expect(chunk).toMatchObject({
    id: idOf.get(tid),
    tracking_id: tid,
    chunk_html: e.text,
    dataset_id: datasetId,
    tag_set: e.tags,
    num_value: e.num,
    metadata: e.meta,
    link: `https://example.com/${tid}`,
    location: e.loc,
    weight: e.weight ?? expect.any(Number),
  });
  expect(typeof chunk.created_at).toBe('string');
  expect(typeof chunk.updated_at).toBe('string');
  expect(parseTimestamp(chunk.time_stamp!)).toBe(parseTimestamp(e.ts));
}

/** Sends a body through the SDK's own fetch client with `X-API-Version: V1` (the SDK's methods always send V2). */
async function v1<T>(path: string, data: object, headers?: HeaderSink): Promise<T> {
  const fetchClient = client.trieve as { fetch(path: string, method: string, params: object, signal?: AbortSignal, parseHeaders?: HeaderSink): Promise<unknown> };
  return (await fetchClient.fetch(path, 'post', { data, datasetId, xApiVersion: 'V1' }, undefined, headers)) as T;
}

/** The cosine of a query text and a corpus chunk under the fake embedding model. */
const cosineOf = (query: string | Float32Array, tid: string): number => cosine(typeof query === 'string' ? fakeVector(query) : query, fakeVector(entryOf(tid).text));

/** Tracking ids ranked by cosine to a vector, best first (ties by id, as an oracle must pick some order). */
const byCosine = (q: Float32Array, exclude: string[] = []): { tid: string; score: number }[] =>
  ORDER.filter((t) => !exclude.includes(t))
    .map((t) => ({ tid: t, score: cosineOf(q, t) }))
    .sort((a, b) => b.score - a.score || (a.tid < b.tid ? -1 : 1));

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  llm = await startFakeLlm();
  stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50' } });
  const orgId = await createOrganization(stack);
  const operator = new TrieveSDK({ apiKey: stack.adminKey, baseUrl: stack.baseUrl, organizationId: orgId });
  const { api_key } = await operator.createOrganizationApiKey({ name: 'sdk search owner', role: 2 });
  const owner = new TrieveSDK({ apiKey: api_key, baseUrl: stack.baseUrl, organizationId: orgId });
  const dataset = await owner.createDataset({
    dataset_name: 'SDK search dataset',
    tracking_id: unique('sdk-search'),
    server_configuration: {
      EMBEDDING_BASE_URL: fake.baseUrl,
      EMBEDDING_MODEL_NAME: 'fake',
      EMBEDDING_SIZE: FAKE_DIM,
      RERANKER_BASE_URL: fake.rerankUrl,
      LLM_BASE_URL: llm.url,
      LLM_DEFAULT_MODEL: 'fake-model',
    },
  });
  datasetId = dataset.id;
  client = new TrieveSDK({ apiKey: api_key, baseUrl: stack.baseUrl, organizationId: orgId, datasetId });
  sdk = client;

  const groups = (await client.createChunkGroup(GROUPS)) as ChunkGroup[];
  for (const g of groups) groupOf.set(g.tracking_id!, g);
  const created: ReturnQueuedChunk = await client.createChunk(
    CORPUS.map((e) => ({
      chunk_html: e.text,
      tracking_id: e.tid,
      tag_set: e.tags,
      num_value: e.num,
      time_stamp: e.ts,
      metadata: e.meta,
      link: `https://example.com/${e.tid}`,
      ...(e.loc ? { location: e.loc } : {}),
      ...(e.weight !== undefined ? { weight: e.weight } : {}),
      ...(e.group ? { group_tracking_ids: [e.group] } : {}),
    })),
  );
  for (const c of created.chunk_metadata as ChunkMetadata[]) {
    idOf.set(c.tracking_id!, c.id);
    tidOf.set(c.id, c.tracking_id!);
  }
  oracleChunks = CORPUS.map((e) => ({
    id: idOf.get(e.tid)!,
    trackingId: e.tid,
    text: e.text,
    link: `https://example.com/${e.tid}`,
    tags: e.tags,
    numValue: e.num,
    timeStamp: parseTimestamp(e.ts)!,
    lat: e.loc?.lat ?? null,
    lon: e.loc?.lon ?? null,
    groupIds: e.group ? [groupOf.get(e.group)!.id] : [],
    groupTrackingIds: e.group ? [e.group] : [],
    metadata: e.meta,
  }));
  // Semantic answers need every vector: the job workers embed through the fake in the background,
  // and the core indexes a stored vector when it applies the change log, a moment after the store
  // counts it (a semantic search right after the count once found nothing): both are waited for.
  await eventually({ what: 'the corpus to be embedded and indexed', timeoutMs: 60_000, intervalMs: 100, context: () => stack.output().slice(-3000) }, async () => {
    const usage = (await owner.getDatasetUsageById(datasetId)) as { chunk_count: number; chunks_pending_embedding?: number };
    if (usage.chunk_count !== CORPUS.length || usage.chunks_pending_embedding !== 0) return false;
    const found = await sdk.search({ query: 'specimen', search_type: 'semantic', page_size: CORPUS.length });
    return found.chunks.length === CORPUS.length;
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
  await llm?.close();
});

describe('search', () => {
  it('bm25: ranks by term frequency, returns SearchResponseBody with full V2 chunks, echoes x-api-version 2.0', async () => {
    let headers: Record<string, string> = {};
    const res = await sdk.search({ query: 'zebra', search_type: 'bm25' }, undefined, (h) => (headers = h));
    expect(headers['x-api-version']).toBe('2.0');
    expect(res.id).toMatch(UUID);
    expect(res.total_pages).toBe(0);
    expect(res.corrected_query ?? null).toBeNull();
    expect(tids(res.chunks)).toEqual(['z3', 'z2', 'z1']);
    const scores = res.chunks.map((c) => c.score);
    expect(scores[0]).toBeGreaterThan(scores[1]!);
    expect(scores[1]).toBeGreaterThan(scores[2]!);
    for (const c of res.chunks) {
      expectChunkOf(c.chunk as ChunkMetadata, (c.chunk as ChunkMetadata).tracking_id!);
      // Without highlight_options the reference answers highlights: null and the html untouched.
      expect(c.highlights ?? null).toBeNull();
    }
  });

  it('bm25 / fulltext: "specimen" ranks every chunk shortest first', async () => {
    for (const search_type of ['bm25', 'fulltext'] as const) {
      const res = await sdk.search(specimen({ search_type }));
      expect(tids(res.chunks), search_type).toEqual(ORDER);
      const scores = res.chunks.map((c) => c.score);
      expect(scores, search_type).toEqual([...scores].sort((a, b) => b - a));
    }
  });

  it('page, page_size and get_total_pages', async () => {
    const pages = [];
    for (let page = 1; page <= 4; page++) pages.push(await sdk.search(specimen({ page, page_size: 3, get_total_pages: true })));
    expect(pages.map((p) => p.total_pages)).toEqual([4, 4, 4, 4]);
    expect(pages.map((p) => tids(p.chunks))).toEqual([ORDER.slice(0, 3), ORDER.slice(3, 6), ORDER.slice(6, 9), ORDER.slice(9)]);
    const beyond = await sdk.search(specimen({ page: 5, page_size: 3, get_total_pages: true }));
    expect(beyond.chunks).toEqual([]);
    expect(beyond.total_pages).toBe(4);
    // Page 0 is read as page 1 (pages are 1-indexed).
    expect(tids((await sdk.search(specimen({ page: 0, page_size: 3 }))).chunks)).toEqual(ORDER.slice(0, 3));
    // The reference counts pages only when asked (get_total_pages defaults to false).
    expect((await sdk.search(specimen({ page: 2, page_size: 3 }))).total_pages).toBe(0);
  });

  it('semantic: scores are the cosine of the fake embeddings, best first', async () => {
    const query = 'zebra grazing savanna';
    const res = await sdk.search({ query, search_type: 'semantic', page_size: 5 });
    const expected = byCosine(fakeVector(query)).slice(0, 5);
    expect(res.chunks.map((c) => c.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 5)));
    for (const c of res.chunks) expect(c.score).toBeCloseTo(cosineOf(query, (c.chunk as ChunkMetadata).tracking_id!), 5);
    expect(tids(res.chunks)).toEqual(expected.map((e) => e.tid));
  });

  it('semantic multi-query: the weighted sum of the query embeddings', async () => {
    const parts = [
      { query: 'marmot alpine', weight: 0.7 },
      { query: 'harbor lantern', weight: 0.3 },
    ];
    const q = new Float32Array(FAKE_DIM);
    for (const p of parts) fakeVector(p.query).forEach((x, i) => (q[i]! += p.weight * x));
    const res = await sdk.search({ query: parts, search_type: 'semantic', page_size: 4 });
    expect(res.chunks.map((c) => c.score)).toEqual(byCosine(q).slice(0, 4).map((e) => expect.closeTo(e.score, 5)));
  });

  it('hybrid: one page of semantic and one of fulltext, re-ranked by the cross-encoder (not fused)', async () => {
    const query = 'harbor lantern glow';
    const pageSize = 4;
    const semantic = byCosine(fakeVector(query)).slice(0, pageSize).map((e) => e.tid);
    const fulltext = tids((await sdk.search({ query, search_type: 'fulltext', page_size: pageSize })).chunks);
    const pool = [...new Set([...semantic, ...fulltext])];
    const expected = pool.map((t) => fakeRerankScore(query, entryOf(t).text)).sort((a, b) => b - a).slice(0, pageSize);
    const res = await sdk.search({ query, search_type: 'hybrid', page_size: pageSize });
    expect(res.chunks.map((c) => c.score)).toEqual(expected);
    for (const c of res.chunks) {
      const tid = (c.chunk as ChunkMetadata).tracking_id!;
      expect(pool).toContain(tid);
      expect(c.score).toBe(fakeRerankScore(query, entryOf(tid).text));
    }
  });

  it('score_threshold keeps exactly the results scoring at least the threshold', async () => {
    const all = await sdk.search(specimen());
    const threshold = all.chunks[4]!.score;
    const res = await sdk.search(specimen({ score_threshold: threshold }));
    expect(tids(res.chunks)).toEqual(ORDER.slice(0, 5));
  });

  it('slim_chunks leaves chunk_html out; content_only answers ContentChunkMetadata', async () => {
    const slim = await sdk.search({ query: 'zebra', search_type: 'bm25', slim_chunks: true });
    expect(tids(slim.chunks)).toEqual(['z3', 'z2', 'z1']);
    for (const c of slim.chunks) {
      expect(c.chunk).not.toHaveProperty('chunk_html');
      expect(c.chunk).toMatchObject({ id: idOf.get((c.chunk as ChunkMetadata).tracking_id!), dataset_id: datasetId, tag_set: entryOf((c.chunk as ChunkMetadata).tracking_id!).tags });
    }
    const content = await sdk.search({ query: 'zebra', search_type: 'bm25', content_only: true });
    for (const c of content.chunks) {
      const chunk = c.chunk as ContentChunkMetadata;
      const e = entryOf(chunk.tracking_id!);
      expect(Object.keys(chunk).sort()).toEqual(['chunk_html', 'id', 'image_urls', 'num_value', 'time_stamp', 'tracking_id', 'weight']);
      expect(chunk).toMatchObject({ id: idOf.get(e.tid), chunk_html: e.text, num_value: e.num });
    }
  });

  it('use_quote_negated_terms: a quoted phrase is required, a -word is excluded', async () => {
    // The reference makes the quoted span a Qdrant full-text match on content: every word, not adjacency.
    const quoted = await sdk.search(specimen({ query: 'specimen "harbor lantern"', use_quote_negated_terms: true }));
    expect(tids(quoted.chunks)).toEqual(['h1', 'h2']);
    const negated = await sdk.search(specimen({ query: 'specimen -alpine -zebra', use_quote_negated_terms: true }));
    expect(tids(negated.chunks)).toEqual(ORDER.filter((t) => !['m1', 'm2', 'z1', 'z2', 'z3'].includes(t)));
  });

  it('remove_stop_words drops stop words and keeps a query made only of them', async () => {
    const res = await sdk.search({ query: 'the zebra of', search_type: 'bm25', remove_stop_words: true });
    expect(tids(res.chunks)).toEqual(['z3', 'z2', 'z1']);
  });
});

describe('filters', () => {
  const cases: [string, ChunkFilter][] = [
    ['must tag_set match_any', { must: [{ field: 'tag_set', match_any: ['alpine', 'island'] }] }],
    ['must tag_set match_all', { must: [{ field: 'tag_set', match_all: ['animal', 'grassland'] }] }],
    ['must_not tag_set', { must_not: [{ field: 'tag_set', match_any: ['animal'] }] }],
    ['should tag or range', { should: [{ field: 'tag_set', match_any: ['ocean'] }, { field: 'num_value', range: { gte: 90 } }] }],
    ['num_value range', { must: [{ field: 'num_value', range: { gt: 10, lte: 64 } }] }],
    ['num_value match_any', { must: [{ field: 'num_value', match_any: [42, 7, 3] }] }],
    ['time_stamp date_range', { must: [{ field: 'time_stamp', date_range: { gte: '2024-01-01 00:00:00', lt: '2024-06-01 00:00:00' } }] }],
    ['metadata match_any', { must: [{ field: 'metadata.kind', match_any: ['mammal', 'fish'] }] }],
    ['metadata range', { must: [{ field: 'metadata.rank', range: { lt: 5 } }] }],
    ['link match_any', { must: [{ field: 'link', match_any: ['https://example.com/h2', 'https://example.com/q1'] }] }],
    ['tracking_ids', { must: [{ tracking_ids: ['z1', 'h2', 'x1'] }] }],
    ['group_tracking_ids', { must: [{ field: 'group_tracking_ids', match_any: ['g-alpine', 'g-island'] }] }],
    ['geo_radius', { must: [{ field: 'location', geo_radius: { center: { lat: 51.45, lon: -0.15 }, radius: 20_000 } }] }],
    [
      'must + must_not + should',
      {
        must: [{ field: 'tag_set', match_any: ['animal', 'harbor'] }],
        must_not: [{ field: 'metadata.kind', match_any: ['event'] }],
        should: [{ field: 'num_value', range: { lt: 30 } }, { field: 'tag_set', match_all: ['ocean', 'harbor'] }],
      },
    ],
  ];
  // The ids condition and group_ids need ids known only after creation: checked separately below.

  it.each(cases)('search, count and scroll agree with the corpus: %s', async (_name, filters) => {
    const expected = passing(filters);
    expect(expected.length).toBeGreaterThan(0);
    const res = await sdk.search(specimen({ filters }));
    expect(tids(res.chunks)).toEqual(expected);
    const count = await sdk.countChunksAboveThreshold({ query: 'specimen', search_type: 'bm25', filters });
    expect(count).toEqual({ count: expected.length });
    const scrolled = await sdk.scroll({ filters, page_size: 100 });
    expect(scrolled.chunks.map((c) => c.tracking_id)).toEqual(expected.map((t) => idOf.get(t)!).sort().map((id) => tidOf.get(id)));
  });

  /** Tracking ids of corpus entries passing a predicate, in rank order. */
  const where = (p: (e: Entry) => boolean): string[] => CORPUS.filter(p).map((e) => e.tid);
  const groupMeta = (e: Entry) => GROUPS.find((g) => g.tracking_id === e.group);
  const epochSeconds = (ts: string) => parseTimestamp(ts)! / 1000;
  // Conditions the shared oracle does not evaluate: expected sets written out from the corpus.
  // group_tag_set and group_metadata.<key> are the reference's group-resolved fields (wire format 3.3).
  const special: [string, ChunkFilter, () => string[]][] = [
    ['group_tag_set (resolved through the groups)', { must: [{ field: 'group_tag_set', match_any: ['water'] }] }, () => where((e) => groupMeta(e)?.tag_set.includes('water') ?? false)],
    ['group_metadata.<key>', { must: [{ field: 'group_metadata.continent', match_any: ['europe'] }] }, () => where((e) => groupMeta(e)?.metadata.continent === 'europe')],
    ['time_stamp range in unix seconds', { must: [{ field: 'time_stamp', range: { gte: epochSeconds('2024-01-01T00:00:00'), lt: epochSeconds('2024-06-01T00:00:00') } }] }, () => where((e) => e.ts >= '2024-01-01' && e.ts < '2024-06-01')],
    ['metadata boolean true', { must: [{ field: 'metadata.wild', boolean: true }] }, () => where((e) => e.meta.wild)],
    ['metadata boolean false', { must: [{ field: 'metadata.wild', boolean: false }] }, () => where((e) => !e.meta.wild)],
    ['match_any wins over match_all', { must: [{ field: 'tag_set', match_any: ['alpine'], match_all: ['animal', 'grassland'] }] }, () => where((e) => e.tags.includes('alpine'))],
    ['geo_bounding_box', { must: [{ field: 'location', geo_bounding_box: { top_left: { lat: 50, lon: 0 }, bottom_right: { lat: -5, lon: 40 } } }] }, () => where((e) => e.loc !== null && e.loc.lat <= 50 && e.loc.lat >= -5 && e.loc.lon >= 0 && e.loc.lon <= 40)],
    ['tracking_id field', { must: [{ field: 'tracking_id', match_any: ['m2', 'x1'] }] }, () => ['m2', 'x1']],
    ['content', { must: [{ field: 'content', match_any: ['granite'] }] }, () => where((e) => e.text.split(' ').includes('granite'))],
  ];

  it.each(special)('search and count agree with the corpus: %s', async (_name, filters, expected) => {
    expect(expected().length).toBeGreaterThan(0);
    const res = await sdk.search(specimen({ filters }));
    expect(tids(res.chunks)).toEqual(expected());
    expect(await sdk.countChunksAboveThreshold({ query: 'specimen', search_type: 'bm25', filters })).toEqual({ count: expected().length });
  });

  it('ids and group_ids conditions', async () => {
    const filters: ChunkFilter = {
      should: [{ ids: [idOf.get('q1')!, idOf.get('x2')!] }, { field: 'group_ids', match_any: [groupOf.get('g-africa')!.id] }],
    };
    expect(tids((await sdk.search(specimen({ filters }))).chunks)).toEqual(passing(filters));
    expect(passing(filters)).toEqual(['z3', 'z2', 'z1', 'q1', 'x2']);
  });
});

describe('highlights', () => {
  const query = 'harbor lantern';

  it('default options mark the query phrase with <mark><b> in chunk_html and list it in highlights', async () => {
    const res = await sdk.search({ query, search_type: 'bm25', page_size: 10, highlight_options: {} });
    const byTid = new Map(res.chunks.map((c) => [(c.chunk as ChunkMetadata).tracking_id!, c]));
    const h1 = byTid.get('h1')!;
    expect((h1.chunk as ChunkMetadata).chunk_html).toBe('<mark><b>harbor lantern</b></mark> festival paper boats drifting calm specimen');
    expect(h1.highlights).toEqual(['harbor lantern']);
    const h2 = byTid.get('h2')!;
    expect((h2.chunk as ChunkMetadata).chunk_html).toContain('<mark><b>lantern</b></mark>');
    expect((h2.chunk as ChunkMetadata).chunk_html).toContain('<mark><b>harbor</b></mark>');
    expect(h2.highlights!.map((h) => h.trim()).sort()).toEqual(['harbor', 'lantern']);
    // A chunk the phrase does not occur in keeps its html.
    const x2 = byTid.get('x2')!;
    expect((x2.chunk as ChunkMetadata).chunk_html).toBe(entryOf('x2').text.replace('harbor', '<mark><b>harbor</b></mark>'));
  });

  it('pre_tag / post_tag, highlight_max_num, highlight_window, highlight_results false', async () => {
    const tagged = await sdk.search({ query, search_type: 'bm25', highlight_options: { pre_tag: '<em>', post_tag: '</em>' } });
    const h1 = tagged.chunks.find((c) => (c.chunk as ChunkMetadata).tracking_id === 'h1')!;
    expect((h1.chunk as ChunkMetadata).chunk_html).toBe('<em>harbor lantern</em> festival paper boats drifting calm specimen');

    const one = await sdk.search({ query, search_type: 'bm25', highlight_options: { highlight_max_num: 1 } });
    const h2 = one.chunks.find((c) => (c.chunk as ChunkMetadata).tracking_id === 'h2')!;
    expect(h2.highlights).toHaveLength(1);

    const windowed = await sdk.search({ query, search_type: 'bm25', highlight_options: { highlight_window: 4 } });
    const w1 = windowed.chunks.find((c) => (c.chunk as ChunkMetadata).tracking_id === 'h1')!;
    expect(w1.highlights).toHaveLength(1);
    expect(w1.highlights![0]).toContain('harbor lantern');
    expect(w1.highlights![0]!.split(/\s+/).length).toBeGreaterThan(2);

    const off = await sdk.search({ query, search_type: 'bm25', highlight_options: { highlight_results: false } });
    for (const c of off.chunks) {
      expect((c.chunk as ChunkMetadata).chunk_html).toBe(entryOf((c.chunk as ChunkMetadata).tracking_id!).text);
      expect(c.highlights ?? null).toBeNull();
    }
  });

  it('v1 strategy highlights the piece of text most like the query', async () => {
    const res = await sdk.search({ query: 'lantern festival', search_type: 'bm25', highlight_options: { highlight_strategy: 'v1', highlight_max_length: 3 } });
    const h1 = res.chunks.find((c) => (c.chunk as ChunkMetadata).tracking_id === 'h1')!;
    expect(h1.highlights!.length).toBeGreaterThan(0);
    expect(h1.highlights!.join(' ')).toMatch(/lantern festival/);
    expect((h1.chunk as ChunkMetadata).chunk_html).toMatch(/<mark><b>[^<]*lantern festival[^<]*<\/b><\/mark>/);
  });
});

describe('typo options', () => {
  it('correct_typos corrects a misspelled dataset word and reports corrected_query', async () => {
    const res = await sdk.search({ query: 'zebrra', search_type: 'bm25', typo_options: { correct_typos: true } });
    expect(res.corrected_query).toBe('zebra');
    expect(tids(res.chunks)).toEqual(['z3', 'z2', 'z1']);
    const plain = await sdk.search({ query: 'zebrra', search_type: 'bm25' });
    expect(plain.corrected_query ?? null).toBeNull();
    expect(plain.chunks).toEqual([]);
    const disabled = await sdk.search({ query: 'zebrra', search_type: 'bm25', typo_options: { correct_typos: true, disable_on_word: ['zebrra'] } });
    expect(disabled.corrected_query ?? null).toBeNull();
    expect(disabled.chunks).toEqual([]);
  });

  it('prioritize_domain_specifc_words (default true) requires a non-English dataset word without reporting a correction', async () => {
    // The reference adds such a word to the query's quote_words (a required term) and reports
    // corrected_query only when a word was replaced (typo_operator.rs, correct_query_helper).
    const res = await sdk.search(specimen({ query: 'rottnest specimen', typo_options: { correct_typos: true } }));
    expect(res.corrected_query ?? null).toBeNull();
    expect(tids(res.chunks)).toEqual(['q1']);
    const off = await sdk.search(specimen({ query: 'rottnest specimen', typo_options: { correct_typos: true, prioritize_domain_specifc_words: false } }));
    expect(off.corrected_query ?? null).toBeNull();
    expect(tids(off.chunks)[0]).toBe('q1');
    expect(off.chunks).toHaveLength(CORPUS.length);
  });
});

describe('sort and scoring options', () => {
  it('sort_by a field orders by it, both directions', async () => {
    const byNum = [...CORPUS].sort((a, b) => b.num - a.num).map((e) => e.tid);
    const desc = await sdk.search(specimen({ sort_options: { sort_by: { field: 'num_value', direction: 'desc' } } }));
    expect(tids(desc.chunks)).toEqual(byNum);
    const asc = await sdk.search(specimen({ sort_options: { sort_by: { field: 'num_value', direction: 'asc' } } }));
    expect(tids(asc.chunks)).toEqual([...byNum].reverse());
  });

  it('sort_by rerank_type cross_encoder re-scores the prefetched results with the reranker', async () => {
    const query = 'marmot alpine granite specimen';
    const res = await sdk.search({ query, search_type: 'bm25', page_size: 4, sort_options: { use_weights: false, sort_by: { rerank_type: 'cross_encoder', prefetch_amount: 20 } } });
    const expected = ORDER.map((t) => fakeRerankScore(query, entryOf(t).text)).sort((a, b) => b - a).slice(0, 4);
    expect(res.chunks.map((c) => c.score)).toEqual(expected);
    expect(tids(res.chunks).slice(0, 2).sort()).toEqual(['m1', 'm2']);
  });

  it('tag_weights and use_weights multiply scores only when sort_options is sent', async () => {
    const plain = await sdk.search(specimen());
    const score = new Map(plain.chunks.map((c) => [(c.chunk as ChunkMetadata).tracking_id!, c.score]));
    // Weights apply only under sort_options: m2 (weight 3) keeps its raw score here.
    expect(tids(plain.chunks)).toEqual(ORDER);
    const weighted = await sdk.search(specimen({ sort_options: { tag_weights: { ocean: 100 } } }));
    const got = new Map(weighted.chunks.map((c) => [(c.chunk as ChunkMetadata).tracking_id!, c.score]));
    for (const e of CORPUS) {
      const factor = (e.tags.includes('ocean') ? 100 : 1) * (e.weight ?? 1);
      expect(got.get(e.tid), e.tid).toBeCloseTo(score.get(e.tid)! * factor, 4);
    }
    expect(tids(weighted.chunks).slice(0, 2)).toEqual(['x1', 'x2']);
    const unweighted = await sdk.search(specimen({ sort_options: { use_weights: false } }));
    expect(unweighted.chunks.map((c) => c.score)).toEqual(plain.chunks.map((c) => expect.closeTo(c.score, 6)));
  });

  it('a strong recency_bias orders by time_stamp, newest first', async () => {
    const res = await sdk.search(specimen({ sort_options: { recency_bias: 100 } }));
    expect(tids(res.chunks)).toEqual([...CORPUS].sort((a, b) => (a.ts < b.ts ? 1 : -1)).map((e) => e.tid));
  });

  it('scoring_options.fulltext_boost raises the boosted term only', async () => {
    const query = 'marmot specimen';
    const plain = await sdk.search({ query, search_type: 'bm25', page_size: 20 });
    const boosted = await sdk.search({ query, search_type: 'bm25', page_size: 20, scoring_options: { fulltext_boost: { phrase: 'marmot', boost_factor: 3 } } });
    const before = new Map(plain.chunks.map((c) => [(c.chunk as ChunkMetadata).tracking_id!, c.score]));
    for (const c of boosted.chunks) {
      const tid = (c.chunk as ChunkMetadata).tracking_id!;
      if (tid === 'm1' || tid === 'm2') expect(c.score, tid).toBeGreaterThan(before.get(tid)!);
      else expect(c.score, tid).toBeCloseTo(before.get(tid)!, 5);
    }
  });
});

describe('autocomplete', () => {
  it('completes the last word as a prefix', async () => {
    const res = await sdk.autocomplete({ query: 'lant', search_type: 'bm25', page_size: 10 });
    expect(res.id).toMatch(UUID);
    expect(tids(res.chunks).sort()).toEqual(['h1', 'h2', 'x1']);
    const two = await sdk.autocomplete({ query: 'harbor lant', search_type: 'bm25', page_size: 10 });
    expect(tids(two.chunks).sort()).toEqual(['h1', 'h2']);
    for (const c of two.chunks) expectChunkOf(c.chunk as ChunkMetadata, (c.chunk as ChunkMetadata).tracking_id!);
  });

  it('applies filters and extend_results appends non-prefix matches after the prefix ones', async () => {
    const filtered = await sdk.autocomplete({ query: 'lant', search_type: 'bm25', filters: { must: [{ field: 'tag_set', match_any: ['ocean'] }] } });
    expect(tids(filtered.chunks)).toEqual(['x1']);
    const extended = await sdk.autocomplete({ query: 'harbor lant', search_type: 'bm25', page_size: 10, extend_results: true });
    const got = tids(extended.chunks);
    expect(got.slice(0, 2).sort()).toEqual(['h1', 'h2']);
    // Chunks matching "harbor" but no word starting with "lant" come after.
    expect(got).toContain('x2');
  });
});

describe('count', () => {
  it('counts matches, caps at limit, honours score_threshold', async () => {
    expect(await sdk.countChunksAboveThreshold({ query: 'zebra', search_type: 'bm25' })).toEqual({ count: 3 });
    expect(await sdk.countChunksAboveThreshold({ query: 'specimen', search_type: 'bm25', limit: 4 })).toEqual({ count: 4 });
    const all = await sdk.search(specimen());
    const threshold = all.chunks[6]!.score;
    expect(await sdk.countChunksAboveThreshold({ query: 'specimen', search_type: 'bm25', score_threshold: threshold })).toEqual({ count: 7 });
    expect(await sdk.countChunksAboveThreshold({ query: 'zebra', search_type: 'semantic', limit: 5 })).toEqual({ count: 5 });
  });
});

describe('scroll', () => {
  it('pages by id ascending from offset_chunk_id, and sorts by a field', async () => {
    const sortedIds = [...idOf.values()].sort();
    const first = await sdk.scroll({ page_size: 4 });
    expect(first.chunks.map((c) => c.id)).toEqual(sortedIds.slice(0, 4));
    for (const c of first.chunks) expectChunkOf(c, c.tracking_id!);
    const from = await sdk.scroll({ page_size: 4, offset_chunk_id: sortedIds[4] });
    expect(from.chunks.map((c) => c.id)).toEqual(sortedIds.slice(4, 8));
    const sorted = await sdk.scroll({ page_size: 20, sort_by: { field: 'num_value', direction: 'asc' } });
    expect(sorted.chunks.map((c) => c.tracking_id)).toEqual([...CORPUS].sort((a, b) => a.num - b.num).map((e) => e.tid));
  });
});

describe('recommendations', () => {
  it('getRecommendedChunks (semantic, average_vector) ranks by cosine to the examples, examples excluded', async () => {
    const res = await sdk.getRecommendedChunks({ positive_tracking_ids: ['z3'], limit: 4, recommend_type: 'semantic', strategy: 'average_vector' });
    expect(res.id).toMatch(UUID);
    const expected = byCosine(fakeVector(entryOf('z3').text), ['z3']).slice(0, 4);
    expect(res.chunks.map((c) => c.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 5)));
    expect(tids(res.chunks)).not.toContain('z3');
    for (const c of res.chunks) expectChunkOf(c.chunk as ChunkMetadata, (c.chunk as ChunkMetadata).tracking_id!);
    const byIds = await sdk.getRecommendedChunks({ positive_chunk_ids: [idOf.get('z3')!], negative_chunk_ids: [idOf.get('z2')!], limit: 20 });
    expect(tids(byIds.chunks)).not.toContain('z3');
    expect(tids(byIds.chunks)).not.toContain('z2');
    const filtered = await sdk.getRecommendedChunks({ positive_tracking_ids: ['z3'], limit: 20, filters: { must: [{ field: 'tag_set', match_any: ['alpine'] }] } });
    expect(tids(filtered.chunks).sort()).toEqual(['m1', 'm2']);
  });

  it('getRecommendedChunks best_score: Qdrant\'s rule (best positive cosine, or minus the square of the best negative when that is higher)', async () => {
    const pos = [fakeVector(entryOf('m1').text)];
    const neg = [fakeVector(entryOf('z3').text)];
    const expected = ORDER.filter((t) => t !== 'm1' && t !== 'z3')
      .map((t) => {
        const v = fakeVector(entryOf(t).text);
        const p = Math.max(...pos.map((x) => cosine(v, x)));
        const n = Math.max(...neg.map((x) => cosine(v, x)));
        return p > n ? p : -(n * n);
      })
      .sort((a, b) => b - a)
      .slice(0, 5);
    const res = await sdk.getRecommendedChunks({ positive_tracking_ids: ['m1'], negative_tracking_ids: ['z3'], strategy: 'best_score', recommend_type: 'semantic', limit: 5 });
    expect(res.chunks.map((c) => c.score)).toEqual(expected.map((e) => expect.closeTo(e, 5)));
  });

  it('recommendedGroups ranks groups by their best chunk, the example group excluded', async () => {
    const res = await sdk.recommendedGroups({ positive_group_tracking_ids: ['g-alpine'], limit: 10, group_size: 2, recommend_type: 'semantic' });
    expect(res.id).toMatch(UUID);
    const mean = new Float32Array(FAKE_DIM);
    for (const t of ['m1', 'm2']) fakeVector(entryOf(t).text).forEach((x, i) => (mean[i]! += x / 2));
    const ranked = byCosine(mean, ['m1', 'm2']).filter((e) => entryOf(e.tid).group !== null);
    const groupOrder = [...new Set(ranked.map((e) => entryOf(e.tid).group!))];
    expect(res.results.map((r) => r.group.tracking_id)).toEqual(groupOrder);
    for (const r of res.results) {
      expect(r.group).toMatchObject({ id: groupOf.get(r.group.tracking_id!)!.id, name: GROUPS.find((g) => g.tracking_id === r.group.tracking_id)!.name, dataset_id: datasetId });
      const members = ranked.filter((e) => entryOf(e.tid).group === r.group.tracking_id).slice(0, 2);
      expect(r.chunks.map((c) => c.score)).toEqual(members.map((m) => expect.closeTo(m.score, 5)));
    }
  });
});

describe('suggested queries', () => {
  it('asks the dataset LLM with the chunks the query finds and returns its queries', async () => {
    llm.script({ reply: 'harbor lantern festival\nquiet harbor water\nharbor boats at night' });
    const res = await sdk.suggestedQueries({ query: 'harbor', search_type: 'bm25', suggestions_to_create: 3 });
    expect(res).toEqual({ queries: ['harbor lantern festival', 'quiet harbor water', 'harbor boats at night'] });
    const prompt = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(prompt).toContain(entryOf('h1').text);
    expect(prompt).not.toContain(entryOf('m1').text);
  });
});

describe('group search', () => {
  /** Groups in "specimen" rank order (a group ranks at its best chunk), each with its members in rank order. */
  const groupRanking = ORDER.reduce<Map<string, string[]>>((m, t) => {
    const g = entryOf(t).group;
    if (g) m.set(g, [...(m.get(g) ?? []), t]);
    return m;
  }, new Map());

  it('searchOverGroups pages over groups, group_size caps chunks per group, total_pages counts groups', async () => {
    const all = [...groupRanking];
    const pages = [];
    for (const page of [1, 2]) pages.push(await sdk.searchOverGroups({ query: 'specimen', search_type: 'bm25', page, page_size: 2, group_size: 2, get_total_pages: true }));
    for (const [i, res] of pages.entries()) {
      expect(res.id).toMatch(UUID);
      expect(res.total_pages).toBe(2);
      expect(res.results.map((r) => r.group.tracking_id)).toEqual(all.slice(i * 2, i * 2 + 2).map(([g]) => g));
      for (const r of res.results) {
        expect(tids(r.chunks)).toEqual(groupRanking.get(r.group.tracking_id!)!.slice(0, 2));
        const made = groupOf.get(r.group.tracking_id!)!;
        expect(r.group).toMatchObject({ id: made.id, name: made.name, description: made.description, tag_set: made.tag_set, metadata: made.metadata, dataset_id: datasetId });
        expect(r.file_id ?? null).toBeNull();
        for (const c of r.chunks) expectChunkOf(c.chunk as ChunkMetadata, (c.chunk as ChunkMetadata).tracking_id!);
      }
    }
  });

  it('searchOverGroups with slim_chunks answers SlimChunkMetadataWithArrayTagSet chunks', async () => {
    const res = await sdk.searchOverGroups({ query: 'zebra', search_type: 'bm25', slim_chunks: true });
    expect(res.results.map((r) => r.group.tracking_id)).toEqual(['g-africa']);
    expect(tids(res.results[0]!.chunks)).toEqual(['z3', 'z2', 'z1']);
    for (const c of res.results[0]!.chunks) {
      expect(c.chunk).not.toHaveProperty('chunk_html');
      expect((c.chunk as ChunkMetadata).tag_set).toEqual(entryOf((c.chunk as ChunkMetadata).tracking_id!).tags);
    }
  });

  it('searchOverGroups with filters and highlights', async () => {
    const res = await sdk.searchOverGroups({ query: 'harbor lantern', search_type: 'bm25', filters: { must_not: [{ field: 'tag_set', match_any: ['festival'] }] }, highlight_options: {} });
    expect(res.results.map((r) => r.group.tracking_id)).toEqual(['g-harbor']);
    expect(tids(res.results[0]!.chunks).sort()).toEqual(['h2', 'x2']);
    const h2 = res.results[0]!.chunks.find((c) => (c.chunk as ChunkMetadata).tracking_id === 'h2')!;
    expect((h2.chunk as ChunkMetadata).chunk_html).toContain('<mark><b>lantern</b></mark>');
  });

  it('searchInGroup returns only the group members, by group_id or group_tracking_id', async () => {
    const members = groupRanking.get('g-harbor')!;
    const byTid = await sdk.searchInGroup({ query: 'specimen', search_type: 'bm25', group_tracking_id: 'g-harbor', get_total_pages: true, page_size: 2 });
    expect(byTid.id).toMatch(UUID);
    expect(tids(byTid.chunks)).toEqual(members.slice(0, 2));
    expect(byTid.total_pages).toBe(2);
    const byId = await sdk.searchInGroup({ query: 'specimen', search_type: 'bm25', group_id: groupOf.get('g-harbor')!.id, page: 2, page_size: 2 });
    expect(tids(byId.chunks)).toEqual(members.slice(2));
    const filtered = await sdk.searchInGroup({ query: 'specimen', search_type: 'bm25', group_tracking_id: 'g-harbor', filters: { must: [{ field: 'num_value', range: { gt: 20 } }] } });
    expect(tids(filtered.chunks)).toEqual(['h2', 'x2']);
    const semantic = await sdk.searchInGroup({ query: 'lantern glow', search_type: 'semantic', group_tracking_id: 'g-harbor' });
    expect(semantic.chunks.map((c) => c.score)).toEqual(
      members
        .map((t) => cosineOf('lantern glow', t))
        .sort((a, b) => b - a)
        .map((s) => expect.closeTo(s, 5)),
    );
    await expect(sdk.searchInGroup({ query: 'specimen', search_type: 'bm25', group_tracking_id: 'no-such-group' })).rejects.toThrow(/not found/i);
  });
});

describe('API version V1 through the SDK fetch client', () => {
  it('search: score_chunks with metadata[0] as ChunkMetadataStringTagSet, total_chunk_pages, x-api-version 1.0', async () => {
    let headers: Record<string, string> = {};
    const res = await v1<SearchChunkQueryResponseBody>('/api/chunk/search', { query: 'zebra', search_type: 'bm25', get_total_pages: true, page_size: 2 }, (h) => (headers = h));
    expect(headers['x-api-version']).toBe('1.0');
    expect(res).not.toHaveProperty('chunks');
    expect(res.total_chunk_pages).toBe(2);
    expect(res.score_chunks.map((s) => (s.metadata[0] as ChunkMetadataStringTagSet).tracking_id)).toEqual(['z3', 'z2']);
    for (const s of res.score_chunks) {
      expect(s.metadata).toHaveLength(1);
      const c = s.metadata[0] as ChunkMetadataStringTagSet;
      expect(c).toMatchObject({ id: idOf.get(c.tracking_id!), tag_set: entryOf(c.tracking_id!).tags.join(','), chunk_html: entryOf(c.tracking_id!).text, dataset_id: datasetId });
      expect(typeof s.score).toBe('number');
    }
    const highlighted = await v1<SearchChunkQueryResponseBody>('/api/chunk/search', { query: 'harbor lantern', search_type: 'bm25', highlight_options: {} });
    const h1 = highlighted.score_chunks.find((s) => (s.metadata[0] as ChunkMetadataStringTagSet).tracking_id === 'h1')!;
    expect(h1.highlights).toEqual(['harbor lantern']);
    expect((h1.metadata[0] as ChunkMetadataStringTagSet).chunk_html).toContain('<mark><b>harbor lantern</b></mark>');
  });

  it('search with slim_chunks: SlimChunkMetadata (no chunk_html, tag_set a string)', async () => {
    const res = await v1<SearchChunkQueryResponseBody>('/api/chunk/search', { query: 'marmot', search_type: 'bm25', slim_chunks: true });
    expect(res.score_chunks.map((s) => (s.metadata[0] as ChunkMetadataStringTagSet).tracking_id)).toEqual(['m1', 'm2']);
    for (const s of res.score_chunks) {
      expect(s.metadata[0]).not.toHaveProperty('chunk_html');
      expect((s.metadata[0] as ChunkMetadataStringTagSet).tag_set).toBe(entryOf((s.metadata[0] as ChunkMetadataStringTagSet).tracking_id!).tags.join(','));
    }
  });

  it('autocomplete answers the V1 search shape', async () => {
    const res = await v1<SearchChunkQueryResponseBody>('/api/chunk/autocomplete', { query: 'lant', search_type: 'bm25' });
    expect(res.score_chunks.map((s) => (s.metadata[0] as ChunkMetadataStringTagSet).tracking_id).sort()).toEqual(['h1', 'h2', 'x1']);
    expect(typeof res.total_chunk_pages).toBe('number');
  });

  it('recommend: a flat array of ChunkMetadataWithScore', async () => {
    const res = await v1<ChunkMetadataWithScore[]>('/api/chunk/recommend', { positive_tracking_ids: ['z3'], limit: 3 });
    expect(Array.isArray(res)).toBe(true);
    const expected = byCosine(fakeVector(entryOf('z3').text), ['z3']).slice(0, 3);
    expect(res.map((c) => c.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 5)));
    for (const c of res) expect(c).toMatchObject({ id: idOf.get(c.tracking_id!), tag_set: entryOf(c.tracking_id!).tags.join(','), dataset_id: datasetId });
  });

  it('group searches: group_chunks of GroupScoreChunk, and bookmarks + group within a group', async () => {
    const over = await v1<DeprecatedSearchOverGroupsResponseBody>('/api/chunk_group/group_oriented_search', { query: 'specimen', search_type: 'bm25', page_size: 2, group_size: 1, get_total_pages: true });
    expect(over.total_chunk_pages).toBe(2);
    expect(over.group_chunks.map((g) => g.group_tracking_id)).toEqual(['g-africa', 'g-harbor']);
    const g: GroupScoreChunk = over.group_chunks[0]!;
    expect(g).toMatchObject({ group_id: groupOf.get('g-africa')!.id, group_name: 'Africa', group_description: 'savanna animals', group_tag_set: ['land'], group_metadata: { continent: 'africa' }, group_dataset_id: datasetId });
    expect(g.metadata).toHaveLength(1);
    expect((g.metadata[0]!.metadata[0] as ChunkMetadataStringTagSet).tracking_id).toBe('z3');
    expect((g.metadata[0]!.metadata[0] as ChunkMetadataStringTagSet).tag_set).toBe('animal,africa');

    const within = await v1<SearchWithinGroupResults>('/api/chunk_group/search', { query: 'specimen', search_type: 'bm25', group_tracking_id: 'g-alpine' });
    expect(within.group).toMatchObject({ id: groupOf.get('g-alpine')!.id, name: 'Alpine', file_id: null });
    expect(within.bookmarks.map((b) => (b.metadata[0] as ChunkMetadataStringTagSet).tracking_id)).toEqual(['m1', 'm2']);

    const rec = await v1<GroupScoreChunk[]>('/api/chunk_group/recommend', { positive_group_tracking_ids: ['g-alpine'], limit: 10 });
    expect(Array.isArray(rec)).toBe(true);
    expect(rec.map((r) => r.group_tracking_id)).not.toContain('g-alpine');
    expect(rec.length).toBeGreaterThan(0);
  });
});
