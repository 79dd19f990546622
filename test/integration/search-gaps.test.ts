/**
 * The last spec gaps of the search half, end to end:
 * - `server_configuration` BM25_ENABLED / FULLTEXT_ENABLED / SEMANTIC_ENABLED refuse every kind
 *   of search of a disabled type (hybrid needs both of its legs) with a 400 naming the flag;
 * - POST /api/chunk_group/group_oriented_autocomplete equals the chunk autocomplete's ranking
 *   grouped by group, and group-oriented search with every word required when nothing is typed;
 * - geo_polygon filters equal a point-in-polygon brute force over the stored chunks (concave
 *   shapes, holes, points a hair either side of an edge);
 * - POST /api/chunk/split over HTTP (golden page, bounds, 4xx cases).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks, rng } from '../helpers/random-corpus.js';
import { loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { expectRejected } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let tenant: Tenant;
let ds: Client;
let chunks: OracleChunk[];

/** Creates `payloads` in batches of 100. */
async function ingest(c: Client, payloads: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < payloads.length; i += 100) {
    const res = await c.post('/api/chunk', payloads.slice(i, i + 100));
    expect(res.status, res.text).toBe(200);
  }
}

/** A client on a new dataset of the tenant, with `config` as server_configuration and a few chunks. */
async function datasetWith(config: Record<string, unknown>): Promise<{ c: Client; id: string; chunkId: string }> {
  const id = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: config });
  const c = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': id });
  await ingest(c, randomChunks(20, 3));
  const chunkId = (await loadChunks(stack, id))[0]!.id;
  return { c, id, chunkId };
}

