/**
 * SciFact BM25 benchmark (not a test): builds one in-process index over title + " " + text, runs
 * the judged queries and prints nDCG@10, recall@100, build time, memory and query latency.
 *
 *   npx tsx --expose-gc bench/scifact-bm25.ts                     # defaults, test split
 *   npx tsx bench/scifact-bm25.ts --k1 1.2 --b 0.75 --stop off --stem on --split train
 *   npx tsx bench/scifact-bm25.ts --sweep [--split train]         # the table of settings tried
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Bm25Index, DEFAULT_BM25_OPTIONS } from '../workers/shard/bm25/bm25-index.js';
import { DEFAULT_ANALYZER_OPTIONS } from '../workers/shard/bm25/analyzer.js';
import type { MemoryParts } from '../workers/shard/bm25/memory-report.js';
import { printMemoryReport } from './lib/index-memory.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK, type Qrels } from './lib/metrics.js';
import { loadQrels, loadSciFact, scifactDir, type SciFact } from './lib/scifact.js';

interface Setting {
  k1: number;
  b: number;
  stop: boolean;
  stem: boolean;
}

interface Result {
  ndcg10: number;
  recall100: number;
  buildMs: number;
  heapMiB: number;
  p50Us: number;
  p99Us: number;
  vocab: number;
  /** The index's memory report and the measured heap growth. */
  memory: { parts: MemoryParts; measured: number };
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  // Twice: the first collection leaves freed array buffers to a concurrent sweep.
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

function run(data: SciFact, qrels: Qrels, s: Setting, timing: boolean): Result {
  const before = heapUsed();
  const t0 = performance.now();
  const index = new Bm25Index({ k1: s.k1, b: s.b, analyzer: { removeStopWords: s.stop, stem: s.stem } });
  for (const d of data.docs) index.upsert(d.id, `${d.title} ${d.text}`);
  const buildMs = performance.now() - t0;
  const measured = heapUsed() - before;
  const heapMiB = measured / 2 ** 20;

  // One query as the coordinator will run it: analyze, gather stats, search (one shard here).
  const searchOne = (text: string, k: number): string[] => {
    const terms = index.analyzer.analyze(text);
    const st = index.stats();
    return index.search(terms, k, { ...st, docFreqs: index.termDocFreqs(terms) }).chunkIds;
  };
  const ranked = new Map<string, string[]>();
  for (const q of qrels.keys()) ranked.set(q, searchOne(data.queries.get(q) ?? '', 100));
  const ndcg10 = meanOverQrels(qrels, (q, j) => ndcgAtK(ranked.get(q) ?? [], j, 10));
  const recall100 = meanOverQrels(qrels, (q, j) => recallAtK(ranked.get(q) ?? [], j, 100));

  let p50Us = NaN;
  let p99Us = NaN;
  if (timing) {
    const texts = [...qrels.keys()].map((q) => data.queries.get(q) ?? '');
    for (const t of texts) searchOne(t, 10); // warm-up: JIT and stem cache
    const lat: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      for (const t of texts) {
        const a = performance.now();
        searchOne(t, 10);
        lat.push((performance.now() - a) * 1000);
      }
    }
    lat.sort((x, y) => x - y);
    p50Us = quantile(lat, 0.5);
    p99Us = quantile(lat, 0.99);
  }
  const vocab = index.termCount;
  return { ndcg10, recall100, buildMs, heapMiB, p50Us, p99Us, vocab, memory: { parts: index.memoryReport(), measured } };
}

const fmt = (r: Result, s: Setting): string =>
  `| ${s.k1} | ${s.b} | ${s.stop ? 'on' : 'off'} | ${s.stem ? 'porter' : 'none'} | ${r.ndcg10.toFixed(4)} | ${r.recall100.toFixed(4)} |`;

function main(): void {
  const { values } = parseArgs({
    options: {
      k1: { type: 'string', default: String(DEFAULT_BM25_OPTIONS.k1) },
      b: { type: 'string', default: String(DEFAULT_BM25_OPTIONS.b) },
      stop: { type: 'string', default: DEFAULT_ANALYZER_OPTIONS.removeStopWords ? 'on' : 'off' },
      stem: { type: 'string', default: DEFAULT_ANALYZER_OPTIONS.stem ? 'on' : 'off' },
      split: { type: 'string', default: 'test' },
      sweep: { type: 'boolean', default: false },
    },
  });
  const split = values.split as 'test' | 'train';
  const data = loadSciFact();
  const qrels = loadQrels(split);
  const cpus = os.cpus();
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, node ${process.version}, ${os.platform()} ${os.arch()}`);
  const pairs = [...qrels.values()].reduce((n, j) => n + j.size, 0);
  console.log(
    `data: BEIR SciFact from ${scifactDir}: ${data.docs.length} docs (title + " " + text), corpus sha256 ${data.corpusSha256.slice(0, 12)}..., ` +
      `${split} split: ${qrels.size} queries, ${pairs} judged pairs`,
  );

  if (values.sweep) {
    const settings: Setting[] = [];
    for (const stop of [true, false]) for (const stem of [true, false]) settings.push({ k1: 0.9, b: 0.4, stop, stem });
    for (const [k1, b] of [[1.2, 0.75], [0.9, 0.6], [1.2, 0.4], [0.6, 0.4], [0.9, 0.3], [1.5, 0.5]] as const) {
      settings.push({ k1, b, stop: true, stem: true });
    }
    console.log(`\n| k1 | b | stop words | stemming | nDCG@10 (${split}) | R@100 (${split}) |\n|---|---|---|---|---|---|`);
    for (const s of settings) console.log(fmt(run(data, qrels, s, false), s));
    return;
  }

  const s: Setting = { k1: Number(values.k1), b: Number(values.b), stop: values.stop === 'on', stem: values.stem === 'on' };
  const r = run(data, qrels, s, true);
  console.log(`\nsettings: k1 ${s.k1}, b ${s.b}, stop words ${s.stop ? 'removed' : 'kept'}, stemming ${s.stem ? 'porter' : 'none'}`);
  console.log(`nDCG@10     ${r.ndcg10.toFixed(4)}`);
  console.log(`recall@100  ${r.recall100.toFixed(4)}`);
  console.log(`index build ${r.buildMs.toFixed(0)} ms (${((data.docs.length / r.buildMs) * 1000).toFixed(0)} docs/s), vocabulary ${r.vocab} terms with live postings`);
  console.log(`memory      ${r.heapMiB.toFixed(1)} MiB (heap + array buffers after build${gc ? ', after gc' : '; run with --expose-gc for a cleaner figure'})`);
  printMemoryReport(r.memory.parts, data.docs.length, r.memory.measured);
  console.log(`latency     p50 ${r.p50Us.toFixed(1)} us, p99 ${r.p99Us.toFixed(1)} us per query (analyze + df + top-10 search, 5 x ${qrels.size} queries)`);
}

main();
