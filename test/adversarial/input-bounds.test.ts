/**
 * Every array and string a request carries is capped (core/domain/limits.ts): at the cap the
 * request is served, one past it is a 400 whose message names the field and the cap, and a
 * refused write leaves the store untouched. 100,000 group_tracking_ids on one chunk used to hold
 * the event loop and the SQLite write lock for 8 s; now it is refused at once. Real processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../core/domain/limits.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { expectRejected } from '../helpers/store-snapshot.js';

/** Chunk text cap of this stack (QUARRY_MAX_CHUNK_TEXT_BYTES), small so the test stays light. */
const TEXT_BYTES = 10_000;
const CHUNKS = LIMITS.exampleIds;

let stack: Stack;
let t: Tenant;
let chunkIds: string[] = [];
let groupIds: string[] = [];

const range = (n: number, f: (i: number) => unknown): unknown[] => Array.from({ length: n }, (_, i) => f(i));
const uuidOf = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_MAX_CHUNK_TEXT_BYTES: String(TEXT_BYTES) } });
  t = await createTenant(stack);
  for (let from = 0; from < CHUNKS; from += 100) {
    const res = await t.ds.post('/api/chunk', range(100, (i) => ({ tracking_id: `t${from + i}`, chunk_html: `aspirin fever note ${from + i}`, location: { lat: 1, lon: 1 } })));
    expect(res.status, res.text).toBe(200);
    chunkIds.push(...(res.body.chunk_metadata as { id: string }[]).map((c) => c.id));
  }
  const groups = await t.ds.post('/api/chunk_group', range(LIMITS.groupsPerChunk, (i) => ({ name: `g${i}`, tracking_id: `g${i}` })));
  expect(groups.status, groups.text).toBe(200);
  groupIds = (groups.body as { id: string }[]).map((g) => g.id);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** A 400 naming `field` and the number `cap`; nothing stored. */
async function refusedWrite(path: string, body: unknown, field: RegExp, cap: number, method: 'post' | 'put' = 'post'): Promise<void> {
  const res = await expectRejected(stack, () => t.ds[method](path, body), 400);
  expect(res.body.message).toMatch(field);
  expect(res.body.message).toContain(String(cap));
}

/** A 400 naming `field` and `cap` for a read-only route. */
async function refused(path: string, body: unknown, field: RegExp, cap: number): Promise<void> {
  const res = await t.ds.post(path, body);
  expect(res.status, res.text).toBe(400);
  expect(res.body.message).toMatch(field);
  expect(res.body.message).toContain(String(cap));
}

async function served(path: string, body: unknown, method: 'post' | 'put' = 'post'): Promise<void> {
  const res = await t.ds[method](path, body);
  expect(res.status, res.text).toBeLessThan(300);
}

let n = 0;
/** A chunk body with a fresh tracking id plus `fields`. */
const chunk = (fields: Record<string, unknown>) => ({ tracking_id: `new-${++n}`, chunk_html: 'bounded', ...fields });

