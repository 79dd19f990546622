/**
 * Ingest over the public API (issue 11, item 1): N synthetic chunks (`lib/synthetic.ts`, fixed
 * seed) sent as `POST /api/chunk` batches by C concurrent clients (node:http keep-alive), on a
 * fresh default stack (the core in the HTTP process) with background embedding off and a dataset
 * with SEMANTIC_ENABLED false. Prints the rate of every segment of the run (is ingest flat as the
 * dataset grows?), the whole run's rate, the CPU each process spent per chunk, and the resident
 * memory of every process at the start, its peak and its end, and again at rest, `--settle` seconds
 * after the last request (the shards give back their growth room 10 s after their writes stop,
 * QUARRY_COMPACT_IDLE_MS, and their threads' garbage goes at a later collection: the end of the
 * run alone once read 1,612 MiB where a run of the same build read 733). At the end it checks
 * that the dataset holds N chunks and that a bm25 search for a word of the last batch finds it.
 *
 * Goal (issue 11): >= 10,000 chunks/s, flat to 1M.
 *
 *   npm run build && npx tsx bench/http-ingest.ts [--docs 1000000] [--clients 2] [--batch 120]
 *       [--segment 100000] [--seed 42] [--settle 20] [--json FILE]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { jsonArg, writeJsonFigures } from './lib/json-figures.js';
import { RssSampler, statusBytes, threadCpuSeconds } from './lib/rss-sampler.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';
import { syntheticCorpus, type SyntheticDoc } from './lib/synthetic.js';
import { benchTenant } from './lib/tenant.js';

const numArg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  const v = i > 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
};
const DOCS = numArg('--docs', 1_000_000);
const CLIENTS = numArg('--clients', 2);
const BATCH = numArg('--batch', 120);
const SEGMENT = numArg('--segment', Math.max(BATCH, Math.floor(DOCS / 10)));
const SEED = numArg('--seed', 42);
/** Seconds after the last request at which the processes' RSS is read again, at rest (0: not). */
const SETTLE_S = numArg('--settle', 20);
const STAGES = process.argv.includes('--stages');
const JSON_FILE = jsonArg();
const GOAL_PER_S = 10_000;
const MiB = 1024 * 1024;

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });

