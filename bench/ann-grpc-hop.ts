/**
 * ANN through the core's gRPC API: what the hop costs. Fashion-MNIST (Debian dataset-fashion-mnist)
 * train images become a dataset's dense vectors through the real ingest path (HTTP chunks, BullMQ
 * embedding jobs against a local OpenAI-compatible server that returns each row's 784 pixels,
 * SQLite, core apply); then the first test images are searched
 *   (a) in-process, on DenseIndex objects built with the shard's parameters (workers/shard/shard.ts
 *       creates `new DenseIndex({dimension, metric})`: f16 graph, M 16, efConstruction 128, ef 64),
 *       both as one index of all N vectors and split exactly as the core splits them (shardOf);
 *   (b) through the core's gRPC Search (search_type semantic, `vector`, limit 10), one client;
 *   (c) the same with 16 concurrent clients.
 * Recall@10 is against exact Euclidean ground truth (integer arithmetic on the pixels).
 *
 *   npx tsx bench/ann-grpc-hop.ts [--n 20000] [--queries 1000] [--reps 3] [--shards S] [--clients 16]
 *
 * Needs: apt-get install -y dataset-fashion-mnist redis-server; a current dist/ (the stack runs from it).
 * Latency is per query, client-side, in µs; each mode runs once per repetition, modes alternate
 * within a repetition, and the repetition with the lowest p50 is reported per mode.
 */
import os from 'node:os';
import { connectCore, type CoreClient } from '../core/client/core-client.js';
import { shardOf } from '../core/router/placement.js';
import { DenseIndex, DENSE_INDEX_DEFAULTS } from '../workers/shard/dense/dense-index.js';
import { exactGroundTruth, GT_K, readIdx, recallAt10 } from './lib/fashion-mnist.js';
import { quantile } from './lib/metrics.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';
import { startTableEmbeddings } from './lib/table-embeddings.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const PREFIX = 'fm-';
const BATCH = 120;
const WARMUP = 200;
const MISSING = 0xffffffff;

/** Latencies (µs, ascending) and throughput of one pass over the queries. */
interface Pass {
  lat: Float64Array;
  qps: number;
}

const now = () => process.hrtime.bigint();
const micros = (from: bigint) => Number(now() - from) / 1000;

/** Runs `fn(i)` for every query index with `clients` concurrent callers. */
async function passAsync(nq: number, clients: number, fn: (i: number) => Promise<void>): Promise<Pass> {
  const lat = new Float64Array(nq);
  let next = 0;
  const start = now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < nq) {
        const i = next++;
        const t = now();
        await fn(i);
        lat[i] = micros(t);
      }
    }),
  );
  return { lat: lat.sort(), qps: nq / (micros(start) / 1e6) };
}

/** Keeps, per mode, the pass with the lowest p50. */
function keepBest(best: Map<string, Pass>, mode: string, p: Pass): void {
  const prev = best.get(mode);
  if (prev === undefined || quantile(p.lat, 0.5) < quantile(prev.lat, 0.5)) best.set(mode, p);
}

/** Ingests rows 0..n-1 as chunks `fm-<i>` and returns chunk id -> row. */
async function ingest(baseUrl: string, headers: Record<string, string>, n: number): Promise<Map<string, number>> {
  const rowOf = new Map<string, number>();
  for (let from = 0; from < n; from += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, n - from) }, (_, j) => ({ chunk_html: `${PREFIX}${from + j}`, tracking_id: `${PREFIX}${from + j}` }));
    const res = await post(baseUrl, '/api/chunk', batch, headers);
    for (const c of res.chunk_metadata as { id: string; tracking_id: string }[]) rowOf.set(c.id, Number(c.tracking_id.slice(PREFIX.length)));
  }
  if (rowOf.size !== n) throw new Error(`ingested ${rowOf.size} chunks, expected ${n}`);
  return rowOf;
}

