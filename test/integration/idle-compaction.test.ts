/**
 * QUARRY_COMPACT_IDLE_MS: a dataset whose writes stop gives back its index's growth room that long
 * after the last one (the `compact` shard task), once per run of writes, answering as before.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';

const IDLE_MS = 400;
let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  // Info: the core logs each compaction with the changes it follows and the bytes it gave back.
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_COMPACT_IDLE_MS: String(IDLE_MS), QUARRY_LOG_LEVEL: 'info' } });
  tenant = await createTenant(stack);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The core's compaction lines for this dataset, as logged. */
const compactions = (): { changes: number; freedBytes: number }[] =>
  stack
    .output()
    .split('\n')
    .filter((l) => l.startsWith('[core] {') && l.includes(tenant.datasetId) && l.includes('"freedBytes"'))
    .map((l) => JSON.parse(l.slice('[core] '.length)) as { changes: number; freedBytes: number });

/** Ranked ids and scores of a few queries. */
async function answers(): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['protein', 'cells gene', 'the of heart']) {
    const res = await tenant.ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 20 });
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
  const [first] = await eventually({ what: 'the compaction', timeoutMs: 15_000, context: () => stack.output() }, () => compactions().length > 0 && compactions());
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
