/**
 * Where the tail of an HTTP bm25 search comes from (issue 10's p99 <= 2 ms at one connection):
 * `wrk` at 1 connection, the 300 SciFact test queries' bodies in turn, against servers that each
 * keep one more part of the service's path, then against the service, one rung at a time (each
 * up only while it is measured) and the rungs alternated round by round.
 *
 * - `bare`: a Node `http` server answering every request with the same answer (the first
 *   query's, built as `score` builds it): the floor of any Node HTTP service for this client.
 * - `score`: the body parsed, the query scored by the shard's own `Bm25Index` over SciFact in
 *   this process, the answer joined from each hit's chunk JSON encoded at start.
 * - `pin`: as `score`, after a `PRAGMA data_version` of a SQLite database (WAL) holding the
 *   chunks: what the service's read caches cost when they hit (it reads that counter once per
 *   request, store/sqlite/epoch-cache.ts).
 * - `store`: as `pin`, and the hits' chunk JSON read from its rows (one row per chunk by primary
 *   key, no cache): what a search costs when the read caches miss.
 * - `koa`: as `store`, inside Koa and @koa/router (the service's HTTP framework), no middleware.
 * - `service`: `POST /api/chunk/search` on a stack in the default topology (`up.sh`'s: the core
 *   in the HTTP process, the job workers, Redis; background embedding off).
 * - `service-nojobs`: the same with the job-worker process stopped (SIGSTOP) while measured:
 *   what the search records' delivery and storage cost the tail.
 *
 * Every rung prints its answer's size (the service's is the reference), p50/p90/p99/p99.9/max,
 * req/s, and the CPU of its processes per search.
 *
 * With `--connections 16` the rungs answer 16 connections at once: the most searches per second
 * each part of the path leaves this machine (issue 10's 3,000 req/s at 16 connections).
 *
 *   npm run build && npx tsx bench/search-floor.ts [--rounds 3] [--seconds 10] [--rungs bare,score,...] [--connections 1]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import { Bm25Index } from '../workers/shard/bm25/bm25-index.js';
import { cpuSeconds } from './lib/rss-sampler.js';
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { machine, startBenchStack } from './lib/spawn-stack.js';
import { ensureWrk, searchBodies, wrkDistribution, type WrkDistribution } from './lib/wrk.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const ROUNDS = Number(arg('--rounds', '3'));
const SECONDS = Number(arg('--seconds', '10'));
/** wrk's connections, each with one search in flight. */
const CONNECTIONS = Number(arg('--connections', '1'));
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < 1) throw new Error(`--connections: a whole number of at least 1, got "${arg('--connections', '1')}"`);
const ALL_RUNGS = ['bare', 'score', 'pin', 'store', 'koa', 'service', 'service-nojobs'] as const;
type Rung = (typeof ALL_RUNGS)[number];
const RUNGS = arg('--rungs', ALL_RUNGS.join(','))
  .split(',')
  .map((r): Rung => {
    if (!(ALL_RUNGS as readonly string[]).includes(r)) throw new Error(`--rungs: unknown rung "${r}" (the rungs: ${ALL_RUNGS.join(', ')})`);
    return r as Rung;
  });

/** A chunk as the service presents one in a V1 answer (its fields and their sizes; values made up where SciFact has none). */
function chunkJson(docId: string, text: string, datasetId: string): string {
  const at = new Date(Date.UTC(2026, 10, 29)).toISOString().replace('Z', '');
  return JSON.stringify({
    id: randomUUID(),
    link: null,
    qdrant_point_id: randomUUID(),
    created_at: at,
    updated_at: at,
    chunk_html: text,
    metadata: null,
    tracking_id: docId,
    time_stamp: null,
    dataset_id: datasetId,
    weight: 0,
    location: null,
    image_urls: null,
    tag_set: [],
    num_value: null,
  });
}

/** A V1 search answer from the hits' chunk JSON and scores. */
function answer(chunks: readonly Buffer[], scores: ArrayLike<number>): Buffer {
  const parts: Buffer[] = [Buffer.from('{"score_chunks":[')];
  chunks.forEach((c, i) => {
    parts.push(Buffer.from(`${i > 0 ? ',' : ''}{"metadata":[`), c, Buffer.from(`],"highlights":[],"score":${scores[i]}}`));
  });
  parts.push(Buffer.from('],"total_chunk_pages":-1}'));
  return Buffer.concat(parts);
}

