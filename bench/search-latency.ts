/**
 * SciFact through the running service: nDCG@10 and recall@100 of bm25 over HTTP, and latency of
 * the 300 test queries through gRPC (core client) and HTTP (facade), one client and 16
 * concurrent clients. Starts its own stack from dist/ (run `npm run build` first).
 *
 *   npx tsx bench/search-latency.ts [--rounds 3] [--shards N] [--wrk-rounds 3] [--wrk-seconds 10]
 *
 * The wrk figures (issue 10's goals) come from a second stack without Server-Timing and a bare
 * Node server answering the same bytes, both up at once, measured in interleaved windows: per
 * round, 1 connection then 16, each on the service and on the bare server back to back (which
 * goes first alternates by round), so that the machine's drift, which here moved every figure by
 * tens of percent within minutes, falls on both. Each round's figures, then their medians, and
 * the ratio of the service's p50 to the bare server's within each round.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectCore } from '../core/client/core-client.js';
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { meanOverQrels, ndcgAtK, quantile, recallAtK } from './lib/metrics.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';
import { ensureWrk, searchBodies, wrkDistribution, type WrkDistribution } from './lib/wrk.js';
import { numberArg } from './lib/args.js';

const rounds = numberArg('--rounds', 3);
/** Interleaved rounds of wrk windows (see the top of this file). */
const wrkRounds = numberArg('--wrk-rounds', 3);
/** Seconds of each timed wrk window (after an untimed 3 s one per server at the start). */
const wrkSeconds = numberArg('--wrk-seconds', 10);
/** The connection counts issue 10 names. */
const CONNECTIONS = [1, 16] as const;
/** The wrk windows of one server: `[round][connection index]`. */
type Windows = WrkDistribution[][];
/**
 * `--shards N` puts the dataset on N shards on the shard threads (QUARRY_SHARDS_PER_DATASET, and
 * QUARRY_INLINE_SHARD_MAX_CHUNKS 0); by default SciFact is small enough for one inline shard.
 */
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

/**
 * A bare Node `http` server in a process of its own that answers every request with `body` (a
 * real search answer): the floor of any Node HTTP service for the same bytes and the same client.
 */
