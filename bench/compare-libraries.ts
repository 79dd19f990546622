/**
 * quarry's shard against MiniSearch, Orama and FlexSearch (a benchmark, not a test): the same
 * documents and queries through each engine in one process, one engine at a time, with a full GC
 * between engines. Reports indexing speed, retained memory, top-10 query latency without and
 * with a tag filter, single-thread QPS and (SciFact) nDCG@10, then quarry's ratios.
 *
 *   npx tsx --expose-gc bench/compare-libraries.ts                              # SciFact
 *   npx tsx --expose-gc bench/compare-libraries.ts --data synthetic --docs 100000
 *   options: --queries N (synthetic, default 100: the libraries are slow)  --reps N (timed passes)  --analyzer shared|native
 *            --engines quarry,minisearch,orama,flexsearch,flexsearch-tag
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import {
  flexSearchEngine,
  miniSearchEngine,
  oramaEngine,
  quarryEngine,
  type BenchDoc,
  type EngineAdapter,
} from './lib/compare-engines.js';
import { sciFactData, syntheticData, TAG_COUNT, type BenchData } from './lib/compare-data.js';
import { meanOverQrels, ndcgAtK, quantile } from './lib/metrics.js';
import { repoRoot } from './lib/scifact.js';

const K = 10;
const gc = (globalThis as { gc?: () => void }).gc;

/** Heap + array buffers after two full collections (V8 may need a second pass for weak structures). */
function retainedBytes(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Figures of one engine on one data set. */
interface EngineResult {
  name: string;
  buildMs: number;
  bytes: number;
  p50: number;
  p99: number;
  p50f: number;
  p99f: number;
  qps: number;
  qpsf: number;
  ndcg: number | null;
  /** Mean share of quarry's top 10 also in this engine's top 10 (unfiltered / filtered). */
  overlap: number | null;
  overlapf: number | null;
  meanHits: number;
  meanHitsf: number;
  /** Filtered results whose document does not carry the requested tag. */
  badTags: number;
}

/**
 * Times `reps` passes over the queries; returns sorted latencies (us), QPS over the whole loop and
 * the results of the first pass (for quality and checks; slow engines get no extra pass for them).
 */
function timeQueries(run: (i: number) => string[], n: number, reps: number): { lat: Float64Array; qps: number; results: string[][] } {
  const lat = new Float64Array(n * reps);
  const results: string[][] = new Array<string[]>(n);
  const start = process.hrtime.bigint();
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < n; i++) {
      const a = process.hrtime.bigint();
      const ids = run(i);
      lat[r * n + i] = Number(process.hrtime.bigint() - a) / 1000;
      if (r === 0) results[i] = ids;
    }
  }
  const totalS = Number(process.hrtime.bigint() - start) / 1e9;
  lat.sort();
  return { lat, qps: (n * reps) / totalS, results };
}

function overlapWith(mine: readonly string[][], ref: readonly string[][] | null): number | null {
  if (ref === null) return null;
  let sum = 0;
  let counted = 0;
  for (let i = 0; i < ref.length; i++) {
    const r = ref[i]!;
    if (r.length === 0) continue;
    const set = new Set(mine[i]);
    sum += r.filter((id) => set.has(id)).length / r.length;
    counted++;
  }
  return counted === 0 ? null : sum / counted;
}

