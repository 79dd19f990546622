/**
 * semantic_boost end to end with a fake OpenAI-compatible embedder (real HTTP, known vectors):
 * - at ingestion, a chunk's `semantic_boost {phrase, distance_factor}` moves its stored vector
 *   toward the phrase's vector (away when negative) by distance_factor times their difference,
 *   renormalised: v' = (v + f (p - v)) / |v + f (p - v)|;
 * - at query time, `scoring_options.semantic_boost` searches with q + f p (not renormalised, as
 *   the reference), so every score is cosine(q + f p, v') and the order follows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { cosine, fakeVector, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { startFakeEmbeddingSetup, type Tenant } from '../helpers/fixtures.js';
import { queryStore } from '../helpers/store-snapshot.js';
import type { Stack } from '../helpers/stack.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let datasetId: string;

const TEXT = 'alpha beta gamma';
const PHRASE = 'delta epsilon';

/** The chunks, by tracking id: the same text plain and boosted both ways, the phrase's neighbour, fillers. */
const CHUNKS: Record<string, unknown>[] = [
  { tracking_id: 'plain', chunk_html: `<p>${TEXT}</p>` },
  { tracking_id: 'toward', chunk_html: `<p>${TEXT}</p>`, semantic_boost: { phrase: PHRASE, distance_factor: 0.5 } },
  { tracking_id: 'away', chunk_html: `<p>${TEXT}</p>`, semantic_boost: { phrase: PHRASE, distance_factor: -0.5 } },
  // The reference's alias key of semantic_boost at ingestion.
  { tracking_id: 'alias', chunk_html: `<p>${TEXT}</p>`, distance_phrase: { phrase: PHRASE, distance_factor: 0.25 } },
  { tracking_id: 'neighbour', chunk_html: '<p>delta epsilon zeta</p>' },
  { tracking_id: 'filler-1', chunk_html: '<p>gamma zeta theta iota</p>' },
  { tracking_id: 'filler-2', chunk_html: '<p>kappa lambda alpha</p>' },
  { tracking_id: 'filler-3', chunk_html: '<p>mu nu xi omicron beta</p>' },
];

/** v + f (p - v), renormalised. */
function moved(v: Float32Array, p: Float32Array, f: number): Float32Array {
  const out = v.map((x, i) => x + f * (p[i]! - x));
  const n = Math.hypot(...out);
  return out.map((x) => x / n);
}

/** q + f p. */
const plus = (q: Float32Array, p: Float32Array, f: number): Float32Array => q.map((x, i) => x + f * p[i]!);

/** The vector each chunk must have, by tracking id. */
function expectedVectors(): Map<string, Float32Array> {
  const v = fakeVector(TEXT);
  const p = fakeVector(PHRASE);
  return new Map([
    ['plain', v],
    ['toward', moved(v, p, 0.5)],
    ['away', moved(v, p, -0.5)],
    ['alias', moved(v, p, 0.25)],
    ['neighbour', fakeVector('delta epsilon zeta')],
    ['filler-1', fakeVector('gamma zeta theta iota')],
    ['filler-2', fakeVector('kappa lambda alpha')],
    ['filler-3', fakeVector('mu nu xi omicron beta')],
  ]);
}

/** Stored vectors by tracking id. */
async function storedVectors(): Promise<Map<string, Float32Array>> {
  const rows = await queryStore<{ tracking_id: string; vector: Buffer }>(
    stack,
    'SELECT c.tracking_id, v.vector FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id WHERE v.dataset_id = ?',
    datasetId,
  );
  return new Map(rows.map((r) => [r.tracking_id, new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength))]));
}

/** Brute-force ranking by cosine against a query vector: tracking ids and scores, best first. */
function ranking(q: Float32Array): { tid: string; score: number }[] {
  return [...expectedVectors()].map(([tid, v]) => ({ tid, score: cosine(q, v) })).sort((a, b) => b.score - a.score);
}

