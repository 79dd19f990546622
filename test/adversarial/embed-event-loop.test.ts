/**
 * The job process's event loop stays responsive while the embedded model (USE-Lite) embeds a
 * large backlog of long documents: BullMQ renews job locks from timers on that loop, so a blocked
 * loop loses locks and runs jobs twice. The process reports its own event-loop delay
 * (workers/jobs/loop-monitor.ts); no chunk is embedded twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant } from '../helpers/fixtures.js';
import { rng } from '../helpers/random-corpus.js';
import { countRows } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let ds: Client;
let datasetId: string;

/**
 * Long documents to embed (EVENT_LOOP_DOCS to change): 15 keep the model busy for 10-25 s here,
 * ten or more 1 s windows of the loop monitor (WINDOW_MS) and a few lock renewals (every 5 s).
 */
const DOCS = Number(process.env.EVENT_LOOP_DOCS ?? 15);
/** The job process's loop monitor window (QUARRY_LOOP_MONITOR_MS; 5 s by default). */
const WINDOW_MS = 1000;
/** Longest event-loop delay accepted in the job process, in ms: half of BullMQ's lock renewal slack, generous for a shared machine. */
const MAX_DELAY_MS = 1500;

const WORDS = 'protein cell gene expression tumour receptor pathway mutation signal binding clinical trial patient dose response model brain neuron memory virus infection immune vaccine enzyme membrane structure analysis cohort risk factor outcome'.split(' ');

/** A long scientific-looking abstract: `sentences` sentences of 12-24 words. */
function abstract(r: () => number, sentences: number): string {
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const n = 12 + Math.floor(r() * 12);
    const words = Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]!);
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    out.push(words.join(' ') + '.');
  }
  return out.join(' ');
}

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_LOG_LEVEL: 'debug', QUARRY_EMBED_THREADS: '2', QUARRY_LOOP_MONITOR_MS: String(WINDOW_MS) } });
  const tenant = await createTenant(stack);
  datasetId = tenant.datasetId;
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Event-loop delays the job process reported, in ms (one per window). */
function reportedDelays(): number[] {
  return stack
    .output()
    .split('\n')
    .filter((l) => l.startsWith('[jobs]') && /event loop (delay|blocked)/.test(l))
    .map((l) => JSON.parse(l.slice('[jobs] '.length)).maxMs as number);
}

describe('job process event loop', () => {
  it('stays responsive while USE-Lite embeds long documents, and embeds each chunk once', async () => {
    const r = rng(11);
    const t0 = Date.now();
    for (let i = 0; i < DOCS; i += 60) {
      const batch = Array.from({ length: Math.min(60, DOCS - i) }, (_, j) => ({ chunk_html: `<p>${abstract(r, 40)}</p>`, tracking_id: `doc-${i + j}` }));
      expect((await ds.post('/api/chunk', batch)).status).toBe(200);
    }
    let usage: any;
    const until = Date.now() + 240_000;
    while (Date.now() < until) {
      usage = (await ds.get(`/api/dataset/usage/${datasetId}`)).body;
      if (usage.chunks_pending_embedding === 0) break;
      await sleep(500);
    }
    const elapsed = Date.now() - t0;
    expect(usage, stack.output().slice(-3000)).toMatchObject({ chunk_count: DOCS, chunks_pending_embedding: 0 });
    // The report of the window in progress, which holds the last of the embedding (it comes at
    // most one window from now).
    const reported = reportedDelays().length;
    await eventually({ what: 'the event-loop report of the last window', timeoutMs: 15_000, context: () => stack.output().slice(-3000) }, () => reportedDelays().length > reported);
    const delays = reportedDelays();
    console.log(`embedded ${DOCS} docs in ${elapsed} ms; event-loop max delay per ${WINDOW_MS} ms window: ${delays.join(', ')}`);
    // A window per WINDOW_MS, less the drift of a loaded machine's timers (each window starts
    // when the last report ran): a silent monitor, or one blocked for windows, reports far fewer.
    expect(delays.length).toBeGreaterThanOrEqual(Math.floor(elapsed / (1.5 * WINDOW_MS)) - 1);
    expect(Math.max(...delays), stack.output().slice(-3000)).toBeLessThan(MAX_DELAY_MS);
    expect(stack.output()).not.toMatch(/could not renew lock|stalled/);
    expect(await countRows(stack, 'chunk_vectors', 'dataset_id = ?', datasetId)).toBe(DOCS);
  }, 300_000);
});
