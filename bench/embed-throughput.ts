/**
 * USE-Lite throughput benchmark (not a test): embeds the first 500 SciFact documents
 * (title + " " + text) and 100 test queries one at a time, and prints docs/s, query latency,
 * the event loop's worst stall while the worker threads run, threads and machine. With `--full`
 * it also embeds the whole corpus (5,183 docs, ~10 min on 2 threads) and prints nDCG@10 and
 * R@100 of USE-Lite alone (exact cosine search) on the test split.
 *
 *   npx tsx bench/embed-throughput.ts                  # threads = available cores
 *   npx tsx bench/embed-throughput.ts --threads 1 --docs 200 --queries 50
 *   npx tsx bench/embed-throughput.ts --full
 */
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createEmbedder, type Embedder } from '../core/embed/embedder.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK } from './lib/metrics.js';
import { loadQrels, loadSciFact, type SciFactDoc } from './lib/scifact.js';

const { values: args } = parseArgs({
  options: {
    threads: { type: 'string', default: String(os.availableParallelism()) },
    docs: { type: 'string', default: '500' },
    queries: { type: 'string', default: '100' },
    full: { type: 'boolean', default: false },
  },
});

const threads = Number(args.threads);
const docText = (d: SciFactDoc): string => `${d.title} ${d.text}`;

/** CPU milliseconds of the whole process, worker threads included. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Embeds docs in calls of `perCall` (as the ingestion jobs will). Besides wall-clock docs/s it
 * returns docs per CPU-second, which other load on a shared machine distorts much less.
 */
async function embedDocs(
  embedder: Embedder,
  texts: string[],
  perCall: number,
): Promise<{ vectors: Float32Array[]; docsPerSec: number; docsPerCpuSec: number; ms: number }> {
  const t0 = performance.now();
  const c0 = cpuMs();
  const vectors: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += perCall) {
    vectors.push(...(await embedder.embed(texts.slice(i, i + perCall), 'doc')));
    if (texts.length > 1000 && (i / perCall) % 10 === 0) process.stderr.write(`\r  embedded ${vectors.length}/${texts.length}`);
  }
  if (texts.length > 1000) process.stderr.write('\n');
  const ms = performance.now() - t0;
  return { vectors, docsPerSec: (texts.length / ms) * 1000, docsPerCpuSec: (texts.length / (cpuMs() - c0)) * 1000, ms };
}

/** Exact top-k by dot product (the vectors are unit length, so it is cosine). */
function topK(query: Float32Array, docs: Float32Array[], ids: string[], k: number): string[] {
  const scored = docs.map((d, i) => {
    let s = 0;
    for (let j = 0; j < d.length; j++) s += d[j]! * query[j]!;
    return { id: ids[i]!, s };
  });
  scored.sort((a, b) => b.s - a.s);
  return scored.slice(0, k).map((x) => x.id);
}

async function main(): Promise<void> {
  const data = loadSciFact();
  const qrels = loadQrels('test');
  const queryIds = [...qrels.keys()];
  const nDocs = Math.min(Number(args.docs), data.docs.length);
  const nQueries = Math.min(Number(args.queries), queryIds.length);

  const embedder = createEmbedder({ baseUrl: '', model: 'use-lite', dimension: 512, threads });
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  console.log(`machine: ${cpu}, ${os.availableParallelism()} cores, node ${process.version}, ${os.platform()} ${os.arch()}`);
  console.log(`model: ${embedder.model} (${embedder.dimension} dims), threads: ${threads}`);
  // Other processes on the machine slow the wall-clock figures: say how busy it was.
  const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`load average at start: ${load()}`);

  // Start every thread and load its model before timing (one small task per thread at least).
  let t0 = performance.now();
  await embedder.embed(Array.from({ length: threads * 2 }, (_, i) => `warm up ${i}`), 'doc');
  console.log(`warm-up (threads start, model load): ${(performance.now() - t0).toFixed(0)} ms`);

  // The model runs in worker threads: the main loop should stay idle (low utilisation). Its
  // delay also counts time the OS did not schedule it, which a busy machine makes large.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const elu0 = performance.eventLoopUtilization();
  const docs = data.docs.slice(0, nDocs);
  const words = docs.reduce((s, d) => s + docText(d).split(/\s+/).length, 0);
  const first = await embedDocs(embedder, docs.map(docText), 64);
  loopDelay.disable();
  const elu = performance.eventLoopUtilization(elu0).utilization;
  console.log(
    `docs: ${nDocs} (mean ${(words / nDocs).toFixed(0)} words) in ${(first.ms / 1000).toFixed(1)} s = ${first.docsPerSec.toFixed(1)} docs/s ` +
      `(${(first.docsPerSec / threads).toFixed(1)} per thread), ${first.docsPerCpuSec.toFixed(2)} docs per CPU-second; ` +
      `main event loop: ${(elu * 100).toFixed(1)}% busy, delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`,
  );

  const latencies: number[] = [];
  const qc0 = cpuMs();
  for (const q of queryIds.slice(0, nQueries)) {
    t0 = performance.now();
    await embedder.embed([data.queries.get(q) ?? ''], 'query');
    latencies.push(performance.now() - t0);
  }
  const queryCpuMs = (cpuMs() - qc0) / nQueries;
  latencies.sort((a, b) => a - b);
  console.log(
    `queries: ${nQueries} one at a time: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, ` +
      `max ${latencies[latencies.length - 1]!.toFixed(1)} ms; ${queryCpuMs.toFixed(1)} CPU-ms per query`,
  );
  console.log(`load average after: ${load()}`);

  if (args.full) {
    console.log(`full corpus: ${data.docs.length} docs, ${qrels.size} test queries`);
    const all = await embedDocs(embedder, data.docs.map(docText), 64);
    console.log(`  embedded in ${(all.ms / 1000).toFixed(0)} s = ${all.docsPerSec.toFixed(1)} docs/s, ${all.docsPerCpuSec.toFixed(2)} docs per CPU-second`);
    const ids = data.docs.map((d) => d.id);
    const queryVectors = await embedder.embed(queryIds.map((q) => data.queries.get(q) ?? ''), 'query');
    const ranked = new Map<string, string[]>();
    queryIds.forEach((q, i) => ranked.set(q, topK(queryVectors[i]!, all.vectors, ids, 100)));
    const ndcg10 = meanOverQrels(qrels, (q, j) => ndcgAtK(ranked.get(q) ?? [], j, 10));
    const recall100 = meanOverQrels(qrels, (q, j) => recallAtK(ranked.get(q) ?? [], j, 100));
    console.log(`  USE-Lite alone (mean of sentence vectors, exact cosine): nDCG@10 ${ndcg10.toFixed(4)}, R@100 ${recall100.toFixed(4)}`);
  }
  await embedder.close();
}

await main();