beforeAll(async () => {
  stack = await startStack();
  tenant = await createTenant(stack);
  ds = tenant.ds;
  await ingest(ds, randomChunks(240, 9));
  chunks = await loadChunks(stack, tenant.datasetId);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('server_configuration search type flags', () => {
  /** Every request that runs a search of `type`, as [route, body]. */
  const requestsOf = (type: string, chunkId: string): [string, Record<string, unknown>][] => [
    ['/api/chunk/search', { query: 'gene trial', search_type: type }],
    ['/api/chunk/autocomplete', { query: 'gene tri', search_type: type }],
    ['/api/chunk_group/search', { query: 'gene trial', search_type: type, group_tracking_id: 'g1' }],
    ['/api/chunk_group/group_oriented_search', { query: 'gene trial', search_type: type }],
    ['/api/chunk_group/group_oriented_autocomplete', { query: 'gene tri', search_type: type }],
    ...(type === 'hybrid' ? [] : ([['/api/chunk/count', { query: 'gene trial', search_type: type }]] as [string, Record<string, unknown>][])),
    ...(type === 'hybrid'
      ? []
      : ([
          ['/api/chunk/recommend', { positive_chunk_ids: [chunkId], recommend_type: type }],
          ['/api/chunk_group/recommend', { positive_group_tracking_ids: ['g1'], recommend_type: type }],
        ] as [string, Record<string, unknown>][])),
  ];

  it('refuses searches of a disabled type with a 400 naming the flag, on every search route', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ BM25_ENABLED: false }, 'bm25', 'BM25_ENABLED'],
      [{ FULLTEXT_ENABLED: false }, 'fulltext', 'FULLTEXT_ENABLED'],
      [{ FULLTEXT_ENABLED: false }, 'hybrid', 'FULLTEXT_ENABLED'],
      [{ SEMANTIC_ENABLED: false }, 'semantic', 'SEMANTIC_ENABLED'],
      [{ SEMANTIC_ENABLED: false }, 'hybrid', 'SEMANTIC_ENABLED'],
    ];
    for (const [config, type, flag] of cases) {
      const { c, chunkId } = await datasetWith(config);
      for (const [route, body] of requestsOf(type, chunkId)) {
        const res = await expectRejected(stack, () => c.post(route, body), 400, new RegExp(flag));
        expect(res.body.message, `${route} ${type}`).toContain(`"${type}"`);
      }
    }
  });

  it('refuses a re-scoring by a disabled type (sort_by.rerank_type), and the semantic default of recommend', async () => {
    const { c, chunkId } = await datasetWith({ SEMANTIC_ENABLED: false, BM25_ENABLED: false });
    await expectRejected(stack, () => c.post('/api/chunk/search', { query: 'gene', search_type: 'fulltext', sort_options: { sort_by: { rerank_type: 'bm25' } } }), 400, /sort_by.rerank_type "bm25".*BM25_ENABLED/);
    await expectRejected(stack, () => c.post('/api/chunk/search', { query: 'gene', search_type: 'fulltext', sort_by: { rerank_type: 'semantic' } }), 400, /SEMANTIC_ENABLED/);
    await expectRejected(stack, () => c.post('/api/chunk/recommend', { positive_chunk_ids: [chunkId] }), 400, /recommend_type "semantic".*SEMANTIC_ENABLED/);
    // The enabled type still answers on the same dataset.
    const ok = await c.post('/api/chunk/search', { query: 'gene', search_type: 'fulltext' });
    expect(ok.status, ok.text).toBe(200);
  });

  it('leaves the other types enabled, defaults every flag to enabled, and follows a dataset update', async () => {
    const { c, id } = await datasetWith({ SEMANTIC_ENABLED: false });
    for (const type of ['bm25', 'fulltext']) {
      for (const [route, body] of requestsOf(type, (await loadChunks(stack, id))[0]!.id)) {
        const res = await c.post(route, body);
        // The group search names a group that may not exist in this small dataset: anything but the flag's 400.
        expect(res.status === 200 || res.status === 404, `${route} ${type}: ${res.text}`).toBe(true);
      }
    }
    const on = await ds.post('/api/chunk/search', { query: 'gene', search_type: 'bm25' });
    expect(on.status, on.text).toBe(200);
    const org = tenant.org;
    expect((await org.put('/api/dataset', { dataset_id: id, server_configuration: { SEMANTIC_ENABLED: false, BM25_ENABLED: false } })).status).toBe(200);
    await expectRejected(stack, () => c.post('/api/chunk/search', { query: 'gene', search_type: 'bm25' }), 400, /BM25_ENABLED/);
    expect((await org.put('/api/dataset', { dataset_id: id, server_configuration: { SEMANTIC_ENABLED: false, BM25_ENABLED: true } })).status).toBe(200);
    expect((await c.post('/api/chunk/search', { query: 'gene', search_type: 'bm25' })).status).toBe(200);
  });
});

/** Group ids of a chunk, from the store. */
const groupsOf = (id: string): string[] => chunks.find((c) => c.id === id)!.groupIds;

/** A chunk ranking (ids and scores, best first) grouped as group-oriented search groups it: first page of `pageSize` groups, `groupSize` each. */
function grouped(ranking: { id: string; score: number }[], pageSize: number, groupSize: number): { group: string; hits: { id: string; score: number }[] }[] {
  const byGroup = new Map<string, { id: string; score: number }[]>();
  for (const r of ranking) {
    for (const g of groupsOf(r.id)) {
      if (!byGroup.has(g)) byGroup.set(g, []);
      byGroup.get(g)!.push(r);
    }
  }
  return [...byGroup.entries()].slice(0, pageSize).map(([group, hits]) => ({ group, hits: hits.slice(0, groupSize) }));
}

/** The V2 group results of a group-oriented response, comparable with {@link grouped}. */
const groupsOfResponse = (body: any) =>
  body.results.map((g: any) => ({ group: g.group.id as string, hits: g.chunks.map((x: any) => ({ id: x.chunk.id as string, score: x.score as number })) }));