async function bareServer(body: string): Promise<{ url: string; stop: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bare-'));
  fs.writeFileSync(path.join(dir, 'body.json'), body);
  const code = `const http = require('node:http'); const fs = require('node:fs');
const body = fs.readFileSync(${JSON.stringify(path.join(dir, 'body.json'))});
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); }); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      child.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The median of `xs`. */
const median = (xs: readonly number[]): number => quantile(Float64Array.from(xs).sort(), 0.5);

/** One wrk window as p50 / p99 / p99.9 / max (µs) and req/s. */
const dist = (d: WrkDistribution): string => `p50 ${d.p50} p99 ${d.p99} p99.9 ${d.p999} max ${d.max} µs, ${d.rps.toFixed(0)} req/s`;

/** The median of each figure over windows. */
const medianDist = (ds: readonly WrkDistribution[]): string =>
  `p50 ${median(ds.map((d) => d.p50)).toFixed(0)} µs, p99 ${median(ds.map((d) => d.p99)).toFixed(0)} µs, p99.9 ${median(ds.map((d) => d.p999)).toFixed(0)} µs, max ${median(ds.map((d) => d.max)).toFixed(0)} µs, ${median(ds.map((d) => d.rps)).toFixed(0)} req/s`;

/** Mean of each Server-Timing stage over `headers` (values "name;dur=ms, ..."), in µs. */
function stageMeans(headers: readonly string[]): [string, number][] {
  const sums = new Map<string, number>();
  for (const h of headers) {
    for (const part of h.split(',')) {
      const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
      if (m) sums.set(m[1]!, (sums.get(m[1]!) ?? 0) + Number(m[2]) * 1000);
    }
  }
  return [...sums].map(([name, us]) => [name, us / headers.length]);
}

/** A bench stack with SciFact ingested over HTTP: its address, the dataset's headers, and the ingest time. */
async function loadedStack(data: ReturnType<typeof loadSciFact>, env: Record<string, string>) {
  // Embedding would compete for the CPU with the queries being timed: this benchmark is lexical.
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', ...env, ...(shards ? { QUARRY_SHARDS_PER_DATASET: shards, QUARRY_INLINE_SHARD_MAX_CHUNKS: '0' } : {}) });
  try {
    return { stack, ...(await ingestSciFact(stack.baseUrl, stack.adminKey, data.docs)) };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

async function main(): Promise<void> {
  const data = loadSciFact();
  const qrels = loadQrels('test');
  // Server-Timing costs a few performance.now() calls per request; it gives the stage costs. The
  // wrk figures come from a second stack in the default configuration, without it.
  const { stack, headers, datasetId, ingestMs } = await loadedStack(data, { QUARRY_SERVER_TIMING: 'true' });
  const wrk: Windows = [];
  const bareRuns: Windows = [];
  const wrkInstalled = ensureWrk();
  try {
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
    const viaGrpc = (q: string) => core.search({ dataset_id: datasetId, search_type: 'bm25', query: q, offset: 0, limit: 10 });
    const timings: string[] = [];
    let sample = '';
    const viaHttp = async (q: string) => {
      const res = await fetch(`${stack.baseUrl}/api/chunk/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: q, search_type: 'bm25', page_size: 10 }),
      });
      sample = await res.text();
      if (!res.ok) throw new Error(`search: ${res.status} ${sample}`);
      timings.push(res.headers.get('server-timing') ?? '');
    };
    await measure(texts, 4, viaHttp); // warm-up
    const results = {
      grpc1: await measure(texts, 1, viaGrpc),
      grpc16: await measure(texts, 16, viaGrpc),
      http1: await (async () => {
        timings.length = 0;
        return measure(texts, 1, viaHttp);
      })(),
      http16: await measure(texts, 16, viaHttp),
    };
    const stages = stageMeans(timings.slice(0, texts.length * rounds));
    core.close();
    await stack.stop();
    if (wrkInstalled) {
      const plain = await loadedStack(data, {});
      const bare = await bareServer(sample);
      try {
        const bodies = searchBodies(texts);
        const window = (url: string, c: number, seconds: number) => wrkDistribution(url, plain.headers, bodies, c, seconds);
        window(plain.stack.baseUrl, 1, 3);
        window(bare.url, 1, 3);
        for (let r = 0; r < wrkRounds; r++) {
          const service: WrkDistribution[] = [];
          const floor: WrkDistribution[] = [];
          for (const c of CONNECTIONS) {
            if (r % 2 === 0) {
              service.push(window(plain.stack.baseUrl, c, wrkSeconds));
              floor.push(window(bare.url, c, wrkSeconds));
            } else {
              floor.push(window(bare.url, c, wrkSeconds));
              service.push(window(plain.stack.baseUrl, c, wrkSeconds));
            }
          }
          wrk.push(service);
          bareRuns.push(floor);
        }
      } finally {
        bare.stop();
        await plain.stack.stop();
      }
    }
    console.log(`machine: ${machine()}`);
    console.log(`shards: ${shards ? `${shards} on the shard threads` : 'default (one inline shard for a dataset of this size)'}`);
    console.log(`data: SciFact BEIR test split, ${data.docs.length} docs (corpus sha256 ${data.corpusSha256.slice(0, 12)}…), ${texts.length} queries x ${rounds} rounds; bm25, page_size 10`);
    console.log(`ingest over HTTP (batches of 120, indexed before each answer): ${ingestMs} ms, ${(data.docs.length / (ingestMs / 1000)).toFixed(0)} chunks/s`);
    console.log(`quality over HTTP: nDCG@10 ${ndcg.toFixed(4)}, recall@100 ${recall.toFixed(4)}`);
    console.log(`gRPC, 1 client:    ${fmt(results.grpc1)}`);
    console.log(`gRPC, 16 clients:  ${fmt(results.grpc16)}`);
    console.log(`HTTP, 1 client:    ${fmt(results.http1)}`);
    console.log(`HTTP, 16 clients:  ${fmt(results.http16)}`);
    console.log('(the gRPC and HTTP rows above include the Node client in this process; wrk below is a C client)');
    const [shardParts, timeline] = [stages.filter(([n]) => n.startsWith('shard-')), stages.filter(([n]) => !n.startsWith('shard-'))];
    console.log(`HTTP stages (Server-Timing, mean over the ${texts.length * rounds} one-client requests, µs): ${timeline.map(([n, us]) => `${n} ${us.toFixed(0)}`).join(', ')}`);
    console.log(`  within core, summed over the request's shard tasks: ${shardParts.map(([n, us]) => `${n} ${us.toFixed(0)}`).join(', ')} (run: in the shard threads; wait: the rest of their round trips)`);
    console.log('  (serialize: the answer as UTF-8 JSON bytes; total ends there, before the socket write)');
    if (!wrkInstalled) console.log('wrk: not installed and could not be (apt-get install wrk) - skipped');
    if (wrk.length > 0) {
      console.log(`wrk, ${wrkRounds} interleaved rounds of ${wrkSeconds} s windows: the service (a second stack, default configuration: no Server-Timing) and a bare Node http server answering the same ${sample.length}-byte answer`);
      wrk.forEach((service, r) => {
        const parts = CONNECTIONS.map((c, i) => `c${c} service ${dist(service[i]!)} | bare ${dist(bareRuns[r]![i]!)}`);
        console.log(`  round ${r + 1}: ${parts.join('; ')}; p50 ratio at c1 ${(service[0]!.p50 / bareRuns[r]![0]!.p50).toFixed(1)}x`);
      });
      CONNECTIONS.forEach((c, i) => {
        const col = (runs: Windows) => runs.map((round) => round[i]!);
        console.log(`HTTP via wrk, ${c} connection(s), median of ${wrkRounds} rounds: ${medianDist(col(wrk))}, non-2xx ${col(wrk).reduce((n, d) => n + d.non2xx, 0)}`);
        console.log(`bare Node http, ${c} connection(s), median of ${wrkRounds} rounds: ${medianDist(col(bareRuns))}`);
      });
      const ratios = wrk.map((service, r) => service[0]!.p50 / bareRuns[r]![0]!.p50);
      console.log(`quarry p50 / bare Node p50 at 1 connection, median of the rounds' ratios: ${median(ratios).toFixed(1)}x (rounds: ${ratios.map((x) => x.toFixed(1)).join(', ')})`);
    }
  } finally {
    await stack.stop();
  }
}

await main();
