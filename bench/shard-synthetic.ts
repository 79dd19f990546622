/**
 * The whole shard (BM25 index + filterable fields) at scale on the synthetic Zipf corpus (not a
 * test): indexing rate through `Shard.apply`, memory per chunk after GC, and query latency without
 * and with a one-tag `match_any` filter, the filtered cost split into filter evaluation and search.
 *
 *   npx tsx --expose-gc bench/shard-synthetic.ts                  # 1,000,000 chunks
 *   npx tsx --expose-gc bench/shard-synthetic.ts --docs 100000 --queries 1000 --k 10 --reps 3
 *   npx tsx --expose-gc bench/shard-synthetic.ts --typo           # with the typo vocabulary on from the start
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Filter } from '../core/domain/filter.js';
import type { ShardDoc } from '../workers/shard/protocol.js';
import { Shard } from '../workers/shard/shard.js';
import { textDoc } from '../workers/shard/text-doc.js';
import { printMemoryReport } from './lib/index-memory.js';
import { writeJsonFigures } from './lib/json-figures.js';
import { quantile } from './lib/metrics.js';
import { DEFAULT_SYNTHETIC_OPTIONS, syntheticCorpus, syntheticQueries } from './lib/synthetic.js';

const gc = (globalThis as { gc?: () => void }).gc;

/** Heap + array buffers after two full collections. */
function memory(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/** Sorted latencies in microseconds of `reps` passes of `run` over `n` queries. */
function time(n: number, reps: number, run: (i: number) => void): number[] {
  const lat: number[] = [];
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < n; i++) {
      const a = performance.now();
      run(i);
      lat.push((performance.now() - a) * 1000);
    }
  }
  return lat.sort((x, y) => x - y);
}

const fmt = (lat: number[]): string => {
  const mean = lat.reduce((s, x) => s + x, 0) / Math.max(1, lat.length);
  return `p50 ${(quantile(lat, 0.5) / 1000).toFixed(3)} ms, p99 ${(quantile(lat, 0.99) / 1000).toFixed(3)} ms, mean ${(mean / 1000).toFixed(3)} ms`;
};