describe('group-oriented autocomplete', () => {
  it('equals the chunk autocomplete ranking grouped by group (prefix of the last word, every word required)', async () => {
    let nonEmpty = 0;
    for (const [query, type, pageSize, groupSize] of [
      ['gene pro', 'bm25', 3, 3],
      ['run', 'bm25', 2, 5],
      ['the ca', 'fulltext', 3, 1],
      ['vaccine', 'bm25', 10, 2],
      ['mice he', 'fulltext', 1, 4],
    ] as const) {
      const res = await ds.post('/api/chunk_group/group_oriented_autocomplete', { query, search_type: type, page_size: pageSize, group_size: groupSize });
      expect(res.status, res.text).toBe(200);
      const ranking = await ds.post('/api/chunk/autocomplete', { query, search_type: type, page_size: 1000, slim_chunks: true });
      expect(ranking.status, ranking.text).toBe(200);
      const expected = grouped(ranking.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })), pageSize, groupSize);
      expect(groupsOfResponse(res.body), query).toEqual(expected);
      expect(res.body.total_pages).toBe(0);
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      if (expected.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(3);
  });

  it('with nothing being typed, equals group-oriented search with every word required', async () => {
    for (const query of ['gene trial ', 'fox quick ']) {
      const auto = await ds.post('/api/chunk_group/group_oriented_autocomplete', { query, search_type: 'bm25', page_size: 4, group_size: 2 });
      const search = await ds.post('/api/chunk_group/group_oriented_search', {
        query,
        search_type: 'bm25',
        page_size: 4,
        group_size: 2,
        filters: { must: [{ field: 'content', match_all: [query.trim()] }] },
      });
      expect(auto.status, auto.text).toBe(200);
      expect(search.status, search.text).toBe(200);
      expect(groupsOfResponse(auto.body)).toEqual(groupsOfResponse(search.body));
      expect(groupsOfResponse(auto.body).length).toBeGreaterThan(0);
    }
  });

  it('extends with non-prefix matches after the prefix matches when extend_results is set', async () => {
    const body = { query: 'gene zzzunkn', search_type: 'bm25', page_size: 4, group_size: 3 };
    const plain = await ds.post('/api/chunk_group/group_oriented_autocomplete', body);
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.results).toEqual([]);
    const extended = await ds.post('/api/chunk_group/group_oriented_autocomplete', { ...body, extend_results: true });
    const ranking = await ds.post('/api/chunk/autocomplete', { ...body, page_size: 1000, extend_results: true, slim_chunks: true });
    expect(ranking.body.chunks.length).toBeGreaterThan(0);
    expect(groupsOfResponse(extended.body)).toEqual(grouped(ranking.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })), 4, 3));
  });

  it('always answers the first page, V1 as group_chunks, and honours filters', async () => {
    const body = { query: 'gene pro', search_type: 'bm25', page_size: 2, group_size: 2 };
    const first = await ds.post('/api/chunk_group/group_oriented_autocomplete', body);
    const third = await ds.post('/api/chunk_group/group_oriented_autocomplete', { ...body, page: 3, get_total_pages: true });
    expect(groupsOfResponse(third.body)).toEqual(groupsOfResponse(first.body));
    expect(third.body.total_pages).toBe(0);
    const v1 = await ds.post('/api/chunk_group/group_oriented_autocomplete', body, { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body.group_chunks.map((g: any) => g.group_id)).toEqual(groupsOfResponse(first.body).map((g: any) => g.group));
    expect(v1.body.total_chunk_pages).toBe(0);
    const filters = { must: [{ field: 'tag_set', match_any: ['red'] }] };
    const filtered = await ds.post('/api/chunk_group/group_oriented_autocomplete', { ...body, filters });
    for (const g of filtered.body.results) for (const x of g.chunks) expect(chunks.find((c) => c.id === x.chunk.id)!.tags).toContain('red');
  });

  it('refuses bad bodies with a 4xx {message}', async () => {
    const route = '/api/chunk_group/group_oriented_autocomplete';
    for (const [body, message] of [
      [{ search_type: 'bm25' }, /query/],
      [{ query: '   ', search_type: 'bm25' }, /Query cannot be empty/],
      [{ query: 'gene' }, /search_type/],
      [{ query: 'gene', search_type: 'fuzzy' }, /search_type/],
      [{ query: 12, search_type: 'bm25' }, /query/],
      [{ query: 'gene', search_type: 'bm25', group_size: -1 }, /group_size/],
      [{ query: 'gene', search_type: 'bm25', group_size: 'three' }, /group_size/],
      [{ query: 'gene', search_type: 'bm25', page_size: 20_000 }, /page_size/],
      [{ query: 'gene', search_type: 'bm25', extend_results: 'yes' }, /extend_results/],
      [{ query: 'gene', search_type: 'bm25', filters: { must: [{ field: 'nope', match_any: ['x'] }] } }, /unknown filter field/],
      [[], /body/],
    ] as [unknown, RegExp][]) {
      await expectRejected(stack, () => ds.post(route, body), 400, message);
    }
    await expectRejected(stack, () => ds.post(route, { query: 'gene', search_type: 'bm25' }, { 'tr-dataset': undefined }), undefined);
    await expectRejected(stack, () => ds.post(route, { query: 'gene', search_type: 'bm25' }, { authorization: undefined }), 401);
  });
});

