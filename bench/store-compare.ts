/**
 * The two stores side by side through the HTTP API: ingest rate (chunks/s, SciFact and a
 * synthetic corpus, batches of 120 from 2 clients) and get-by-ids latency (POST /api/chunks with
 * 10 ids, one client), on SQLite (the data directory) and on PostgreSQL (a cluster of its own from
 * deploy/postgres.sh on loopback, fsync on). Issue 12's goal: PostgreSQL ingest within 1.5x of
 * SQLite. With --timing the service sends Server-Timing (QUARRY_SERVER_TIMING) and the median of
 * each stage of POST /api/chunk (access, parse, store, index, embed) and of the gets is printed
 * per store and phase.
 *
 *   npm run build && npx tsx bench/store-compare.ts [--synthetic 1000000] [--clients 2] [--stores sqlite,postgres] [--timing]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { quantile } from './lib/metrics.js';
import { loadSciFact, repoRoot } from './lib/scifact.js';
import { machine, post, startBenchStack, type BenchStack } from './lib/spawn-stack.js';
import { syntheticCorpus } from './lib/synthetic.js';

const { values: args } = parseArgs({
  options: {
    synthetic: { type: 'string', default: '1000000' },
    clients: { type: 'string', default: '2' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    timing: { type: 'boolean', default: false },
  },
});
const SYNTHETIC_DOCS = Number(args.synthetic);
const CLIENTS = Number(args.clients);
const STORES = args.stores.split(',') as ('sqlite' | 'postgres')[];
const BATCH = 120;
const GETS = 2000;
const TIMING = args.timing;

interface Figures {
  scifactRate: number;
  syntheticRate: number;
  getP50Us: number;
  getP99Us: number;
  /** Phase → stage → durations (ms) from Server-Timing, with --timing. */
  stages: Map<string, Map<string, number[]>>;
}

/** Adds a response's Server-Timing stages to `into` (stage → durations in ms). */
function noteTiming(res: Response, into: Map<string, number[]> | undefined): void {
  if (!into) return;
  for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
    const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (!m) continue;
    const list = into.get(m[1]!) ?? [];
    list.push(Number(m[2]));
    into.set(m[1]!, list);
  }
}

/** POSTs a JSON body; throws on a non-2xx answer; notes its stages when asked. */
async function postTimed(url: string, body: unknown, headers: Record<string, string>, stages?: Map<string, number[]>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${new URL(url).pathname}: ${res.status} ${text}`);
  noteTiming(res, stages);
}

/** Sends batches from `clients` concurrent loops; returns chunks/s. */
async function ingest(
  stack: BenchStack,
  headers: Record<string, string>,
  batches: Iterable<unknown[]>,
  label: string,
  stages?: Map<string, number[]>,
): Promise<number> {
  const it = batches[Symbol.iterator]();
  let sent = 0;
  const t0 = performance.now();
  let lastReport = t0;
  const loop = async (): Promise<void> => {
    for (;;) {
      const next = it.next();
      if (next.done) return;
      await postTimed(`${stack.baseUrl}/api/chunk`, next.value, headers, stages);
      sent += next.value.length;
      const now = performance.now();
      if (now - lastReport > 10_000) {
        lastReport = now;
        process.stderr.write(`  ${label}: ${sent} chunks, ${Math.round(sent / ((now - t0) / 1000))}/s\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, loop));
  return sent / ((performance.now() - t0) / 1000);
}

