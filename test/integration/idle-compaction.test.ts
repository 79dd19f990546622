/**
 * QUARRY_COMPACT_IDLE_MS: a dataset on the shard threads whose writes stop gives back its index's
 * growth room that long after the last one (the `compact` shard task), once per run of writes,
 * answering as before. An inline dataset does not: the copy would hold the event loop that
 * answers every request.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';

const IDLE_MS = 400;
/** Threaded: every dataset on the shard threads. Inline: the default layout, one inline shard. */
let threaded: Stack;
let inline: Stack;
let tenant: Tenant;
let inlineTenant: Tenant;

beforeAll(async () => {
  // Info: the core logs each compaction with the changes it follows and the bytes it gave back.
  const env = { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_COMPACT_IDLE_MS: String(IDLE_MS), QUARRY_LOG_LEVEL: 'info' };
  [threaded, inline] = await Promise.all([startStack({ env: { ...env, QUARRY_INLINE_SHARD_MAX_CHUNKS: '0' } }), startStack({ env })]);
  [tenant, inlineTenant] = await Promise.all([createTenant(threaded), createTenant(inline)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([threaded?.stop(), inline?.stop()]);
});

/** The core's compaction lines for the tenant's dataset, as logged. */
const compactions = (stack = threaded, t = tenant): { changes: number; freedBytes: number }[] =>
  stack
    .output()
    .split('\n')
    .filter((l) => l.startsWith('[core] {') && l.includes(t.datasetId) && l.includes('"freedBytes"'))
    .map((l) => JSON.parse(l.slice('[core] '.length)) as { changes: number; freedBytes: number });

/** Ranked ids and scores of a few queries. */
async function answers(t = tenant): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['protein', 'cells gene', 'the of heart']) {
    const res = await t.ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 20 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.chunks.length).toBeGreaterThan(0);
    out.push(res.body.chunks.map((c: any) => [c.chunk.id, c.score]));
  }
  return out;
}

it('gives back the growth room once the writes stop, once per run of writes, answering the same', async () => {
  for (const from of [0, 100, 200]) {
    const res = await tenant.ds.post('/api/chunk', randomChunks(from + 100, 3).slice(from));
    expect(res.status, res.text).toBe(200);
  }
  const before = await answers();
  const [first] = await eventually({ what: 'the compaction', timeoutMs: 15_000, context: () => threaded.output() }, () => compactions().length > 0 && compactions());
  expect(first!.changes).toBe(300);
  expect(first!.freedBytes).toBeGreaterThan(0);
  expect(await answers()).toEqual(before);
  // An idle period with no writes compacts nothing more.
  await new Promise((r) => setTimeout(r, IDLE_MS * 4));
  expect(compactions()).toHaveLength(1);
  // A write starts a run: one more compaction, of it alone.
  expect((await tenant.ds.post('/api/chunk', randomChunks(310, 3).slice(300))).status).toBe(200);
  const second = await eventually({ what: 'the second compaction', timeoutMs: 15_000 }, () => compactions().length > 1 && compactions()[1]);
  expect(second.changes).toBe(10);
});

it('leaves an inline dataset as it is: no compaction on the event loop that answers requests', async () => {
  for (const from of [0, 100, 200]) {
    const res = await inlineTenant.ds.post('/api/chunk', randomChunks(from + 100, 3).slice(from));
    expect(res.status, res.text).toBe(200);
  }
  const before = await answers(inlineTenant);
  // Ten idle periods after the last write: the threaded dataset above compacted after one.
  await new Promise((r) => setTimeout(r, IDLE_MS * 10));
  expect(compactions(inline, inlineTenant)).toHaveLength(0);
  expect(await answers(inlineTenant)).toEqual(before);
});