function main(): void {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.docs) },
      queries: { type: 'string', default: '1000' },
      k: { type: 'string', default: '10' },
      reps: { type: 'string', default: '3' },
      seed: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.seed) },
      typo: { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  const docs = Number(values.docs);
  const nQueries = Number(values.queries);
  const k = Number(values.k);
  const reps = Number(values.reps);
  const seed = Number(values.seed);
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, docs, seed };
  const cpus = os.cpus();
  console.log(`command: npx tsx --expose-gc bench/shard-synthetic.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()} ${os.arch()}`);
  console.log(
    `data: synthetic (bench/lib/synthetic.ts) ${docs} chunks, ${o.wordsPerDoc / 2}-${(3 * o.wordsPerDoc) / 2} words each (mean ${o.wordsPerDoc}), ` +
      `Zipf s=${o.zipfS} over ${o.vocabulary} pseudo-words, 1-3 of ${o.tags} tags per chunk (tagSet), seed ${seed}; ` +
      `${nQueries} queries of 2-3 Zipf words, top-${k}; filtered query i keeps tag-(i % ${o.tags}) (match_any, ~${((2 / o.tags) * 100).toFixed(0)}% of chunks)`,
  );
  console.log(`load average at start: ${load()}`);
  if (gc === undefined) console.log('note: run with --expose-gc for memory figures after GC');

  const before = memory();
  const shard = new Shard({ k1: 0.9, b: 0.4 });
  if (values.typo) shard.enableTypo();
  // ShardDocs are built outside the timed region: the rate is apply()'s alone (as a shard thread sees it).
  const BATCH = 1_000;
  let batch: ShardDoc[] = [];
  let applyMs = 0;
  let applyCpuUs = 0;
  let done = 0;
  let seq = 0;
  const wall0 = performance.now();
  const flush = (): void => {
    if (batch.length === 0) return;
    const c = process.cpuUsage();
    const t = performance.now();
    shard.apply(batch, [], ++seq);
    applyMs += performance.now() - t;
    const cpu = process.cpuUsage(c);
    applyCpuUs += cpu.user + cpu.system;
    done += batch.length;
    batch = [];
    if (done % 200_000 === 0) console.log(`  ${done} chunks, ${((done / applyMs) * 1000).toFixed(0)} chunks/s so far (load ${load()})`);
  };
  for (const d of syntheticCorpus(o)) {
    batch.push(textDoc(d.id, d.text, d.tags));
    if (batch.length === BATCH) flush();
  }
  flush();
  const wallMs = performance.now() - wall0;
  const bytes = memory() - before;
  console.log(
    `indexing    ${((docs / applyMs) * 1000).toFixed(0)} chunks/s wall, ${((docs / applyCpuUs) * 1e6).toFixed(0)} chunks/s per CPU-second ` +
      `(${(applyMs / 1000).toFixed(1)} s in apply, batches of ${BATCH}; ${(wallMs / 1000).toFixed(1)} s with generation)`,
  );
  console.log(`memory      ${(bytes / docs).toFixed(0)} bytes/chunk, ${(bytes / 2 ** 20).toFixed(0)} MiB total (heap + array buffers after GC; BM25 index + field store + chunk ids)`);
  console.log(`vocabulary  ${shard.index.termCount} terms with live postings`);
  // The shard's other structures beside the BM25 index's own report: the filter field store, and the typo data when on.
  const typoParts = (): Record<string, number> => {
    const fields = { 'filter field store': shard.fields.memoryBytes() };
    if (!shard.vocabulary) return fields;
    const ids = shard.chunkWords.memoryParts();
    return { ...fields, 'typo vocabulary': shard.vocabulary.memoryBytes(), 'typo word ids per chunk': ids.data + ids.slack + ids.tables };
  };
  printMemoryReport({ ...shard.index.memoryReport(), ...typoParts() }, docs, bytes);

  const texts = syntheticQueries(nQueries, seed, o);
  const filters: Filter[] = Array.from({ length: o.tags }, (_, t) => ({ must: [{ field: { field: 'tag_set', match_any: [{ text: `tag-${t}` }] } }] }));
  // As the coordinator runs a one-shard query: analyze + statistics, then the shard search.
  const plain = (i: number): void => {
    const st = shard.termStats(texts[i]!);
    shard.search(texts[i]!, st, k, null, null, false);
  };
  const filtered = (i: number): void => {
    const st = shard.termStats(texts[i]!);
    shard.search(texts[i]!, st, k, filters[i % filters.length]!, null, false);
  };
  // The filtered path's two parts, timed apart: filter -> bitset, then the restricted BM25 top-k.
  const allowOnly = (i: number): void => {
    shard.allow(filters[i % filters.length]!);
  };
  const allows = filters.map((f) => shard.allow(f));
  const searchOnly = (i: number): void => {
    const st = shard.termStats(texts[i]!);
    shard.index.search(st.terms, k, st, allows[i % allows.length]);
  };
  // First pass: JIT warm-up and the lazily computed per-term block bounds (reported apart).
  const c0 = performance.now();
  for (let i = 0; i < nQueries; i++) plain(i);
  const coldMs = performance.now() - c0;
  for (let i = 0; i < nQueries; i++) filtered(i);
  console.log(`first pass  ${((coldMs * 1000) / nQueries).toFixed(0)} us/query mean, no filter (JIT warm-up and first-use per-term bounds)`);
  console.log(`load average before timed queries: ${load()}`);
  const c1 = process.cpuUsage();
  const p = time(nQueries, reps, plain);
  const f = time(nQueries, reps, filtered);
  const a = time(nQueries, reps, allowOnly);
  const s = time(nQueries, reps, searchOnly);
  const cpu = process.cpuUsage(c1);
  console.log(`no filter   ${fmt(p)} (termStats + search, ${reps} x ${nQueries} queries)`);
  console.log(`tag filter  ${fmt(f)} (same, plus the one-tag match_any filter)`);
  console.log(`  of which filter -> bitset   ${fmt(a)} (Shard.allow alone)`);
  console.log(`  of which restricted search  ${fmt(s)} (termStats + Bm25Index.search with a precomputed bitset)`);
  console.log(`cpu time of the timed queries: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s; load average at end: ${load()}`);
  // --json: for bench/issue11-goals.ts (the memory report taken now includes the block bounds the queries built).
  const stat = (lat: number[]) => ({ p50Us: quantile(lat, 0.5), p99Us: quantile(lat, 0.99) });
  const reportAfterQueries = { ...shard.index.memoryReport(), ...typoParts() };

  // After the timed queries: what the service's shard holds once its writes stop, when its idle
  // compaction (QUARRY_COMPACT_IDLE_MS) gives back its growth room: the layout a snapshot load builds.
  const compactCpu0 = process.cpuUsage();
  const compactT0 = performance.now();
  shard.index.compactStorage();
  const compactMs = performance.now() - compactT0;
  const compactCpu = process.cpuUsage(compactCpu0);
  const restingBytes = memory() - before;
  console.log(`after Bm25Index.compactStorage (a snapshot's, and a snapshot load's layout; ${compactMs.toFixed(0)} ms, ${((compactCpu.user + compactCpu.system) / 1000).toFixed(0)} ms CPU):`);
  printMemoryReport({ ...shard.index.memoryReport(), ...typoParts() }, docs, restingBytes);
  writeJsonFigures(values.json, 'shard-synthetic', { docs, typo: values.typo, chunksPerS: (docs / applyMs) * 1000, measuredBytes: bytes, restingBytes, reportAfterQueries, noFilter: stat(p), tagFilter: stat(f) });
}

main();
