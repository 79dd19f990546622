/**
 * SciFact fulltext benchmark (not a test): the in-process shard index scored as fulltext search
 * (BM25 plus proximity pairs, workers/shard/bm25/proximity.ts) against plain BM25, for several
 * pair weights, on the train split (where the weight was chosen) and the test split. Also the
 * added query latency and the memory of the term sequences.
 *
 *   npx tsx --expose-gc bench/scifact-fulltext.ts
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Bm25Index } from '../workers/shard/bm25/bm25-index.js';
import { PAIR_WEIGHT, PROXIMITY_WINDOW, queryPairs } from '../workers/shard/bm25/proximity.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK } from './lib/metrics.js';
import { loadQrels, loadSciFact, scifactDir } from './lib/scifact.js';

const gc = (globalThis as { gc?: () => void }).gc;
const heap = (): number => {
  gc?.();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
};

function main(): void {
  const cpus = os.cpus();
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, node ${process.version}`);
  const data = loadSciFact();
  console.log(`data: BEIR SciFact from ${scifactDir}: ${data.docs.length} docs (title + " " + text), corpus sha256 ${data.corpusSha256.slice(0, 12)}...`);
  const before = heap();
  const index = new Bm25Index({ k1: 0.9, b: 0.4 });
  const t0 = performance.now();
  for (const d of data.docs) index.upsert(d.id, `${d.title} ${d.text}`);
  const buildMs = performance.now() - t0;
  console.log(`index: ${buildMs.toFixed(0)} ms to build, ${((heap() - before) / 2 ** 20).toFixed(1)} MiB (postings + term sequences), window ${PROXIMITY_WINDOW}`);

  const searchOne = (text: string, k: number, weight: number) => {
    const terms = index.analyzer.analyze(text);
    const stats = { ...index.stats(), docFreqs: index.termDocFreqs(terms) };
    if (weight === 0) return index.search(terms, k, stats);
    const pairs = queryPairs(terms, (t) => index.isStopTerm(t));
    return index.search(terms, k, stats, null, { pairs, docFreqs: index.pairDocFreqs(pairs), weight });
  };

  console.log('\n| pair weight | nDCG@10 train | R@100 train | nDCG@10 test | R@100 test |\n|---|---|---|---|---|');
  const splits = (['train', 'test'] as const).map((s) => ({ s, qrels: loadQrels(s) }));
  for (const weight of [0, 0.1, PAIR_WEIGHT, 0.3, 0.5]) {
    const cells = splits.map(({ qrels }) => {
      const ranked = new Map<string, string[]>();
      for (const q of qrels.keys()) ranked.set(q, searchOne(data.queries.get(q) ?? '', 100, weight).chunkIds);
      return [meanOverQrels(qrels, (q, j) => ndcgAtK(ranked.get(q) ?? [], j, 10)), meanOverQrels(qrels, (q, j) => recallAtK(ranked.get(q) ?? [], j, 100))];
    });
    const label = weight === 0 ? '0 (plain bm25)' : weight === PAIR_WEIGHT ? `${weight} (default)` : String(weight);
    console.log(`| ${label} | ${cells.map(([n, r]) => `${n!.toFixed(4)} | ${r!.toFixed(4)}`).join(' | ')} |`);
  }

  const texts = [...splits[1]!.qrels.keys()].map((q) => data.queries.get(q) ?? '');
  for (const weight of [0, PAIR_WEIGHT]) {
    for (const t of texts) searchOne(t, 10, weight);
    const lat: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      for (const t of texts) {
        // A write empties the pair-postings cache, so every query pays its intersections.
        index.upsert('__bench__', 'x');
        index.remove('__bench__');
        const a = performance.now();
        searchOne(t, 10, weight);
        lat.push((performance.now() - a) * 1000);
      }
    }
    lat.sort((x, y) => x - y);
    console.log(`${weight === 0 ? 'bm25    ' : 'fulltext'} latency p50 ${quantile(lat, 0.5).toFixed(1)} us, p99 ${quantile(lat, 0.99).toFixed(1)} us (in-process, top 10, cold pair cache, 5 x ${texts.length} test queries)`);
  }
}

main();