async function runEngine(
  adapter: EngineAdapter,
  data: BenchData,
  reps: number,
  ref: { plain: string[][]; filtered: string[][] } | null,
): Promise<{ result: EngineResult; plain: string[][]; filtered: string[][] }> {
  const base = retainedBytes();
  // A fresh copy of the documents per engine, parsed outside the timed region.
  let docs: BenchDoc[] | null = JSON.parse(data.docsJson.toString('utf8')) as BenchDoc[];
  const t0 = process.hrtime.bigint();
  const built = await adapter.build(docs);
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  docs = null;
  const bytes = retainedBytes() - base;

  const texts = data.queries.map((q) => q.text);
  const n = texts.length;
  const plainRun = (i: number) => built.search(texts[i]!, K, null);
  const filteredRun = (i: number) => built.search(texts[i]!, K, data.tagFor(i));

  // Warm-up: every query unfiltered and filtered, up to three passes, cut short after 2 s (a slow
  // engine is warm long before that), at least 10 queries of each kind.
  const warmStart = process.hrtime.bigint();
  for (let j = 0; j < 3 * n && (j < Math.min(n, 10) || Number(process.hrtime.bigint() - warmStart) < 2e9); j++) {
    plainRun(j % n);
    filteredRun(j % n);
  }
  const u = timeQueries(plainRun, n, reps);
  const f = timeQueries(filteredRun, n, reps);
  const plain = u.results;
  const filtered = f.results;

  let badTags = 0;
  filtered.forEach((ids, i) => {
    for (const id of ids) if (!(data.tagsOf.get(id) ?? []).includes(data.tagFor(i))) badTags++;
  });
  const qrels = data.qrels;
  const ndcg =
    qrels === null ? null : meanOverQrels(qrels, (qid, judged) => ndcgAtK(plain[data.queries.findIndex((q) => q.id === qid)] ?? [], judged, K));
  const mean = (xs: string[][]) => xs.reduce((s, x) => s + x.length, 0) / Math.max(1, xs.length);
  return {
    result: {
      name: adapter.name,
      buildMs,
      bytes,
      p50: quantile(u.lat, 0.5),
      p99: quantile(u.lat, 0.99),
      p50f: quantile(f.lat, 0.5),
      p99f: quantile(f.lat, 0.99),
      qps: u.qps,
      qpsf: f.qps,
      ndcg,
      overlap: overlapWith(plain, ref?.plain ?? null),
      overlapf: overlapWith(filtered, ref?.filtered ?? null),
      meanHits: mean(plain),
      meanHitsf: mean(filtered),
      badTags,
    },
    plain,
    filtered,
  };
}

