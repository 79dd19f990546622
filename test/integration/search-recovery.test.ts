/**
 * Crash and restart of the core: after a kill -9 during a bulk ingest, a clean restart with
 * snapshots and a log tail, and a corrupt snapshot, the index matches the store exactly. A
 * dataset whose typo vocabulary was on has it filled again after a restart, in the background.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, loadChunks } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let ds: Client;
let datasetId: string;

beforeAll(async () => {
  // Info logs: the core's "dataset loaded" and "typo vocabulary built" say when each happened.
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_LOG_LEVEL: 'info' } });
  const tenant = await createTenant(stack);
  ds = tenant.ds;
  datasetId = tenant.datasetId;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** Every chunk id the index holds, by scrolling. */
async function indexedIds(): Promise<string[]> {
  const out: string[] = [];
  let offset: string | undefined;
  for (;;) {
    const res = await ds.post('/api/chunks/scroll', { page_size: 500, offset_chunk_id: offset });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.chunks.map((c: any) => c.id as string));
    // The page starts at offset_chunk_id (inclusive); the response names where the next one starts.
    if (res.body.next_offset_chunk_id === null) return out;
    offset = res.body.next_offset_chunk_id;
  }
}

/** Asserts the index holds exactly the store's chunks and ranks as brute force does. */
async function expectIndexMatchesStore(seed: number): Promise<void> {
  const chunks = await loadChunks(stack, datasetId);
  expect(await indexedIds()).toEqual(chunks.map((c) => c.id).sort());
  const r = rng(seed);
  for (let i = 0; i < 10; i++) {
    const query = randomQuery(r);
    const res = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 10 });
    expect(res.status, res.text).toBe(200);
    const expected = bruteForceBm25(chunks, query, null).slice(0, 10);
    expect(res.body.chunks.map((x: any) => x.score)).toEqual(expected.map((x) => expect.closeTo(x.score, 9)));
  }
}

describe('core recovery', () => {
  it('rebuilds exactly after kill -9 during a bulk ingest', async () => {
    const payloads = randomChunks(1200, 3).map((p, i) => ({ ...p, tracking_id: `crash-${i}` }));
    const ingest = (async () => {
      for (let i = 0; i < payloads.length; i += 60) {
        const res = await ds.post('/api/chunk', payloads.slice(i, i + 60));
        // Writes are durable in the store whether or not the core is up to index them.
        expect(res.status, res.text).toBe(200);
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    await stack.kill('core', 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    await stack.start('core');
    await ingest;
    // A write whose apply call failed (the core down, or still loading past the call's deadline on
    // a loaded machine) is acknowledged and indexed by the core's periodic catch-up: wait for it,
    // then compare exactly.
    const stored = (await loadChunks(stack, datasetId)).length;
    await eventually({ what: 'the index to hold every stored chunk', timeoutMs: 30_000, intervalMs: 250, context: () => stack.output().slice(-3000) }, async () =>
      (await indexedIds()).length === stored ? true : undefined,
    );
    await expectIndexMatchesStore(1);
  });

  it('loads snapshots and replays the log tail written while it was down', async () => {
    await stack.kill('core', 'SIGTERM');
    const snapshots = path.join(stack.dataDir, 'index', datasetId);
    expect(fs.existsSync(snapshots)).toBe(true);
    // While the core is down: new chunks, updates and deletes go to the store only.
    expect((await ds.post('/api/chunk', randomChunks(50, 8).map((p, i) => ({ ...p, tracking_id: `tail-${i}` })))).status).toBe(200);
    expect((await ds.put('/api/chunk', { tracking_id: 'crash-5', chunk_html: 'vaccine vaccine heart' })).status).toBe(204);
    expect((await ds.del('/api/chunk/tracking_id/crash-6')).status).toBe(204);
    await stack.start('core');
    await expectIndexMatchesStore(2);
  });

  it('fills a typo vocabulary that was on again after a restart, before any typo query, and corrects with it', async () => {
    const typo = () => ds.post('/api/chunk/search', { query: 'vacine', search_type: 'bm25', page_size: 10, typo_options: { correct_typos: true } });
    const first = await typo();
    expect(first.status, first.text).toBe(200);
    expect(first.body.corrected_query).toBe('vaccine');
    // A clean stop snapshots the dataset, its vocabulary on; the load does not restore it (a
    // one-piece recount held the event loop for over a second for 5,000 abstracts).
    await stack.kill('core', 'SIGTERM');
    await stack.start('core');
    const plain = await ds.post('/api/chunk/search', { query: 'vaccine', search_type: 'bm25', page_size: 10 });
    expect(plain.status, plain.text).toBe(200);
    const sinceLoad = (): string => {
      const out = stack.output();
      return out.slice(out.lastIndexOf('dataset loaded'));
    };
    await eventually({ what: 'the vocabulary filled again after the load, no typo query asked', timeoutMs: 30_000, intervalMs: 100, context: () => stack.output().slice(-3000) }, async () =>
      sinceLoad().includes('typo vocabulary built') ? true : undefined,
    );
    const again = await typo();
    expect(again.status, again.text).toBe(200);
    expect(again.body.corrected_query).toBe('vaccine');
  });

  it('ignores a corrupt snapshot and rebuilds from the store', async () => {
    await stack.kill('core', 'SIGTERM');
    const dir = path.join(stack.dataDir, 'index', datasetId);
    for (const sub of fs.readdirSync(dir)) {
      for (const f of fs.readdirSync(path.join(dir, sub))) fs.writeFileSync(path.join(dir, sub, f), 'garbage');
    }
    await stack.start('core');
    await expectIndexMatchesStore(3);
  });
});
