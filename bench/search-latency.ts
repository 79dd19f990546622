/**
 * SciFact through the running service: nDCG@10 and recall@100 of bm25 over HTTP, and latency of
 * the 300 test queries through gRPC (core client) and HTTP (facade), one client and 16
 * concurrent clients. Starts its own stack from dist/ (run `npm run build` first).
 *
 *   npx tsx bench/search-latency.ts [--rounds 3] [--shards N]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectCore } from '../core/client/core-client.js';
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK } from './lib/metrics.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
/** `--shards N` sets QUARRY_SHARDS_PER_DATASET (default: one per shard thread). */
const shardsArg = process.argv.indexOf('--shards');
const shards = shardsArg > 0 ? process.argv[shardsArg + 1] : undefined;

/** Runs `fn` over the queries with `concurrency` workers; returns sorted latencies (µs) and QPS. */
async function measure(queries: string[], concurrency: number, fn: (q: string) => Promise<unknown>): Promise<{ lat: Float64Array; qps: number }> {
  const lat: number[] = [];
  const jobs = Array.from({ length: rounds }, () => queries).flat();
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const q = jobs[next++]!;
        const t = process.hrtime.bigint();
        await fn(q);
        lat.push(Number(process.hrtime.bigint() - t) / 1000);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { lat: Float64Array.from(lat).sort(), qps: jobs.length / seconds };
}

const fmt = (r: { lat: Float64Array; qps: number }) =>
  `p50 ${quantile(r.lat, 0.5).toFixed(0)} µs, p99 ${quantile(r.lat, 0.99).toFixed(0)} µs, ${r.qps.toFixed(0)} q/s`;

/** wrk (Debian package) over the same queries, 1 and 16 connections, 10 s each; empty when wrk is absent. */
function runWrk(baseUrl: string, headers: Record<string, string>, queries: string[]): string[] {
  if (spawnSync('wrk', ['--version']).error) return ['wrk: not installed (apt-get install wrk) - skipped'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-wrk-'));
  const script = path.join(dir, 'search.lua');
  const bodies = queries.map((q) => JSON.stringify(JSON.stringify({ query: q, search_type: 'bm25', page_size: 10 })));
  fs.writeFileSync(
    script,
    `local bodies = {${bodies.join(',')}}
local i = 0
wrk.method = "POST"
${Object.entries({ ...headers, 'content-type': 'application/json' }).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`).join('\n')}
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/api/chunk/search", nil, bodies[i])
end
`,
  );
  const out: string[] = [];
  for (const c of [1, 16]) {
    const r = spawnSync('wrk', ['-t1', `-c${c}`, '-d10s', '--latency', '-s', script, baseUrl], { encoding: 'utf8' });
    const p50 = /50%\s+(\S+)/.exec(r.stdout)?.[1];
    const p99 = /99%\s+(\S+)/.exec(r.stdout)?.[1];
    const rps = /Requests\/sec:\s+(\S+)/.exec(r.stdout)?.[1];
    const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? '0';
    out.push(`HTTP via wrk, ${c} connection(s): p50 ${p50}, p99 ${p99}, ${rps} req/s, non-2xx ${non2xx}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

async function main(): Promise<void> {
  const data = loadSciFact();
  const qrels = loadQrels('test');
  // Embedding would compete for the CPU with the queries being timed: this benchmark is lexical.
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', ...(shards ? { QUARRY_SHARDS_PER_DATASET: shards } : {}) });
  try {
    const admin = { authorization: stack.adminKey };
    const org = await post(stack.baseUrl, '/api/organization', { name: 'bench' }, admin);
    const ds = await post(stack.baseUrl, '/api/dataset', { dataset_name: 'scifact' }, { ...admin, 'tr-organization': org.id });
    const headers = { ...admin, 'tr-dataset': ds.id };
    const t0 = Date.now();
    const byTracking = new Map<string, string>();
    for (let i = 0; i < data.docs.length; i += 120) {
      const batch = data.docs.slice(i, i + 120).map((d) => ({ tracking_id: d.id, chunk_html: `${d.title} ${d.text}` }));
      const res = await post(stack.baseUrl, '/api/chunk', batch, headers);
      for (const c of res.chunk_metadata) byTracking.set(c.id, c.tracking_id);
    }
    const ingestMs = Date.now() - t0;

    const queryIds = [...qrels.keys()];
    const texts = queryIds.map((id) => data.queries.get(id)!);
    const ranked = new Map<string, string[]>();
    for (const id of queryIds) {
      const res = await post(stack.baseUrl, '/api/chunk/search', { query: data.queries.get(id), search_type: 'bm25', page_size: 100, slim_chunks: true }, headers);
      ranked.set(id, res.chunks.map((c: any) => c.chunk.tracking_id));
    }
    const ndcg = meanOverQrels(qrels, (q, judged) => ndcgAtK(ranked.get(q) ?? [], judged, 10));
    const recall = meanOverQrels(qrels, (q, judged) => recallAtK(ranked.get(q) ?? [], judged, 100));

    const core = connectCore(stack.grpcAddress, 10_000);
    const viaGrpc = (q: string) => core.search({ dataset_id: ds.id, search_type: 'bm25', query: q, offset: 0, limit: 10 });
    const viaHttp = (q: string) => post(stack.baseUrl, '/api/chunk/search', { query: q, search_type: 'bm25', page_size: 10 }, headers);
    await measure(texts, 4, viaHttp); // warm-up
    const results = {
      grpc1: await measure(texts, 1, viaGrpc),
      grpc16: await measure(texts, 16, viaGrpc),
      http1: await measure(texts, 1, viaHttp),
      http16: await measure(texts, 16, viaHttp),
    };
    core.close();
    const wrk = runWrk(stack.baseUrl, headers, texts);
    console.log(`machine: ${machine()}`);
    console.log(`shards per dataset: ${shards ?? 'default (one per shard thread)'}`);
    console.log(`data: SciFact BEIR test split, ${data.docs.length} docs (corpus sha256 ${data.corpusSha256.slice(0, 12)}…), ${texts.length} queries x ${rounds} rounds; bm25, page_size 10`);
    console.log(`ingest over HTTP (batches of 120, indexed before each answer): ${ingestMs} ms, ${(data.docs.length / (ingestMs / 1000)).toFixed(0)} chunks/s`);
    console.log(`quality over HTTP: nDCG@10 ${ndcg.toFixed(4)}, recall@100 ${recall.toFixed(4)}`);
    console.log(`gRPC, 1 client:    ${fmt(results.grpc1)}`);
    console.log(`gRPC, 16 clients:  ${fmt(results.grpc16)}`);
    console.log(`HTTP, 1 client:    ${fmt(results.http1)}`);
    console.log(`HTTP, 16 clients:  ${fmt(results.http16)}`);
    console.log('(the gRPC and HTTP rows above include the Node client in this process; wrk below is a C client)');
    for (const line of wrk) console.log(line);
  } finally {
    await stack.stop();
  }
}

await main();