const MiB = 2 ** 20;
const us = (x: number) => (x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
const int = (x: number) => Math.round(x).toLocaleString('en-US');

function report(results: EngineResult[], docCount: number): void {
  console.log(
    `\n| engine | index s | docs/s | memory MiB | bytes/doc | p50 µs | p99 µs | p50 µs tag | p99 µs tag | QPS | QPS tag | nDCG@10 | overlap@10 vs quarry (tag) | mean hits (tag) |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const ov = r.overlap === null ? '-' : `${(r.overlap * 100).toFixed(1)}% (${((r.overlapf ?? 0) * 100).toFixed(1)}%)`;
    console.log(
      `| ${r.name} | ${(r.buildMs / 1000).toFixed(2)} | ${int((docCount / r.buildMs) * 1000)} | ${(r.bytes / MiB).toFixed(1)} | ${int(r.bytes / docCount)} | ` +
        `${us(r.p50)} | ${us(r.p99)} | ${us(r.p50f)} | ${us(r.p99f)} | ${int(r.qps)} | ${int(r.qpsf)} | ` +
        `${r.ndcg === null ? '-' : r.ndcg.toFixed(4)} | ${ov} | ${r.meanHits.toFixed(1)} (${r.meanHitsf.toFixed(1)}) |`,
    );
  }
  const q = results.find((r) => r.name === 'quarry');
  const others = results.filter((r) => r.name !== 'quarry');
  if (q === undefined || others.length === 0) return;
  console.log('\nquarry / library (below 1 = quarry is better; ✓ marks a ratio in quarry\'s favour):');
  console.log('\n| vs | index time | memory | p50 | p99 | p50 tag | p99 tag | 1 / QPS | 1 / QPS tag |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const cell = (mine: number, theirs: number) => {
    const r = mine / theirs;
    return `${r < 0.1 ? r.toFixed(3) : r.toFixed(2)} ${r < 1 ? '✓' : '✗'}`;
  };
  for (const o of others) {
    console.log(
      `| ${o.name} | ${cell(q.buildMs, o.buildMs)} | ${cell(q.bytes, o.bytes)} | ${cell(q.p50, o.p50)} | ${cell(q.p99, o.p99)} | ` +
        `${cell(q.p50f, o.p50f)} | ${cell(q.p99f, o.p99f)} | ${cell(o.qps, q.qps)} | ${cell(o.qpsf, q.qpsf)} |`,
    );
  }
  for (const o of others) {
    if (o.meanHitsf < q.meanHitsf - 0.05) {
      console.log(
        `NOTE: ${o.name} returned ${o.meanHitsf.toFixed(1)} filtered hits per query on average where quarry returned ${q.meanHitsf.toFixed(1)}: ` +
          'its filtered figures are for incomplete results',
      );
    }
  }
  const bad = results.filter((r) => r.badTags > 0);
  for (const r of bad) console.log(`WARNING: ${r.name} returned ${r.badTags} filtered results without the requested tag`);
}

function gitRevision(): string {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'workers', 'core/domain'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    return `${rev}${dirty === '' ? '' : ' + uncommitted changes under workers/ or core/domain/'}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string', default: 'scifact' },
      docs: { type: 'string' },
      queries: { type: 'string' },
      reps: { type: 'string' },
      analyzer: { type: 'string', default: 'shared' },
      engines: { type: 'string', default: 'quarry,minisearch,orama,flexsearch,flexsearch-tag' },
    },
  });
  if (values.data !== 'scifact' && values.data !== 'synthetic') throw new Error(`--data must be scifact or synthetic, not ${values.data}`);
  if (values.analyzer !== 'shared' && values.analyzer !== 'native') throw new Error('--analyzer must be shared or native');
  if (values.data === 'scifact' && (values.docs !== undefined || values.queries !== undefined)) {
    throw new Error('--docs and --queries apply to --data synthetic only (SciFact is used whole, with its test queries)');
  }
  const mode = values.analyzer;
  const synthetic = values.data === 'synthetic';
  const data = synthetic ? syntheticData(Number(values.docs ?? 100_000), Number(values.queries ?? 100)) : sciFactData();
  const reps = Number(values.reps ?? (synthetic ? 1 : 3));
  const all: Record<string, () => EngineAdapter> = {
    quarry: quarryEngine,
    minisearch: () => miniSearchEngine(mode),
    orama: () => oramaEngine(mode),
    flexsearch: () => flexSearchEngine(mode, 'post-filter'),
    'flexsearch-tag': () => flexSearchEngine(mode, 'tag-option'),
  };
  const adapters = values.engines.split(',').map((name) => {
    const make = all[name.trim().toLowerCase()];
    if (make === undefined) throw new Error(`unknown engine ${name}; known: ${Object.keys(all).join(', ')}`);
    return make();
  });

  const cpus = os.cpus();
  console.log(`command: npx tsx --expose-gc bench/compare-libraries.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${os.platform()} ${os.arch()}`);
  console.log(`quarry: ${gitRevision()}`);
  console.log(`data: ${data.description}`);
  console.log(
    `method: engines run one after another in this process; memory = heap used + array buffers retained after build, after full GC ` +
      `(each engine parses its own copy of the documents inside the measured region, so kept text counts); ` +
      `latency = one query text -> top ${K} ids (analysis included), process.hrtime.bigint() per query, after warm-up; ` +
      `${reps} timed pass(es) over ${data.queries.length} queries, unfiltered then with a one-tag filter (query i: tag i % ${TAG_COUNT}, ~${(data.tagShare * 100).toFixed(1)}% of docs per tag); ` +
      `analyzer mode: ${mode}`,
  );
  if (gc === undefined) console.log('WARNING: run with --expose-gc (npx tsx --expose-gc ...): memory figures are meaningless without it');
  for (const a of adapters) console.log(`engine: ${a.name} ${a.version}: ${a.config}`);

  const results: EngineResult[] = [];
  let ref: { plain: string[][]; filtered: string[][] } | null = null;
  for (const a of adapters) {
    const out = await runEngine(a, data, reps, ref);
    if (a.name === 'quarry') ref = { plain: out.plain, filtered: out.filtered };
    results.push(out.result);
    const r = out.result;
    console.log(
      `  ${a.name}: built in ${(r.buildMs / 1000).toFixed(2)} s, ${(r.bytes / MiB).toFixed(1)} MiB, p50 ${us(r.p50)} µs, p50 tag ${us(r.p50f)} µs` +
        (r.ndcg === null ? '' : `, nDCG@10 ${r.ndcg.toFixed(4)}`),
    );
  }
  report(results, data.docCount);
}

await main();
