/**
 * Shard invariance: the same corpus behind one inline shard (in the core's own thread) and 1, 2
 * and 4 shards on the shard threads gives the same ranked results and the same scores (corpus
 * statistics are summed across shards before scoring).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Environments of the stacks compared: the default (small datasets inline), then 1, 2 and 4 shards on threads. */
const LAYOUTS: Record<string, string>[] = [{}, ...[1, 2, 4].map((shards) => ({ QUARRY_SHARDS_PER_DATASET: String(shards), QUARRY_INLINE_SHARD_MAX_CHUNKS: '0' }))];
const stacks: Stack[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  const payloads = randomChunks(300, 31);
  for (const env of LAYOUTS) {
    const stack = await startStack({ env });
    stacks.push(stack);
    const { ds } = await createTenant(stack);
    clients.push(ds);
    for (let i = 0; i < payloads.length; i += 100) {
      const res = await ds.post('/api/chunk', payloads.slice(i, i + 100));
      expect(res.status, res.text).toBe(200);
    }
    const stats = await ds.post('/api/chunk/count', { query: 'the', search_type: 'bm25' });
    expect(stats.status).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(stacks.map((s) => s.stop()));
});

/** Ranked (tracking id, score) pairs; chunk ids differ between stacks, tracking ids do not. */
async function ranked(ds: Client, body: Record<string, unknown>): Promise<{ tid: string; score: number }[]> {
  const res = await ds.post('/api/chunk/search', body);
  expect(res.status, res.text).toBe(200);
  return res.body.chunks.map((x: any) => ({ tid: x.chunk.tracking_id, score: x.score }));
}

describe('shard invariance', () => {
  it('returns the same scores and the same ranked documents inline and for 1, 2 and 4 shards', async () => {
    const r = rng(77);
    for (let q = 0; q < 40; q++) {
      const query = randomQuery(r);
      // ids differ per stack; tracking-id and field filters do not.
      let filters: Record<string, unknown[]> | undefined = q % 3 === 0 ? undefined : randomFilter(r, []);
      if (filters && JSON.stringify(filters).includes('"ids"')) filters = undefined;
      const body = { query, search_type: 'bm25', filters, page_size: 30 };
      const [one, ...others] = await Promise.all(clients.map((c) => ranked(c, body)));
      for (const other of others) {
        expect(other.map((x) => x.score)).toEqual(one!.map((x) => x.score));
        // Within a tie the order follows chunk ids, which are random per stack: compare as sets per score.
        const group = (xs: { tid: string; score: number }[]) => {
          const m = new Map<number, string[]>();
          for (const x of xs) m.set(x.score, [...(m.get(x.score) ?? []), x.tid].sort());
          return m;
        };
        const last = one!.at(-1)?.score;
        const a = group(one!.filter((x) => x.score !== last));
        const b = group(other.filter((x) => x.score !== last));
        expect(b).toEqual(a);
      }
    }
  });
});