/** POSTs `body` and resolves with the status and text of the answer. */
function send(url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; timing: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, timing: String(res.headers['server-timing'] ?? '') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', ...(STAGES ? { QUARRY_SERVER_TIMING: 'true' } : {}) });
  try {
    const tenant = await benchTenant(stack, 'ingest');
    const owner = { authorization: tenant.ownerKey, 'tr-dataset': tenant.datasetId };
    const put = await fetch(`${stack.baseUrl}/api/dataset`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: tenant.ownerKey, 'tr-organization': tenant.orgId },
      body: JSON.stringify({ dataset_id: tenant.datasetId, server_configuration: { SEMANTIC_ENABLED: false } }),
    });
    if (!put.ok) throw new Error(`PUT /api/dataset: ${put.status} ${await put.text()}`);
    const sampler = new RssSampler(new Map([['redis', stack.pids.redis], ['http+core', stack.pids.facade], ['jobs', stack.pids.jobs]]));
    const threadsBefore = threadCpuSeconds(stack.pids.facade);
    const corpus = syntheticCorpus({ docs: DOCS, seed: SEED });
    const url = new URL('/api/chunk', stack.baseUrl);
    let sent = 0;
    let done = 0;
    let last: SyntheticDoc | undefined;
    // --stages: each request's Server-Timing stages (ms), by stage.
    const stages = new Map<string, number[]>();
    const started = performance.now();
    let segmentStart = started;
    let segmentDone = 0;
    // --json: each segment's end (chunks done) and rate.
    const segments: { done: number; chunksPerS: number }[] = [];
    const loadAtStart = os.loadavg();
    console.log(`${machine()}; load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}\n${DOCS.toLocaleString('en')} synthetic chunks (seed ${SEED}, ~60 words, 1-3 tags), batches of ${BATCH}, ${CLIENTS} clients`);
    const client = async (): Promise<void> => {
      for (;;) {
        const batch: SyntheticDoc[] = [];
        while (batch.length < BATCH && sent < DOCS) {
          const next = corpus.next();
          if (next.done) break;
          batch.push(next.value);
          sent++;
        }
        if (batch.length === 0) return;
        last = batch.at(-1);
        const body = JSON.stringify(batch.map((d) => ({ chunk_html: d.text, tag_set: d.tags, tracking_id: d.id })));
        const res = await send(url, owner, body);
        if (res.status !== 200) throw new Error(`POST /api/chunk: ${res.status} ${res.text.slice(0, 300)}`);
        done += batch.length;
        for (const part of res.timing.split(', ')) {
          const m = /^([\w-]+);dur=([\d.]+)$/.exec(part);
          if (m) (stages.get(m[1]!) ?? stages.set(m[1]!, []).get(m[1]!)!).push(Number(m[2]));
        }
        if (done - segmentDone >= SEGMENT || done === DOCS) {
          const now = performance.now();
          const rate = ((done - segmentDone) * 1000) / (now - segmentStart);
          segments.push({ done, chunksPerS: rate });
          console.log(`  ${done.toLocaleString('en').padStart(9)} chunks: ${rate.toFixed(0).padStart(6)} chunks/s over the last ${(done - segmentDone).toLocaleString('en')}; http+core RSS ${mib(sampler.current('http+core'))}`);
          segmentStart = now;
          segmentDone = done;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, () => client()));
    const seconds = (performance.now() - started) / 1000;
    const figures = sampler.phase();
    const threadsAfter = threadCpuSeconds(stack.pids.facade);
    // Anonymous memory (heaps, index arrays, malloc arenas) apart from file pages mapped in (code, libraries).
    const status = fs.readFileSync(`/proc/${stack.pids.facade}/status`, 'utf8');

    // Every chunk is stored and the last batch is searchable.
    const usage = (await (await fetch(`${stack.baseUrl}/api/dataset/usage/${tenant.datasetId}`, { headers: owner })).json()) as { chunk_count: number };
    const word = last!.text.split(' ').sort((a, b) => b.length - a.length)[0]!;
    const hits = (await post(stack.baseUrl, '/api/chunk/search', { query: word, search_type: 'bm25', page_size: 100 }, owner)) as { chunks: { chunk: { tracking_id: string } }[] };
    const found = hits.chunks.some((h) => h.chunk.tracking_id === last!.id);

    let rest: Record<string, number> | undefined;
    if (SETTLE_S > 0) {
      await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
      rest = Object.fromEntries(sampler.phase().map((f) => [f.label, f.end]));
    }
    sampler.stop();

    const rate = DOCS / seconds;
    console.log(`\nload average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`whole run: ${seconds.toFixed(1)} s, ${rate.toFixed(0)} chunks/s (goal >= ${GOAL_PER_S.toLocaleString('en')}, flat to 1M): ${rate >= GOAL_PER_S ? 'met' : 'not met'}`);
    console.log(`dataset chunk_count ${usage.chunk_count} (want ${DOCS}); a bm25 search for "${word}" finds the last chunk: ${found}`);
    console.log('\nprocess                      CPU s   CPU us/chunk   RSS start    peak      end    growth');
    for (const f of figures) {
      console.log(`${f.label.padEnd(26)} ${f.cpuS.toFixed(1).padStart(7)} ${((f.cpuS * 1e6) / DOCS).toFixed(0).padStart(13)} ${mib(f.start).padStart(10)} ${mib(f.peak).padStart(8)} ${mib(f.end).padStart(8)} ${mib(f.end - f.start).padStart(9)}`);
    }
    console.log(`http+core at the end: ${mib(statusBytes(status, 'RssAnon'))} anonymous, ${mib(statusBytes(status, 'RssFile'))} file pages`);
    if (rest !== undefined) {
      const at = (f: { label: string; start: number }): string => `${f.label} ${mib(rest[f.label] ?? 0)} (growth ${mib((rest[f.label] ?? 0) - f.start)})`;
      console.log(`RSS at rest, ${SETTLE_S} s after the last request: ${figures.map(at).join(', ')}`);
    }
    const total = figures.reduce((s, f) => s + f.cpuS, 0);
    console.log(`all processes: ${((total * 1e6) / DOCS).toFixed(0)} us of CPU per chunk`);
    if (STAGES) {
      console.log('\nstages of a request (Server-Timing, ms: p50 / p90 / mean):');
      for (const [name, ms] of stages) {
        const sorted = [...ms].sort((a, b) => a - b);
        const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
        console.log(`  ${name.padEnd(12)} ${at(0.5).toFixed(2)} / ${at(0.9).toFixed(2)} / ${(ms.reduce((a, b) => a + b, 0) / ms.length).toFixed(2)}`);
      }
    }
    // Where the HTTP process's CPU went, by thread (the main loop, the store writer, the shard
    // threads, V8's and libuv's helpers): threads that used at least 1% of it.
    const used = [...threadsAfter].map(([tid, t]) => ({ tid, name: t.name, cpuS: t.cpuS - (threadsBefore.get(tid)?.cpuS ?? 0) }));
    const all = used.reduce((s, t) => s + t.cpuS, 0);
    console.log('\nhttp+core by thread (id, name: CPU us per chunk):');
    for (const t of used.sort((a, b) => b.cpuS - a.cpuS).filter((t) => t.cpuS >= all / 100)) console.log(`  ${t.tid} ${t.name}: ${((t.cpuS * 1e6) / DOCS).toFixed(0)}`);
    writeJsonFigures(JSON_FILE, 'http-ingest', {
      data: `${DOCS} synthetic chunks (bench/lib/synthetic.ts, seed ${SEED}), batches of ${BATCH}, ${CLIENTS} clients`,
      docs: DOCS,
      seed: SEED,
      clients: CLIENTS,
      batch: BATCH,
      loadAtStart,
      seconds,
      chunksPerS: rate,
      segments,
      processes: figures,
      facadeAnonBytes: statusBytes(status, 'RssAnon'),
      facadeFileBytes: statusBytes(status, 'RssFile'),
      settleS: SETTLE_S,
      restEnd: rest,
      chunkCount: usage.chunk_count,
      lastChunkFound: found,
    });
    if (usage.chunk_count !== DOCS || !found) process.exitCode = 1;
  } finally {
    agent.destroy();
    await stack.stop();
  }
}

await main();
