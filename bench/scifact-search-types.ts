/**
 * SciFact through the running service with the default embedded model (USE-Lite): the rate at
 * which the job workers embed and index the corpus, then nDCG@10, recall@100 and HTTP latency of
 * bm25, fulltext, semantic and hybrid search over the 300 test queries. Starts its own stack from dist/.
 *
 *   npx tsx bench/scifact-search-types.ts [--docs N]   (the whole corpus takes ~25 min on 2 cores)
 */
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK } from './lib/metrics.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';

const docsArg = process.argv.indexOf('--docs');
const limit = docsArg > 0 ? Number(process.argv[docsArg + 1]) : Number.POSITIVE_INFINITY;

const data = loadSciFact();
const qrels = loadQrels('test');
const docs = data.docs.slice(0, Math.min(limit, data.docs.length));
const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'true' });
try {
  const { headers, datasetId, ingestMs } = await ingestSciFact(stack.baseUrl, stack.adminKey, docs);
  const ingested = Date.now();
  for (;;) {
    const usage = await fetch(`${stack.baseUrl}/api/dataset/usage/${datasetId}`, { headers }).then((r) => r.json() as Promise<{ chunks_pending_embedding: number }>);
    if (usage.chunks_pending_embedding === 0) break;
    process.stderr.write(`pending embedding: ${usage.chunks_pending_embedding} after ${((Date.now() - ingested) / 1000).toFixed(0)} s\n`);
    await new Promise((r) => setTimeout(r, 30_000));
  }
  const embeddedMs = Date.now() - ingested;
  console.log(`machine: ${machine()}`);
  console.log(`data: SciFact BEIR, ${docs.length} docs (title + text), ${qrels.size} test queries; default embedder USE-Lite (512 d, mean of sentence vectors)`);
  console.log(`ingest over HTTP: ${ingestMs} ms; embedding + dense indexing in the job workers: ${(embeddedMs / 1000).toFixed(0)} s, ${(docs.length / (embeddedMs / 1000)).toFixed(2)} chunks/s`);
  console.log('| search type | nDCG@10 | recall@100 | HTTP p50 | HTTP p99 |');
  console.log('|---|---|---|---|---|');
  for (const searchType of ['bm25', 'fulltext', 'semantic', 'hybrid']) {
    const ranked = new Map<string, string[]>();
    const lat: number[] = [];
    for (const [qid] of qrels) {
      const t = process.hrtime.bigint();
      const res = await post(stack.baseUrl, '/api/chunk/search', { query: data.queries.get(qid), search_type: searchType, page_size: 100, slim_chunks: true }, headers);
      lat.push(Number(process.hrtime.bigint() - t) / 1e6);
      ranked.set(qid, res.chunks.map((c: { chunk: { tracking_id: string } }) => c.chunk.tracking_id));
    }
    lat.sort((a, b) => a - b);
    const ndcg = meanOverQrels(qrels, (q, judged) => ndcgAtK(ranked.get(q) ?? [], judged, 10));
    const recall = meanOverQrels(qrels, (q, judged) => recallAtK(ranked.get(q) ?? [], judged, 100));
    console.log(`| ${searchType} | ${ndcg.toFixed(4)} | ${recall.toFixed(4)} | ${quantile(lat, 0.5).toFixed(1)} ms | ${quantile(lat, 0.99).toFixed(1)} ms |`);
  }
} finally {
  await stack.stop();
}