describe('chunk payload caps', () => {
  it('refuses 100,000 group_tracking_ids at once and stores nothing', async () => {
    const body = chunk({ group_tracking_ids: range(100_000, (i) => `group-${i}`) });
    const started = performance.now();
    await refusedWrite('/api/chunk', body, /group_tracking_ids/, LIMITS.groupsPerChunk);
    // Generous for a shared machine: refusing takes tens of ms; storing them took 8 s.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  const cases: [string, (k: number) => Record<string, unknown>, number, RegExp][] = [
    ['group_tracking_ids', (k) => ({ group_tracking_ids: range(k, (i) => `g${i}`) }), LIMITS.groupsPerChunk, /group_tracking_ids: at most/],
    ['group_ids', (k) => ({ group_ids: range(k, (i) => groupIds[i] ?? uuidOf(i)) }), LIMITS.groupsPerChunk, /group_ids: at most/],
    ['tag_set', (k) => ({ tag_set: range(k, (i) => `tag${i}`) }), LIMITS.tagsPerChunk, /tag_set: at most/],
    ['tag_set (comma string)', (k) => ({ tag_set: range(k, (i) => `tag${i}`).join(',') }), LIMITS.tagsPerChunk, /tag_set: at most/],
    ['a tag', (k) => ({ tag_set: ['x'.repeat(k)] }), LIMITS.tagLength, /tag_set\[0\]: must be at most/],
    ['image_urls', (k) => ({ image_urls: range(k, (i) => `https://img.test/${i}.png`) }), LIMITS.imageUrlsPerChunk, /image_urls: at most/],
    ['link', (k) => ({ link: 'https://x.test/' + 'a'.repeat(k - 15) }), LIMITS.urlLength, /link: must be at most/],
    ['tracking_id', (k) => ({ tracking_id: `${++n}-`.padEnd(k, 'x') }), LIMITS.trackingIdLength, /tracking_id: must be at most/],
    ['metadata size', (k) => ({ metadata: { a: 'x'.repeat(k - 8) } }), LIMITS.metadataBytes, /metadata: must be at most/],
    ['metadata depth', (k) => ({ metadata: JSON.parse('['.repeat(k) + ']'.repeat(k)) }), LIMITS.metadataDepth, /metadata: must nest at most/],
    // 'é' is two bytes in UTF-8: the cap counts bytes, not characters.
    ['chunk_html', (k) => ({ chunk_html: 'é'.repeat(Math.floor(k / 2)) + 'a'.repeat(k % 2) }), TEXT_BYTES, /chunk_html: must be at most/],
    ['semantic_content', (k) => ({ semantic_content: 'a'.repeat(k) }), TEXT_BYTES, /semantic_content: must be at most/],
    ['fulltext_content', (k) => ({ fulltext_content: 'a'.repeat(k) }), TEXT_BYTES, /fulltext_content: must be at most/],
  ];
  for (const [name, make, cap, field] of cases) {
    it(`${name}: ${cap} is stored, ${cap + 1} is a 400 naming it`, async () => {
      await served('/api/chunk', chunk(make(cap)));
      await refusedWrite('/api/chunk', chunk(make(cap + 1)), field, cap);
    });
  }

  it(`group memberships: ${LIMITS.groupsPerRequest} in one batch are stored, one more is a 400`, async () => {
    const batch = (chunks: number, per: number) => range(chunks, (c) => chunk({ group_tracking_ids: range(per, (i) => `m${c}-${i}`) }));
    await served('/api/chunk', batch(10, 100));
    await refusedWrite('/api/chunk', batch(11, 91), /group_ids and group_tracking_ids: at most/, LIMITS.groupsPerRequest);
  });

  it('one chunk over a cap fails the whole batch', async () => {
    await refusedWrite('/api/chunk', [chunk({}), chunk({ tag_set: range(LIMITS.tagsPerChunk + 1, String) })], /\[1\]\.tag_set: at most/, LIMITS.tagsPerChunk);
  });

  it('updates are capped the same way', async () => {
    await served('/api/chunk', { chunk_id: chunkIds[0], chunk_html: 'a'.repeat(TEXT_BYTES) }, 'put');
    await refusedWrite('/api/chunk', { chunk_id: chunkIds[0], chunk_html: 'a'.repeat(TEXT_BYTES + 1) }, /chunk_html: must be at most/, TEXT_BYTES, 'put');
    await refusedWrite('/api/chunk', { chunk_id: chunkIds[0], group_tracking_ids: range(LIMITS.groupsPerChunk + 1, String) }, /group_tracking_ids: at most/, LIMITS.groupsPerChunk, 'put');
  });

  it('groups: tag_set, description and metadata', async () => {
    await served('/api/chunk_group', { name: 'capped', tag_set: range(LIMITS.tagsPerChunk, String), description: 'd'.repeat(LIMITS.groupDescriptionLength) });
    await refusedWrite('/api/chunk_group', { name: 'over', tag_set: range(LIMITS.tagsPerChunk + 1, String) }, /tag_set: at most/, LIMITS.tagsPerChunk);
    await refusedWrite('/api/chunk_group', { name: 'over', description: 'd'.repeat(LIMITS.groupDescriptionLength + 1) }, /description: must be at most/, LIMITS.groupDescriptionLength);
    await refusedWrite('/api/chunk_group', { name: 'over', metadata: { a: 'x'.repeat(LIMITS.metadataBytes) } }, /metadata: must be at most/, LIMITS.metadataBytes);
  });
});

describe('filter caps', () => {
  const search = (filters: unknown) => ({ search_type: 'bm25', query: 'aspirin', filters });
  const cases: [string, (k: number) => unknown, number, RegExp][] = [
    ['conditions per clause', (k) => ({ must: range(k, (i) => ({ field: 'tag_set', match_any: [`t${i}`] })) }), LIMITS.filterConditions, /filters\.must: at most/],
    ['match_any values', (k) => ({ should: [{ field: 'tag_set', match_any: range(k, (i) => `t${i}`) }] }), LIMITS.filterValues, /match_any: at most/],
    ['match_all values', (k) => ({ should: [{ field: 'tag_set', match_all: range(k, (i) => `t${i}`) }] }), LIMITS.filterValues, /match_all: at most/],
    ['a filter value', (k) => ({ must: [{ field: 'tag_set', match_any: ['v'.repeat(k)] }] }), LIMITS.filterValueLength, /match_any\[0\]: must be at most/],
    ['ids in a condition', (k) => ({ should: [{ ids: range(k, (i) => chunkIds[i % chunkIds.length]) }] }), LIMITS.filterIds, /ids: at most/],
    ['tracking_ids in a condition', (k) => ({ should: [{ tracking_ids: range(k, (i) => `t${i}`) }] }), LIMITS.filterIds, /tracking_ids: at most/],
    [
      'geo_polygon points',
      (k) => ({ must: [{ field: 'location', geo_polygon: { exterior: range(k, (i) => ({ lat: Math.sin((2 * Math.PI * i) / k), lon: Math.cos((2 * Math.PI * i) / k) })) } }] }),
      LIMITS.geoPolygonPoints,
      /exterior: at most/,
    ],
  ];
  for (const [name, make, cap, field] of cases) {
    it(`${name}: ${cap} is served, ${cap + 1} is a 400 naming it`, async () => {
      await served('/api/chunk/search', search(make(cap)));
      await refused('/api/chunk/search', search(make(cap + 1)), field, cap);
    });
  }

  it('scroll: must_not ids', async () => {
    await served('/api/chunks/scroll', { filters: { must_not: [{ ids: chunkIds.slice(0, LIMITS.filterIds) }] } });
    await refused('/api/chunks/scroll', { filters: { must_not: [{ ids: [...chunkIds.slice(0, LIMITS.filterIds), uuidOf(1)] }] } }, /at most/, LIMITS.filterIds);
  });
});

describe('query and option caps', () => {
  const query = (k: number): string => 'aspirin '.repeat(Math.ceil(k / 8)).slice(0, k);
  const routes: [string, (q: string) => Record<string, unknown>][] = [
    ['/api/chunk/search', (q) => ({ search_type: 'bm25', query: q })],
    ['/api/chunk/autocomplete', (q) => ({ search_type: 'bm25', query: q })],
    ['/api/chunk/count', (q) => ({ search_type: 'bm25', query: q })],
    ['/api/chunk_group/search', (q) => ({ search_type: 'bm25', query: q, group_tracking_id: 'g0' })],
    ['/api/chunk_group/group_oriented_search', (q) => ({ search_type: 'bm25', query: q })],
  ];
  for (const [path, make] of routes) {
    it(`${path}: a query of ${LIMITS.queryLength} characters is served, one more is a 400`, async () => {
      await served(path, make(query(LIMITS.queryLength)));
      await refused(path, make(query(LIMITS.queryLength + 1)), /query: must be at most/, LIMITS.queryLength);
    });
  }

  it('multi-query parts, rerank_query, tag_weights, highlight and typo options, user_id', async () => {
    const multi = (k: number) => ({ search_type: 'semantic', query: range(k, (i) => ({ query: `aspirin ${i}`, weight: 1 })) });
    await served('/api/chunk/search', multi(LIMITS.multiQueries));
    await refused('/api/chunk/search', multi(LIMITS.multiQueries + 1), /query: at most/, LIMITS.multiQueries);
    const base = { search_type: 'bm25', query: 'aspirin' };
    await refused('/api/chunk/search', { ...base, sort_options: { sort_by: { rerank_type: 'bm25', rerank_query: query(LIMITS.queryLength + 1) } } }, /rerank_query: must be at most/, LIMITS.queryLength);
    const weights = (k: number) => Object.fromEntries(range(k, (i) => [`t${i}`, 1]) as [string, number][]);
    await served('/api/chunk/search', { ...base, sort_options: { tag_weights: weights(LIMITS.tagWeights) } });
    await refused('/api/chunk/search', { ...base, sort_options: { tag_weights: weights(LIMITS.tagWeights + 1) } }, /tag_weights/, LIMITS.tagWeights);
    const hl = (o: Record<string, unknown>) => ({ ...base, highlight_options: o });
    await served('/api/chunk/search', hl({ pre_tag: '<'.padEnd(LIMITS.highlightTagLength, 'm'), post_tag: '>', highlight_delimiters: range(LIMITS.highlightDelimiters, () => '.') }));
    await refused('/api/chunk/search', hl({ pre_tag: 'm'.repeat(LIMITS.highlightTagLength + 1) }), /pre_tag must be at most/, LIMITS.highlightTagLength);
    await refused('/api/chunk/search', hl({ post_tag: 'm'.repeat(LIMITS.highlightTagLength + 1) }), /post_tag must be at most/, LIMITS.highlightTagLength);
    await refused('/api/chunk/search', hl({ highlight_delimiters: range(LIMITS.highlightDelimiters + 1, () => '.') }), /highlight_delimiters: at most/, LIMITS.highlightDelimiters);
    const typo = (k: number) => ({ ...base, typo_options: { correct_typos: true, disable_on_word: range(k, (i) => `w${i}`) } });
    await served('/api/chunk/search', typo(LIMITS.typoDisabledWords));
    await refused('/api/chunk/search', typo(LIMITS.typoDisabledWords + 1), /disable_on_word: at most/, LIMITS.typoDisabledWords);
    await served('/api/chunk/search', { ...base, user_id: 'u'.repeat(LIMITS.userIdLength) });
    await refused('/api/chunk/search', { ...base, user_id: 'u'.repeat(LIMITS.userIdLength + 1) }, /user_id: must be at most/, LIMITS.userIdLength);
  });
});

describe('id list caps', () => {
  it('recommendations: positive ids and tracking ids', async () => {
    await served('/api/chunk/recommend', { recommend_type: 'bm25', positive_tracking_ids: range(LIMITS.exampleIds, (i) => `t${i}`) });
    await refused('/api/chunk/recommend', { recommend_type: 'bm25', positive_tracking_ids: range(LIMITS.exampleIds + 1, (i) => `t${i}`) }, /positive_tracking_ids: at most/, LIMITS.exampleIds);
    await refused('/api/chunk/recommend', { recommend_type: 'bm25', positive_chunk_ids: [chunkIds[0]], negative_chunk_ids: range(LIMITS.exampleIds + 1, uuidOf) }, /negative_chunk_ids: at most/, LIMITS.exampleIds);
  });

  it('get-by-ids routes', async () => {
    const ids = chunkIds.slice(0, LIMITS.idsPerLookup);
    await served('/api/chunks', { ids });
    await refused('/api/chunks', { ids: [...ids, uuidOf(1)] }, /ids: at most/, LIMITS.idsPerLookup);
    const tids = range(LIMITS.idsPerLookup, (i) => `t${i}`);
    await served('/api/chunks/tracking', { tracking_ids: tids });
    await refused('/api/chunks/tracking', { tracking_ids: [...tids, 'x'] }, /tracking_ids: at most/, LIMITS.idsPerLookup);
    await served('/api/chunk_group/chunks', { chunk_ids: ids });
    await refused('/api/chunk_group/chunks', { chunk_ids: [...ids, uuidOf(1)] }, /chunk_ids: at most/, LIMITS.idsPerLookup);
  });
});

describe('dataset model-server URLs', () => {
  it(`a URL of ${LIMITS.urlLength} characters is stored, one more is a 400 naming the key`, async () => {
    const url = (k: number) => 'http://reranker.test/' + 'a'.repeat(k - 21);
    const ok = await t.org.put('/api/dataset', { dataset_id: t.datasetId, server_configuration: { RERANKER_BASE_URL: url(LIMITS.urlLength) } });
    expect(ok.status, ok.text).toBe(200);
    const res = await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_id: t.datasetId, server_configuration: { SPLADE_BASE_URL: url(LIMITS.urlLength + 1) } }), 400);
    expect(res.body.message).toMatch(/SPLADE_BASE_URL: must be at most 4096/);
    const reset = await t.org.put('/api/dataset', { dataset_id: t.datasetId, server_configuration: { RERANKER_BASE_URL: '' } });
    expect(reset.status, reset.text).toBe(200);
  });
});