function* inBatches<T, U>(items: Iterable<T>, map: (t: T) => U): Generator<U[]> {
  let batch: U[] = [];
  for (const item of items) {
    batch.push(map(item));
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function dataset(stack: BenchStack, name: string): Promise<Record<string, string>> {
  const admin = { authorization: stack.adminKey };
  const org = await post(stack.baseUrl, '/api/organization', { name }, admin);
  const ds = await post(stack.baseUrl, '/api/dataset', { dataset_name: name }, { ...admin, 'tr-organization': org.id });
  return { ...admin, 'tr-dataset': ds.id as string };
}

async function measure(kind: 'sqlite' | 'postgres', pgUrl: string | null): Promise<Figures> {
  // Embedding off: this measures the store path, not the model.
  const stack = await startBenchStack({
    QUARRY_EMBED_JOBS: 'false',
    ...(pgUrl ? { QUARRY_DATABASE_URL: pgUrl } : {}),
    ...(TIMING ? { QUARRY_SERVER_TIMING: 'true' } : {}),
  });
  const stages = new Map<string, Map<string, number[]>>();
  const phase = (name: string): Map<string, number[]> | undefined => {
    if (!TIMING) return undefined;
    const m = new Map<string, number[]>();
    stages.set(name, m);
    return m;
  };
  try {
    const scifact = loadSciFact();
    const sh = await dataset(stack, 'scifact');
    const scifactRate = await ingest(stack, sh, inBatches(scifact.docs, (d) => ({ tracking_id: d.id, chunk_html: `${d.title} ${d.text}` })), `${kind} scifact`, phase('SciFact ingest'));
    const ids = scifact.docs.map((d) => d.id);
    const times: number[] = [];
    const getStages = phase('get 10 by tracking id');
    for (let i = 0; i < GETS; i++) {
      const pick = Array.from({ length: 10 }, (_, j) => ids[(i * 37 + j * 101) % ids.length]!);
      const t = performance.now();
      const res = await fetch(`${stack.baseUrl}/api/chunks/tracking`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...sh },
        body: JSON.stringify({ tracking_ids: pick }),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`get by tracking ids: ${res.status}`);
      if (i >= 200) noteTiming(res, getStages);
      if (i >= 200) times.push((performance.now() - t) * 1000);
    }
    times.sort((a, b) => a - b);
    const yh = await dataset(stack, 'synthetic');
    const syntheticRate = await ingest(
      stack,
      yh,
      inBatches(syntheticCorpus({ docs: SYNTHETIC_DOCS }), (d) => ({ tracking_id: d.id, chunk_html: d.text, tag_set: d.tags })),
      `${kind} synthetic`,
      phase('synthetic ingest'),
    );
    return { scifactRate, syntheticRate, getP50Us: quantile(times, 0.5), getP99Us: quantile(times, 0.99), stages };
  } finally {
    await stack.stop();
  }
}

const script = path.join(repoRoot, 'deploy/postgres.sh');
const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-pg-'));
let pgUrl: string | null = null;
try {
  if (STORES.includes('postgres')) {
    const port = execFileSync(script, ['free-port'], { encoding: 'utf8' }).trim();
    execFileSync(script, ['start', port, path.join(pgDir, 'cluster')], { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync(script, ['createdb', port, 'quarry'], { stdio: 'inherit' });
    pgUrl = execFileSync(script, ['url', port, 'quarry'], { encoding: 'utf8' }).trim();
  }
  const results: Partial<Record<'sqlite' | 'postgres', Figures>> = {};
  for (const kind of STORES) results[kind] = await measure(kind, kind === 'postgres' ? pgUrl : null);
  console.log(`machine: ${machine()}`);
  console.log(`data: SciFact corpus (5,183 docs) and ${SYNTHETIC_DOCS.toLocaleString('en')} synthetic docs (bench/lib/synthetic.ts), batches of ${BATCH}, ${CLIENTS} clients; get: POST /api/chunks/tracking with 10 ids, 1 client`);
  console.log('| store | SciFact ingest | synthetic ingest | get 10 by tracking id p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const kind of STORES) {
    const r = results[kind]!;
    console.log(`| ${kind} | ${Math.round(r.scifactRate)} chunks/s | ${Math.round(r.syntheticRate)} chunks/s | ${Math.round(r.getP50Us)} µs | ${Math.round(r.getP99Us)} µs |`);
  }
  if (results.sqlite && results.postgres) {
    console.log(
      `PostgreSQL / SQLite: SciFact ingest ${(results.postgres.scifactRate / results.sqlite.scifactRate).toFixed(2)}x, synthetic ${(results.postgres.syntheticRate / results.sqlite.syntheticRate).toFixed(2)}x, get p50 ${(results.postgres.getP50Us / results.sqlite.getP50Us).toFixed(2)}x`,
    );
  }
  if (TIMING) {
    console.log('\nServer-Timing stages, median ms (requests)');
    console.log(`| phase | stage | ${STORES.join(' | ')} |`);
    console.log(`|---|---|${STORES.map(() => '---|').join('')}`);
    const phases = [...new Set(STORES.flatMap((k) => [...results[k]!.stages.keys()]))];
    for (const ph of phases) {
      const names = [...new Set(STORES.flatMap((k) => [...(results[k]!.stages.get(ph)?.keys() ?? [])]))];
      for (const name of names) {
        const cells = STORES.map((k) => {
          const d = [...(results[k]!.stages.get(ph)?.get(name) ?? [])].sort((a, b) => a - b);
          return d.length === 0 ? '-' : `${quantile(d, 0.5).toFixed(2)} (${d.length})`;
        });
        console.log(`| ${ph} | ${name} | ${cells.join(' | ')} |`);
      }
    }
  }
} finally {
  execFileSync(script, ['stop', path.join(pgDir, 'cluster')], { stdio: 'ignore' });
  fs.rmSync(pgDir, { recursive: true, force: true });
}