/** A semantic search's tracking ids and scores. */
async function search(body: Record<string, unknown>): Promise<{ tid: string; score: number }[]> {
  const res = await ds.post('/api/chunk/search', { search_type: 'semantic', page_size: 20, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body.chunks.map((x: any) => ({ tid: x.chunk.tracking_id, score: x.score }));
}

/** Asserts a result list equals the brute-force ranking: scores to 5 decimals, ids where scores differ. */
function expectRanking(got: { tid: string; score: number }[], expected: { tid: string; score: number }[]): void {
  expect(got.map((g) => g.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 5)));
  for (let i = 0; i < expected.length; i++) {
    const tied = expected.some((e, j) => j !== i && Math.abs(e.score - expected[i]!.score) < 1e-6);
    if (!tied) expect(got[i]!.tid, `rank ${i}`).toBe(expected[i]!.tid);
  }
}

beforeAll(async () => {
  let tenant: Tenant;
  ({ fake, stack, tenant, datasetId } = await startFakeEmbeddingSetup());
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  const res = await ds.post('/api/chunk', CHUNKS);
  expect(res.status, res.text).toBe(200);
  const until = Date.now() + 60_000;
  while ((await ds.get(`/api/dataset/usage/${datasetId}`)).body.chunks_pending_embedding !== 0) {
    if (Date.now() > until) throw new Error(`embedding did not finish\n${stack.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // Stored is not yet searchable: the worker asks the core to apply the vectors after it stores
  // them (or the core's catch-up does, within a second).
  await eventually({ what: 'every stored vector to be searchable', timeoutMs: 30_000, intervalMs: 100 }, async () => (await search({ query: 'x' })).length === CHUNKS.length);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('semantic_boost at ingestion', () => {
  it('stores v moved toward (or away from) the phrase vector by distance_factor, renormalised', async () => {
    const stored = await storedVectors();
    const expected = expectedVectors();
    expect([...stored.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [tid, v] of expected) {
      expect(Array.from(stored.get(tid)!), tid).toEqual(Array.from(v).map((x) => expect.closeTo(x, 6)));
    }
    // The boost really moved them: toward is nearer the phrase than plain, away is farther.
    const p = fakeVector(PHRASE);
    expect(cosine(stored.get('toward')!, p)).toBeGreaterThan(cosine(stored.get('plain')!, p) + 0.1);
    expect(cosine(stored.get('away')!, p)).toBeLessThan(cosine(stored.get('plain')!, p));
  });

  it('ranks the same text by how far its boost moved it: toward > alias > plain > away for the phrase', async () => {
    const got = await search({ query: PHRASE });
    expectRanking(got, ranking(fakeVector(PHRASE)));
    const order = got.map((g) => g.tid).filter((t) => ['toward', 'alias', 'plain', 'away'].includes(t));
    expect(order).toEqual(['toward', 'alias', 'plain', 'away']);
    // For the text itself the unboosted chunk is the exact match (cosine 1).
    const own = await search({ query: TEXT });
    expectRanking(own, ranking(fakeVector(TEXT)));
    expect(own[0]).toEqual({ tid: 'plain', score: expect.closeTo(1, 5) });
  });

  it('re-embeds a chunk whose boost is changed by an update', async () => {
    const res = await ds.put('/api/chunk', { tracking_id: 'away', semantic_boost: { phrase: PHRASE, distance_factor: 0.9 } });
    expect(res.status, res.text).toBe(204);
    const target = moved(fakeVector(TEXT), fakeVector(PHRASE), 0.9);
    const until = Date.now() + 30_000;
    for (;;) {
      const v = (await storedVectors()).get('away')!;
      if (Math.abs(cosine(v, target) - 1) < 1e-6) break;
      if (Date.now() > until) throw new Error('the updated boost was not re-embedded');
      await new Promise((r) => setTimeout(r, 200));
    }
    const got = await search({ query: PHRASE });
    expect(got.find((g) => g.tid === 'away')!.score).toBeCloseTo(cosine(fakeVector(PHRASE), target), 5);
    // Put it back for the other tests' oracle.
    expect((await ds.put('/api/chunk', { tracking_id: 'away', semantic_boost: { phrase: PHRASE, distance_factor: -0.5 } })).status).toBe(204);
    const back = moved(fakeVector(TEXT), fakeVector(PHRASE), -0.5);
    while (Math.abs(cosine((await storedVectors()).get('away')!, back) - 1) >= 1e-6) {
      if (Date.now() > until) throw new Error('the restored boost was not re-embedded');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});

describe('scoring_options.semantic_boost at query time', () => {
  it('searches with q + distance_factor x phrase: exact scores and order of the brute force', async () => {
    const q = fakeVector(TEXT);
    const p = fakeVector('delta epsilon zeta');
    for (const f of [2, 0.5, -0.5]) {
      const got = await search({ query: TEXT, scoring_options: { semantic_boost: { phrase: 'delta epsilon zeta', distance_factor: f } } });
      expectRanking(got, ranking(plus(q, p, f)));
    }
    // The boost changes the answer: unboosted, the neighbour of the phrase is not first; boosted by 2 it is.
    const plain = await search({ query: TEXT });
    expect(plain[0]!.tid).not.toBe('neighbour');
    const boosted = await search({ query: TEXT, scoring_options: { semantic_boost: { phrase: 'delta epsilon zeta', distance_factor: 2 } } });
    expect(boosted[0]!.tid).toBe('neighbour');
  });

  it('accepts the reference alias boost_factor, and ignores an empty phrase or a zero factor', async () => {
    const q = fakeVector(TEXT);
    const p = fakeVector(PHRASE);
    expectRanking(await search({ query: TEXT, scoring_options: { semantic_boost: { phrase: PHRASE, boost_factor: 1.5 } } }), ranking(plus(q, p, 1.5)));
    expectRanking(await search({ query: TEXT, scoring_options: { semantic_boost: { phrase: '  ', distance_factor: 3 } } }), ranking(q));
    expectRanking(await search({ query: TEXT, scoring_options: { semantic_boost: { phrase: PHRASE, distance_factor: 0 } } }), ranking(q));
  });

  it('refuses a malformed boost with a 400', async () => {
    for (const semantic_boost of [{ phrase: 1, distance_factor: 1 }, { phrase: 'x' }, { phrase: 'x', distance_factor: 'far' }, 'x']) {
      const res = await ds.post('/api/chunk/search', { query: TEXT, search_type: 'semantic', scoring_options: { semantic_boost } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toMatch(/semantic_boost/);
    }
  });
});
