/**
 * What background embedding costs search (issue 11: "background work never starves search"):
 * SciFact bm25 over HTTP (wrk, one connection, page_size 10) right after the corpus was ingested,
 * while the job workers embed it with the default embedded model, against the same search with
 * embedding off. Three configurations, each a fresh stack, in rounds whose order rotates so the
 * machine's drift falls on all of them:
 *   - idle: QUARRY_EMBED_JOBS=false;
 *   - embedding, defaults: the job workers at QUARRY_THREAD_NICE (10), the model on cores - 1 threads;
 *   - embedding, old defaults: QUARRY_THREAD_NICE=0 and a model thread per core (before the job
 *     workers were niced; 0 also leaves the shard threads and the store writer at the normal
 *     priority, which this lexical search of an inline dataset does not use).
 * Embedding SciFact takes many minutes, so it is still running when each timed window ends (the
 * bench checks `chunks_pending_embedding` after it and says so when it was not).
 *
 *   npm run build && npx tsx bench/search-while-embedding.ts [--rounds 2] [--seconds 10] [--json FILE]
 */
import os from 'node:os';
import { jsonArg, writeJsonFigures } from './lib/json-figures.js';
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { machine, startBenchStack } from './lib/spawn-stack.js';
import { ensureWrk, wrkMicros, wrkRuns, type WrkRun } from './lib/wrk.js';
import { numberArg } from './lib/args.js';

const rounds = numberArg('--rounds', 2);
const seconds = numberArg('--seconds', 10);
const jsonFile = jsonArg();

/** A configuration under test: its label and the stack's environment. */
interface Setup {
  /** Its name in `--json`. */
  readonly key: string;
  readonly label: string;
  readonly env: Record<string, string>;
  readonly embeds: boolean;
}

const SETUPS: readonly Setup[] = [
  { key: 'idle', label: 'idle (embedding off)', env: { QUARRY_EMBED_JOBS: 'false' }, embeds: false },
  { key: 'embedding-defaults', label: 'embedding, defaults (jobs at nice 10, cores - 1 model threads)', env: { QUARRY_EMBED_JOBS: 'true' }, embeds: true },
  {
    key: 'embedding-old-defaults',
    label: 'embedding, old defaults (nice 0, a model thread per core)',
    env: { QUARRY_EMBED_JOBS: 'true', QUARRY_THREAD_NICE: '0', QUARRY_EMBED_THREADS: String(os.availableParallelism()) },
    embeds: true,
  },
];

/** Pending embeddings of the dataset, from the API. */
async function pendingEmbeddings(baseUrl: string, datasetId: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${baseUrl}/api/dataset/usage/${datasetId}`, { headers });
  const usage = (await res.json()) as { chunks_pending_embedding: number };
  return usage.chunks_pending_embedding;
}

/** One timed window of `setup` on a fresh stack; for an embedding setup, whether embedding ran all through it. */
async function runOnce(setup: Setup, data: ReturnType<typeof loadSciFact>, queries: string[]): Promise<{ run: WrkRun; embeddingThroughout: boolean }> {
  const stack = await startBenchStack(setup.env);
  try {
    const { headers, datasetId } = await ingestSciFact(stack.baseUrl, stack.adminKey, data.docs);
    // The first batches are being embedded by the time the window opens (the job starts at the first write).
    const [run] = wrkRuns(stack.baseUrl, headers, queries, [1], seconds);
    const pendingAfter = setup.embeds ? await pendingEmbeddings(stack.baseUrl, datasetId, headers) : 0;
    return { run: run!, embeddingThroughout: !setup.embeds || pendingAfter > 0 };
  } finally {
    await stack.stop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  if (!ensureWrk()) throw new Error('wrk is not installed and could not be (apt-get install wrk)');
  const loadAtStart = os.loadavg();
  const data = loadSciFact();
  const queries = [...loadQrels('test').keys()].map((id) => data.queries.get(id)!);
  const runs = new Map<string, { p50: number[]; p99: number[]; rps: number[]; cut: number }>(SETUPS.map((s) => [s.label, { p50: [], p99: [], rps: [], cut: 0 }]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < SETUPS.length; k++) {
      const setup = SETUPS[(r + k) % SETUPS.length]!;
      const { run, embeddingThroughout } = await runOnce(setup, data, queries);
      const acc = runs.get(setup.label)!;
      acc.p50.push(wrkMicros(run.p50));
      acc.p99.push(wrkMicros(run.p99));
      acc.rps.push(Number(run.rps));
      if (!embeddingThroughout) acc.cut++;
      process.stderr.write(`round ${r + 1}, ${setup.label}: p50 ${run.p50}, p99 ${run.p99}, ${run.rps} req/s${Number(run.non2xx) > 0 ? `, NON-2XX ${run.non2xx}` : ''}\n`);
    }
  }
  console.log(`machine: ${machine()}`);
  const description = `SciFact BEIR, ${data.docs.length} docs ingested over HTTP, then ${queries.length} test queries looped by wrk (1 connection, ${seconds} s, bm25, page_size 10); ${rounds} rounds, medians`;
  console.log(`data: ${description}`);
  const idle = median(runs.get(SETUPS[0]!.label)!.p50);
  for (const s of SETUPS) {
    const acc = runs.get(s.label)!;
    const p50 = median(acc.p50);
    const note = acc.cut > 0 ? ` (embedding ended inside ${acc.cut} window(s))` : '';
    console.log(`${s.label}: p50 ${p50.toFixed(0)} µs (${(p50 / idle).toFixed(2)}x idle), p99 ${median(acc.p99).toFixed(0)} µs, ${median(acc.rps).toFixed(0)} req/s${note}`);
  }
  writeJsonFigures(jsonFile, 'search-while-embedding', {
    data: description,
    rounds,
    seconds,
    loadAtStart,
    setups: SETUPS.map((s) => {
      const acc = runs.get(s.label)!;
      return { setup: s.key, label: s.label, p50Us: median(acc.p50), p99Us: median(acc.p99), rps: median(acc.rps), windowsEmbeddingEnded: acc.cut, each: acc };
    }),
  });
}

await main();