/** Planar point in ring by the winding number (lon as x, lat as y), written independently of the shard's ray casting. */
function winding(lat: number, lon: number, ring: { lat: number; lon: number }[]): boolean {
  let wn = 0;
  for (let i = 0; i < ring.length; i++) {
    const a = ring[i]!;
    const b = ring[(i + 1) % ring.length]!;
    const side = (b.lon - a.lon) * (lat - a.lat) - (lon - a.lon) * (b.lat - a.lat);
    if (a.lat <= lat) {
      if (b.lat > lat && side > 0) wn++;
    } else if (b.lat <= lat && side < 0) {
      wn--;
    }
  }
  return wn !== 0;
}

describe('geo_polygon filters', () => {
  let geo: Client;
  let stored: OracleChunk[];
  // A concave "C": the notch between lat 44 and 46 east of lon 2 is outside.
  const concave = [
    { lat: 40, lon: 0 },
    { lat: 40, lon: 6 },
    { lat: 44, lon: 6 },
    { lat: 44, lon: 2 },
    { lat: 46, lon: 2 },
    { lat: 46, lon: 6 },
    { lat: 50, lon: 6 },
    { lat: 50, lon: 0 },
  ];
  // A slanted edge (40,6) -> (50,9) of a triangle: points a hair either side of it.
  const triangle = [
    { lat: 40, lon: 0 },
    { lat: 40, lon: 6 },
    { lat: 50, lon: 9 },
  ];
  const hole = [
    { lat: 41, lon: 0.5 },
    { lat: 41, lon: 1.5 },
    { lat: 49, lon: 1.5 },
    { lat: 49, lon: 0.5 },
  ];

  beforeAll(async () => {
    const id = await createDataset(stack, tenant.orgId, tenant.ownerKey);
    geo = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': id });
    const r = rng(4242);
    const points: { lat: number; lon: number; tid: string }[] = [];
    for (let i = 0; i < 400; i++) points.push({ lat: 38 + r() * 14, lon: -2 + r() * 12, tid: `rand-${i}` });
    // Either side of the slanted edge, 1e-4 degrees off it, along its length.
    for (let k = 1; k < 10; k++) {
      const t = k / 10;
      const lat = 40 + 10 * t;
      const lon = 6 + 3 * t;
      points.push({ lat, lon: lon - 1e-4, tid: `edge-in-${k}` }, { lat, lon: lon + 1e-4, tid: `edge-out-${k}` });
    }
    // Inside the notch of the C, and inside each of its arms.
    points.push({ lat: 45, lon: 4, tid: 'notch' }, { lat: 42, lon: 4, tid: 'lower-arm' }, { lat: 48, lon: 4, tid: 'upper-arm' }, { lat: 45, lon: 1, tid: 'spine' });
    await ingest(
      geo,
      points.map((p) => ({ chunk_html: `place ${p.tid}`, tracking_id: p.tid, location: { lat: p.lat, lon: p.lon } })).concat([{ chunk_html: 'place nowhere', tracking_id: 'no-location' } as any]),
    );
    stored = await loadChunks(stack, id);
  }, 60_000);

  /** Ids the service returns for a filter, by scroll and by search. */
  async function matching(filters: unknown): Promise<{ scrolled: string[]; searched: string[] }> {
    const scroll = await geo.post('/api/chunks/scroll', { filters, page_size: 1000 });
    expect(scroll.status, scroll.text).toBe(200);
    const search = await geo.post('/api/chunk/search', { query: 'place', search_type: 'bm25', filters, page_size: 1000 });
    expect(search.status, search.text).toBe(200);
    return { scrolled: scroll.body.chunks.map((c: any) => c.id).sort(), searched: search.body.chunks.map((c: any) => c.chunk.id).sort() };
  }

  const expectedIds = (pred: (c: OracleChunk) => boolean): string[] => stored.filter((c) => c.lat !== null && pred(c)).map((c) => c.id).sort();
  const byTid = (tid: string): string => stored.find((c) => c.trackingId === tid)!.id;

  it('matches exactly the stored points inside a concave polygon (the notch is outside)', async () => {
    const filters = { must: [{ field: 'location', geo_polygon: { exterior: concave } }] };
    const expected = expectedIds((c) => winding(c.lat!, c.lon!, concave));
    expect(expected.length).toBeGreaterThan(50);
    const got = await matching(filters);
    expect(got.scrolled).toEqual(expected);
    expect(got.searched).toEqual(expected);
    expect(got.scrolled).not.toContain(byTid('notch'));
    for (const tid of ['lower-arm', 'upper-arm', 'spine']) expect(got.scrolled).toContain(byTid(tid));
    expect(got.scrolled).not.toContain(byTid('no-location'));
    // must_not takes the complement among all chunks, the chunk without a location included.
    const outside = await geo.post('/api/chunks/scroll', { filters: { must_not: [{ field: 'location', geo_polygon: { exterior: concave } }] }, page_size: 1000 });
    expect(outside.body.chunks.map((c: any) => c.id).sort()).toEqual(stored.filter((c) => !expected.includes(c.id)).map((c) => c.id).sort());
  });

  it('tells apart points a hair either side of a slanted edge', async () => {
    const got = await matching({ must: [{ field: 'location', geo_polygon: { exterior: triangle } }] });
    expect(got.scrolled).toEqual(expectedIds((c) => winding(c.lat!, c.lon!, triangle)));
    for (let k = 1; k < 10; k++) {
      expect(got.scrolled, `edge point ${k} inside`).toContain(byTid(`edge-in-${k}`));
      expect(got.scrolled, `edge point ${k} outside`).not.toContain(byTid(`edge-out-${k}`));
    }
  });

  it('excludes the interior rings (holes), and follows the ring whichever way it turns', async () => {
    const got = await matching({ must: [{ field: 'location', geo_polygon: { exterior: concave, interior: [hole] } }] });
    const expected = expectedIds((c) => winding(c.lat!, c.lon!, concave) && !winding(c.lat!, c.lon!, hole));
    expect(got.scrolled).toEqual(expected);
    expect(got.scrolled).not.toContain(byTid('spine'));
    const reversed = await matching({ must: [{ field: 'location', geo_polygon: { exterior: [...concave].reverse() } }] });
    expect(reversed.scrolled).toEqual(expectedIds((c) => winding(c.lat!, c.lon!, concave)));
  });

  it('matches random star-shaped (concave) polygons exactly as brute force', async () => {
    const r = rng(99);
    for (let n = 0; n < 8; n++) {
      const center = { lat: 42 + r() * 8, lon: 1 + r() * 6 };
      const points = 5 + Math.floor(r() * 10);
      const ring = Array.from({ length: points }, (_, i) => {
        const angle = (2 * Math.PI * i) / points;
        const radius = (i % 2 === 0 ? 1 : 0.35) * (1.5 + r() * 3);
        return { lat: Math.max(-90, Math.min(90, center.lat + radius * Math.sin(angle))), lon: center.lon + radius * Math.cos(angle) };
      });
      const got = await matching({ must: [{ field: 'location', geo_polygon: { exterior: ring } }] });
      expect(got.scrolled, JSON.stringify(ring)).toEqual(expectedIds((c) => winding(c.lat!, c.lon!, ring)));
      expect(got.searched).toEqual(got.scrolled);
    }
  });

  it('refuses malformed polygons with a 400', async () => {
    for (const polygon of [
      { exterior: [{ lat: 1, lon: 1 }, { lat: 2, lon: 2 }] },
      { exterior: [{ lat: 100, lon: 0 }, { lat: 1, lon: 1 }, { lat: 2, lon: 2 }] },
      { exterior: 'square' },
      { interior: [] },
      { exterior: concave, interior: [[{ lat: 1, lon: 1 }]] },
    ]) {
      await expectRejected(stack, () => geo.post('/api/chunks/scroll', { filters: { must: [{ field: 'location', geo_polygon: polygon }] } }), 400);
    }
    await expectRejected(stack, () => geo.post('/api/chunks/scroll', { filters: { must: [{ field: 'tag_set', geo_polygon: { exterior: concave } }] } }), 400, /geo conditions cannot be used on field "tag_set"/);
  });
});