/** Reads a request's body to its end. */
function body(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/**
 * What answers a search in the floor rungs: SciFact indexed in this process, the hits' chunk JSON
 * from memory (`memory`), from memory after a `PRAGMA data_version` of a SQLite database holding
 * them (`pin`: what the service's read caches cost when they hit), or from its rows (`rows`); the
 * database is created in `dbDir`.
 */
function searcher(data: ReturnType<typeof loadSciFact>, chunks: 'memory' | 'pin' | 'rows', dbDir: string): (raw: Buffer) => Buffer {
  const datasetId = randomUUID();
  const index = new Bm25Index({});
  const json = new Map<string, Buffer>();
  for (const d of data.docs) {
    index.upsert(d.id, `${d.title} ${d.text}`);
    json.set(d.id, Buffer.from(chunkJson(d.id, `${d.title} ${d.text}`, datasetId)));
  }
  let rowsOf: (ids: readonly string[]) => Buffer[] = (ids) => ids.map((id) => json.get(id)!);
  if (chunks !== 'memory') {
    const db = new Database(path.join(dbDir, 'floor.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE chunks (id TEXT PRIMARY KEY, json TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO chunks (id, json) VALUES (?, ?)');
    db.transaction(() => {
      for (const [id, bytes] of json) insert.run(id, bytes.toString('utf8'));
    })();
    if (chunks === 'rows') json.clear();
    const version = db.prepare('PRAGMA data_version').pluck();
    const row = db.prepare('SELECT json FROM chunks WHERE id = ?').pluck();
    rowsOf = (ids) => {
      version.get();
      return chunks === 'rows' ? ids.map((id) => Buffer.from(row.get(id) as string)) : ids.map((id) => json.get(id)!);
    };
  }
  return (raw) => {
    const { query } = JSON.parse(raw.toString('utf8')) as { query: string };
    const terms = index.analyzer.analyze(query);
    const hits = index.search(terms, 10, { ...index.stats(), docFreqs: index.termDocFreqs(terms) });
    return answer(rowsOf(hits.chunkIds), hits.scores);
  };
}

/** The server of a floor rung (this file with `--role server`, its database in `dbDir`): prints its port when it listens. */
function serve(rung: Exclude<Rung, 'service' | 'service-nojobs'>, dbDir: string): void {
  const data = loadSciFact();
  // The bare server keeps only the bytes: the index that built them is garbage once they are.
  const bare = rung === 'bare' ? searcher(data, 'memory', dbDir)(Buffer.from(searchBodies([data.queries.values().next().value ?? 'cancer'])[0]!)) : null;
  const answerFor = rung === 'bare' ? () => bare! : searcher(data, rung === 'score' ? 'memory' : rung === 'pin' ? 'pin' : 'rows', dbDir);
  let server: http.Server;
  if (rung === 'koa') {
    const app = new Koa();
    const router = new Router();
    router.post('/api/chunk/search', async (ctx) => {
      ctx.type = 'application/json';
      ctx.body = answerFor(await body(ctx.req));
    });
    app.use(router.routes());
    const handle = app.callback();
    server = http.createServer((req, res) => void handle(req, res));
  } else {
    server = http.createServer((req, res) => {
      body(req).then(
        (raw) => {
          const bytes = answerFor(raw);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
          res.end(bytes);
        },
        () => res.destroy(),
      );
    });
  }
  server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
}

/** A rung, up: its URL, the headers a search needs, its processes (for CPU) and how to stop it. */
interface UpRung {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly pids: Readonly<Record<string, number>>;
  /** Called around the timed window (the job workers stopped for `service-nojobs`). */
  readonly during?: { before(): void; after(): void };
  stop(): Promise<void>;
}

async function startRung(rung: Rung, docs: ReturnType<typeof loadSciFact>['docs']): Promise<UpRung> {
  if (rung === 'service' || rung === 'service-nojobs') {
    const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false' });
    try {
      const { headers } = await ingestSciFact(stack.baseUrl, stack.adminKey, docs);
      const jobs = stack.pids.jobs;
      return {
        url: stack.baseUrl,
        headers,
        pids: { http: stack.pids.facade, jobs, redis: stack.pids.redis },
        during: rung === 'service-nojobs' ? { before: () => process.kill(jobs, 'SIGSTOP'), after: () => process.kill(jobs, 'SIGCONT') } : undefined,
        stop: () => stack.stop(),
      };
    } catch (err) {
      await stack.stop();
      throw err;
    }
  }
  // This process owns the server's database directory: a server ended by a signal runs no exit handler.
  const dbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-search-floor-'));
  const proc: ChildProcess = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--role', 'server', '--rung', rung, '--dir', dbDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    await exited;
    fs.rmSync(dbDir, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<string>((resolve, reject) => {
      proc.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim()));
      void exited.then(() => reject(new Error(`the ${rung} server exited before it listened`)));
    });
    return { url: `http://127.0.0.1:${port}`, headers: {}, pids: { http: proc.pid! }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One rung's timed window: wrk's distribution and the CPU (µs) its processes spent per search. */
interface Window {
  readonly dist: WrkDistribution;
  readonly cpu: Record<string, number>;
  readonly answerBytes: number;
}

async function measure(rung: Rung, up: UpRung, bodies: readonly string[]): Promise<Window> {
  const res = await fetch(`${up.url}/api/chunk/search`, { method: 'POST', headers: { 'content-type': 'application/json', ...up.headers }, body: bodies[0] });
  const answerBytes = (await res.arrayBuffer()).byteLength;
  if (!res.ok) throw new Error(`${rung}: search answered ${res.status}`);
  // Untimed first: code compiled, caches filled, as in search-latency.
  wrkDistribution(up.url, up.headers, bodies, CONNECTIONS, 3);
  up.during?.before();
  try {
    const before = Object.fromEntries(Object.entries(up.pids).map(([name, pid]) => [name, cpuSeconds(pid) ?? Number.NaN]));
    const dist = wrkDistribution(up.url, up.headers, bodies, CONNECTIONS, SECONDS);
    const cpu = Object.fromEntries(Object.entries(up.pids).map(([name, pid]) => [name, (((cpuSeconds(pid) ?? Number.NaN) - before[name]!) * 1e6) / dist.requests]));
    if (dist.non2xx > 0) throw new Error(`${rung}: ${dist.non2xx} answers were not 2xx`);
    return { dist, cpu, answerBytes };
  } finally {
    up.during?.after();
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const ms = (us: number): string => (us / 1000).toFixed(2);

async function main(): Promise<void> {
  if (!ensureWrk()) throw new Error('wrk is not installed and could not be (apt-get install wrk)');
  const data = loadSciFact();
  const texts = [...loadQrels('test').keys()].map((id) => data.queries.get(id)!);
  const bodies = searchBodies(texts);
  const windows = new Map<Rung, Window[]>(RUNGS.map((r) => [r, []]));
  const load = (): string => os.loadavg()[0]!.toFixed(2);
  console.log(`machine: ${machine()}`);
  console.log(`data: SciFact BEIR test split, ${data.docs.length} docs, ${texts.length} queries in turn; bm25, page_size 10; wrk ${CONNECTIONS} connection${CONNECTIONS === 1 ? '' : 's'}, ${SECONDS} s per window after 3 s untimed, ${ROUNDS} rounds, rungs alternated`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const rung of RUNGS) {
      const up = await startRung(rung, data.docs);
      try {
        const loadBefore = load();
        const w = await measure(rung, up, bodies);
        windows.get(rung)!.push(w);
        const d = w.dist;
        console.log(
          `round ${round + 1} ${rung.padEnd(14)} p50 ${ms(d.p50)} p90 ${ms(d.p90)} p99 ${ms(d.p99)} p99.9 ${ms(d.p999)} max ${ms(d.max)} ms, ${d.rps.toFixed(0)} req/s, CPU µs/search ${Object.entries(w.cpu)
            .map(([n, us]) => `${n} ${us.toFixed(0)}`)
            .join(' ')}, answer ${w.answerBytes} B, load ${loadBefore}`,
        );
      } finally {
        await up.stop();
      }
    }
  }
  console.log(`\nmedians over ${ROUNDS} rounds (ms; CPU µs per search):`);
  console.log('| rung | p50 | p90 | p99 | p99.9 | max | req/s | CPU per search | answer bytes |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [rung, ws] of windows) {
    const m = (f: (d: WrkDistribution) => number): number => median(ws.map((w) => f(w.dist)));
    const cpu = Object.keys(ws[0]?.cpu ?? {})
      .map((n) => `${n} ${median(ws.map((w) => w.cpu[n]!)).toFixed(0)}`)
      .join(', ');
    console.log(`| ${rung} | ${ms(m((d) => d.p50))} | ${ms(m((d) => d.p90))} | ${ms(m((d) => d.p99))} | ${ms(m((d) => d.p999))} | ${ms(m((d) => d.max))} | ${m((d) => d.rps).toFixed(0)} | ${cpu} | ${ws[0]?.answerBytes ?? 0} |`);
  }
}

if (process.argv.includes('--role')) serve(arg('--rung', 'bare') as Exclude<Rung, 'service' | 'service-nojobs'>, arg('--dir', os.tmpdir()));
else await main();
