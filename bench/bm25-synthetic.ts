/**
 * BM25 at scale on the synthetic Zipf corpus (not a test): indexing rate, memory per chunk and
 * query latency through `Bm25Index` directly (one shard, no filter, no threads).
 *
 *   npx tsx --expose-gc bench/bm25-synthetic.ts                 # 1,000,000 chunks
 *   npx tsx --expose-gc bench/bm25-synthetic.ts --docs 100000 --queries 1000 --k 10
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Bm25Index } from '../workers/shard/bm25/bm25-index.js';
import { printMemoryReport } from './lib/index-memory.js';
import { quantile } from './lib/metrics.js';
import { DEFAULT_SYNTHETIC_OPTIONS, syntheticCorpus, syntheticQueries, type SyntheticDoc } from './lib/synthetic.js';

const gc = (globalThis as { gc?: () => void }).gc;

function memory(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.docs) },
      queries: { type: 'string', default: '1000' },
      k: { type: 'string', default: '10' },
      seed: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.seed) },
    },
  });
  const docs = Number(values.docs);
  const nQueries = Number(values.queries);
  const k = Number(values.k);
  const seed = Number(values.seed);
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, docs, seed };
  const cpus = os.cpus();
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, node ${process.version}, ${os.platform()} ${os.arch()}`);
  console.log(
    `data: synthetic (bench/lib/synthetic.ts) ${docs} chunks, ${o.wordsPerDoc / 2}-${(3 * o.wordsPerDoc) / 2} words each (mean ${o.wordsPerDoc}), ` +
      `Zipf s=${o.zipfS} over ${o.vocabulary} pseudo-words, ${o.tags} tags, seed ${seed}; ${nQueries} queries of 2-3 Zipf words, top-${k}, no filter`,
  );
  if (gc === undefined) console.log('note: run with --expose-gc for memory figures after GC');

  const before = memory();
  const index = new Bm25Index();
  // Documents are generated in batches outside the timed region: the rate is the index's alone.
  const BATCH = 2_000;
  const batch: SyntheticDoc[] = [];
  let indexMs = 0;
  let done = 0;
  const wall0 = performance.now();
  const flush = (): void => {
    if (batch.length === 0) return;
    const t = performance.now();
    for (const d of batch) index.upsert(d.id, d.text);
    indexMs += performance.now() - t;
    done += batch.length;
    batch.length = 0;
    if (done % 200_000 === 0) console.log(`  ${done} chunks, ${((done / indexMs) * 1000).toFixed(0)} chunks/s so far`);
  };
  for (const d of syntheticCorpus(o)) {
    batch.push(d);
    if (batch.length === BATCH) flush();
  }
  flush();
  const wallMs = performance.now() - wall0;
  const bytes = memory() - before;
  console.log(`indexing    ${((docs / indexMs) * 1000).toFixed(0)} chunks/s (${(indexMs / 1000).toFixed(1)} s in upsert; ${(wallMs / 1000).toFixed(1)} s with generation)`);
  console.log(`memory      ${(bytes / docs).toFixed(0)} bytes/chunk, ${(bytes / 2 ** 20).toFixed(0)} MiB total (heap + array buffers after GC, chunk id strings included)`);
  console.log(`vocabulary  ${index.termCount} terms with live postings`);
  printMemoryReport(index.memoryReport(), docs, bytes);

  const texts = syntheticQueries(nQueries, seed, o);
  const run = (text: string): number => {
    const terms = index.analyzer.analyze(text);
    const st = index.stats();
    return index.search(terms, k, { ...st, docFreqs: index.termDocFreqs(terms) }).ids.length;
  };
  // First pass: warms the JIT and computes lazily cached per-term block bounds (reported apart).
  const c0 = performance.now();
  for (const t of texts) run(t);
  const coldMs = performance.now() - c0;
  const lat: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    for (const t of texts) {
      const a = performance.now();
      run(t);
      lat.push((performance.now() - a) * 1000);
    }
  }
  lat.sort((x, y) => x - y);
  const mean = lat.reduce((s, x) => s + x, 0) / lat.length;
  console.log(`first pass  ${((coldMs * 1000) / texts.length).toFixed(0)} us/query mean (JIT warm-up and first-use per-term bounds)`);
  console.log(
    `latency     p50 ${(quantile(lat, 0.5) / 1000).toFixed(3)} ms, p99 ${(quantile(lat, 0.99) / 1000).toFixed(3)} ms, mean ${(mean / 1000).toFixed(3)} ms ` +
      `(analyze + df + top-${k} search, 3 x ${texts.length} queries)`,
  );
}

main();