describe('POST /api/chunk/split', () => {
  it('splits a page at its headings, with remove strings, for any authenticated caller', async () => {
    const chunk_html = '<h1>Guide</h1>\n<h2>Install</h2>\n<p>Note: run the installer and follow every prompt.</p>\n<h2>Use</h2>\n<p>Open the app and sign in.</p>';
    const res = await client(stack.baseUrl, { authorization: tenant.ownerKey }).post('/api/chunk/split', { chunk_html, body_remove_strings: ['Note: '] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      chunks: [
        { headings: ['Guide\nInstall'], body: '<h1>Guide</h1> <h2>Install</h2>\n<p>run the installer and follow every prompt.</p>' },
        { headings: ['Use'], body: '<h2>Use</h2>\n<p>Open the app and sign in.</p>' },
      ],
    });
    expect((await ds.post('/api/chunk/split', { chunk_html: '' })).body).toEqual({ chunks: [] });
  });

  it('refuses pages of 256 KiB and more with a 413, bad bodies with a 400, and anonymous callers with a 401', async () => {
    const big = '<h1>a</h1>' + 'x'.repeat(262_144);
    await expectRejected(stack, () => ds.post('/api/chunk/split', { chunk_html: big }), 413, /too large/);
    // Multi-byte characters count in UTF-8 bytes, as the reference measures.
    await expectRejected(stack, () => ds.post('/api/chunk/split', { chunk_html: 'é'.repeat(131_072) }), 413, /too large/);
    expect((await ds.post('/api/chunk/split', { chunk_html: 'x'.repeat(262_143) })).status).toBe(200);
    for (const [body, message] of [
      [{}, /chunk_html/],
      [{ chunk_html: 5 }, /chunk_html/],
      [{ chunk_html: '<p>x</p>', heading_remove_strings: 'x' }, /heading_remove_strings/],
      [{ chunk_html: '<p>x</p>', body_remove_strings: [1] }, /body_remove_strings/],
      [{ chunk_html: '<p>x</p>', body_remove_strings: Array.from({ length: 101 }, () => 'x') }, /at most 100/],
      [{ chunk_html: '<p>x</p>', heading_remove_strings: ['x'.repeat(1025)] }, /1024/],
      ['<h1>x</h1>', /body/],
    ] as [unknown, RegExp][]) {
      await expectRejected(stack, () => ds.post('/api/chunk/split', body), 400, message);
    }
    await expectRejected(stack, () => client(stack.baseUrl).post('/api/chunk/split', { chunk_html: '<h1>x</h1>' }), 401);
  });
});