/** Polls the usage endpoint until no chunk waits for its vector, then makes the core apply everything. */
async function waitForEmbeddings(baseUrl: string, headers: Record<string, string>, datasetId: string, core: CoreClient, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let said = 0;
  for (;;) {
    const res = await fetch(`${baseUrl}/api/dataset/usage/${datasetId}`, { headers });
    const usage = (await res.json()) as { chunk_count: number; chunks_pending_embedding: number };
    const pending = usage.chunks_pending_embedding;
    if (pending === 0) break;
    if (Date.now() - said >= 10_000) {
      console.error(`waiting for embeddings: ${pending} of ${usage.chunk_count} chunks pending`);
      said = Date.now();
    }
    if (Date.now() > until) throw new Error(`embedding not done after ${timeoutMs} ms (${pending} pending)`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  // The job stores a batch's vectors before it applies them: the last batch may not be applied yet.
  await core.apply(datasetId);
}

const loadText = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

async function main(): Promise<void> {
  const loadAtStart = loadText();
  const nWanted = Number(arg('n', '20000'));
  const nq = Number(arg('queries', '1000'));
  const reps = Number(arg('reps', '3'));
  const clients = Number(arg('clients', '16'));
  const shardsArg = process.argv.includes('--shards') ? arg('shards', '') : undefined;

  const train = readIdx('train-images-idx3-ubyte.gz');
  const test = readIdx('t10k-images-idx3-ubyte.gz');
  const dim = train.dim;
  const n = Math.min(nWanted, train.n);
  const base = train.bytes.subarray(0, n * dim);
  const queryBytes = test.bytes.subarray(0, nq * dim);
  const gt = exactGroundTruth(train.bytes, queryBytes, n, nq, dim, '/tmp/quarry-ann-grpc-hop');

  const server = await startTableEmbeddings(PREFIX, n, dim, (i) => base.subarray(i * dim, (i + 1) * dim));
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'true', ...(shardsArg ? { QUARRY_SHARDS_PER_DATASET: shardsArg, QUARRY_INLINE_SHARD_MAX_CHUNKS: '0' } : {}) });
  const core = connectCore(stack.grpcAddress, 30_000);
  try {
    const admin = { authorization: stack.adminKey };
    const org = await post(stack.baseUrl, '/api/organization', { name: 'bench' }, admin);
    const serverConfiguration = { EMBEDDING_BASE_URL: server.baseUrl, EMBEDDING_MODEL_NAME: 'fashion-mnist-pixels', EMBEDDING_SIZE: dim, DISTANCE_METRIC: 'euclidean' };
    const ds = await post(stack.baseUrl, '/api/dataset', { dataset_name: 'fashion-mnist', server_configuration: serverConfiguration }, { ...admin, 'tr-organization': org.id });
    const headers = { ...admin, 'tr-dataset': ds.id };
    let t = Date.now();
    const rowOf = await ingest(stack.baseUrl, headers, n);
    const ingestS = (Date.now() - t) / 1000;
    await waitForEmbeddings(stack.baseUrl, headers, ds.id, core, 60 * 60_000);
    const embeddedS = (Date.now() - t) / 1000;
    const stats = await core.stats(ds.id);
    if (stats.chunk_count !== n) throw new Error(`core reports ${stats.chunk_count} chunks, expected ${n}`);
    const shards = stats.shards;

    // (a) In-process indexes, built while the stack is idle. Shard s holds the chunks with
    // shardOf(chunk id) = s under dense local ids, as the shard thread's internal ids are.
    const baseF = Float32Array.from(base);
    const opts = { dimension: dim, metric: 'l2sq' as const };
    t = Date.now();
    const whole = new DenseIndex({ ...opts, initialCapacity: n });
    whole.upsertMany(Uint32Array.from({ length: n }, (_, i) => i), baseF, 1);
    const buildWholeS = (Date.now() - t) / 1000;
    const rowsByShard: number[][] = Array.from({ length: shards }, () => []);
    for (const [chunkId, row] of rowOf) rowsByShard[shardOf(chunkId, shards)]!.push(row);
    const parts = rowsByShard.map((rows) => {
      const idx = new DenseIndex({ ...opts, initialCapacity: rows.length });
      const vecs = new Float32Array(rows.length * dim);
      rows.forEach((row, j) => vecs.set(baseF.subarray(row * dim, (row + 1) * dim), j * dim));
      idx.upsertMany(Uint32Array.from(rows, (_, j) => j), vecs, 1);
      return { idx, rows: Uint32Array.from(rows) };
    });

    const queriesF = Array.from({ length: nq }, (_, i) => Float32Array.from(queryBytes.subarray(i * dim, (i + 1) * dim)));
    const queriesWire = queriesF.map((q) => Array.from(q));
    const results = {
      whole: new Uint32Array(nq * GT_K).fill(MISSING),
      parts: new Uint32Array(nq * GT_K).fill(MISSING),
      grpc: new Uint32Array(nq * GT_K).fill(MISSING),
    };
    const searchWhole = (i: number) => {
      const hits = whole.search(queriesF[i]!, GT_K, null);
      results.whole.set(hits.ids, i * GT_K);
    };
    // Per query: each shard's search time (sum = one thread doing them all, max = ideal parallel
    // shards), then the core's merge (sort by distance, keep 10).
    const partSum = new Float64Array(nq);
    const partMax = new Float64Array(nq);
    const searchParts = (i: number) => {
      const merged: { row: number; d: number }[] = [];
      let sum = 0;
      let max = 0;
      for (const p of parts) {
        const s = now();
        const hits = p.idx.search(queriesF[i]!, GT_K, null);
        const us = micros(s);
        sum += us;
        max = Math.max(max, us);
        for (let r = 0; r < hits.ids.length; r++) merged.push({ row: p.rows[hits.ids[r]!]!, d: hits.scores[r]! });
      }
      const s = now();
      merged.sort((x, y) => x.d - y.d);
      for (let r = 0; r < Math.min(GT_K, merged.length); r++) results.parts[i * GT_K + r] = merged[r]!.row;
      const mergeUs = micros(s);
      partSum[i] = sum + mergeUs;
      partMax[i] = max + mergeUs;
    };
    const searchGrpc = async (i: number) => {
      const r = await core.search({ dataset_id: ds.id, search_type: 'semantic', query: '', vector: queriesWire[i]!, offset: 0, limit: GT_K });
      r.chunks.forEach((c, j) => (results.grpc[i * GT_K + j] = rowOf.get(c.chunk_id) ?? MISSING));
    };

    const loadBeforeQueries = loadText();
    for (let i = 0; i < WARMUP; i++) {
      searchWhole(i % nq);
      searchParts(i % nq);
      await searchGrpc(i % nq);
      await core.health();
    }
    const best = new Map<string, Pass>();
    for (let rep = 0; rep < reps; rep++) {
      keepBest(best, 'whole', await passAsync(nq, 1, async (i) => searchWhole(i)));
      const seq = await passAsync(nq, 1, async (i) => searchParts(i));
      keepBest(best, 'partsSeq', { lat: partSum.slice().sort(), qps: seq.qps });
      keepBest(best, 'partsMax', { lat: partMax.slice().sort(), qps: NaN });
      keepBest(best, 'grpc1', await passAsync(nq, 1, searchGrpc));
      if (clients > 1) keepBest(best, 'grpcN', await passAsync(nq, clients, searchGrpc));
      keepBest(best, 'health', await passAsync(nq, 1, async () => void (await core.health())));
    }
    const recall = {
      whole: recallAt10(results.whole, base, queryBytes, gt, nq, dim),
      parts: recallAt10(results.parts, base, queryBytes, gt, nq, dim),
      grpc: recallAt10(results.grpc, base, queryBytes, gt, nq, dim),
    };
    let same = 0;
    for (let i = 0; i < results.grpc.length; i++) if (results.grpc[i] === results.parts[i]) same++;

    const p50 = (m: string) => quantile(best.get(m)!.lat, 0.5);
    const row = (label: string, m: string, rec: string) => {
      const p = best.get(m)!;
      const qps = Number.isNaN(p.qps) ? '-' : p.qps.toFixed(0);
      console.log(`| ${label} | ${p50(m).toFixed(0)} | ${quantile(p.lat, 0.99).toFixed(0)} | ${qps} | ${rec} |`);
    };
    const d = DENSE_INDEX_DEFAULTS;
    console.log('');
    console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores (${machine()}); load average (1/5/15 min) ${loadAtStart} at the start, ${loadBeforeQueries} before the queries, ${loadText()} at the end`);
    console.log(`data: Fashion-MNIST first ${n} of ${train.n} train images x ${dim} (uint8 pixels as f32), first ${nq} test images as queries; Euclidean (DISTANCE_METRIC euclidean); exact top-10 ground truth${gt.cached ? ' (cached)' : ''}`);
    console.log(`index: DenseIndex as the shard builds it: ${d.quantization} graph, M ${d.connectivity}, efConstruction ${d.expansionAdd}, ef ${d.expansionSearch}, exact f32 rescoring; in-process builds single-threaded (whole index: ${buildWholeS.toFixed(1)} s)`);
    console.log(`stack: ${shards} shard(s) per dataset (sizes ${parts.map((p) => p.rows.length).join(' + ')}); ingest ${n} chunks over HTTP ${ingestS.toFixed(1)} s, all embedded and applied after ${embeddedS.toFixed(1)} s (${server.stats.requests} embedding requests)`);
    console.log(`timing: one query at a time unless marked; best of ${reps} alternating repetitions by p50; gRPC rows include the Node client in this process`);
    console.log('');
    console.log('| path | p50 µs | p99 µs | QPS | recall@10 |');
    console.log('|---|---:|---:|---:|---:|');
    row('(a) in-process, one index of all N', 'whole', recall.whole.toFixed(4));
    row(`(a) in-process, ${shards} shard index(es) one after another + merge`, 'partsSeq', recall.parts.toFixed(4));
    row(`(a) in-process, ${shards} shard index(es): slowest shard + merge (ideal parallel)`, 'partsMax', recall.parts.toFixed(4));
    row('(b) gRPC Search semantic+vector, 1 client', 'grpc1', recall.grpc.toFixed(4));
    if (clients > 1) row(`(c) gRPC Search semantic+vector, ${clients} clients`, 'grpcN', recall.grpc.toFixed(4));
    row('gRPC Health, 1 client (transport floor)', 'health', '-');
    console.log('');
    console.log(`hop cost at p50, (b) - (a): vs the same ${shards}-shard split, ideal parallel ${(p50('grpc1') - p50('partsMax')).toFixed(0)} µs; vs the same split run one after another ${(p50('grpc1') - p50('partsSeq')).toFixed(0)} µs; vs one index of all N ${(p50('grpc1') - p50('whole')).toFixed(0)} µs`);
    console.log(`gRPC results equal to the in-process shard split's at the same rank: ${((100 * same) / results.grpc.length).toFixed(1)}% (the graphs differ only by insertion order)`);
  } finally {
    core.close();
    await stack.stop();
    await server.close();
  }
}

await main();
