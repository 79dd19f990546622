/**
 * quarry's shard against native search engines (a benchmark, not a test): Xapian 1.4 (Debian
 * python3-xapian), SQLite FTS5 (better-sqlite3) and RediSearch 1.2 (Debian redis-redisearch), each
 * in a process of its own, on the same documents and query texts. Builds one engine after another,
 * then alternates query rounds between them (every engine once per round, the order rotating,
 * `--reps` rounds pooled) so that the machine's drift falls on all of them. Reports build time and
 * rate, memory, per-query latency p50/p99/mean timed inside each engine's process, single-thread
 * QPS, nDCG@10 on SciFact and quarry/peer ratios. bm25s (PyPI only) is reported and skipped when
 * it is not installed. Missing Debian packages are installed with apt-get (root or sudo).
 *
 *   npx tsx bench/compare-native.ts                                    # SciFact
 *   npx tsx bench/compare-native.ts --data synthetic --docs 1000000
 *   options: --queries N (synthetic, default 100)  --reps N (rounds, default 10 SciFact, 3 synthetic)
 *            --builds N (builds per engine, each in a fresh process, build time = their median;
 *            default 3 SciFact, 1 synthetic)
 *            --engines quarry,xapian,fts5,redisearch,bm25s  --xapian-stemmer porter|english
 *            --redisearch-scorer BM25|TFIDF|TFIDF.DOCNORM|DISMAX  --json FILE (the figures, machine-readable)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sciFactData, syntheticData } from './lib/compare-data.js';
import { meanOverQrels, ndcgAtK, quantile, type Qrels } from './lib/metrics.js';
import { writeJsonFigures } from './lib/json-figures.js';
import { bm25sStatus, fts5Peer, quarryPeer, rediSearchPeer, xapianPeer, type BuildFigures, type Peer } from './lib/native-peers.js';
import { repoRoot } from './lib/scifact.js';
import { machine } from './lib/spawn-stack.js';

const K = 10;
const MiB = 2 ** 20;
const ENGINES = ['quarry', 'xapian', 'fts5', 'redisearch', 'bm25s'] as const;

/** Everything measured of one engine. */
interface Measured {
  peer: Peer;
  /** The last build's figures, with the median build time of {@link buildEach}. */
  build: BuildFigures;
  /** Build time of each build, in ms (each in a fresh process). */
  buildEach: number[];
  lat: number[];
  clientLat: number[];
  queries: number;
  wallUs: number;
  ids: string[][];
}

const us = (x: number) => (x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const mib = (b: number) => (b / MiB).toFixed(1);

/** The median of `xs` (the mean of the two middle values of an even count). */
function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function stats(lat: readonly number[]): { p50: number; p99: number; mean: number } {
  const sorted = Float64Array.from(lat).sort();
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), mean: lat.reduce((s, x) => s + x, 0) / Math.max(1, lat.length) };
}

/** Mean share of the reference's top 10 found in this engine's top 10 (queries where the reference found nothing are left out). */
function overlap(mine: readonly string[][], ref: readonly string[][]): number {
  const shares = ref.flatMap((r, i) => (r.length === 0 ? [] : [r.filter((id) => (mine[i] ?? []).includes(id)).length / r.length]));
  return shares.reduce((s, x) => s + x, 0) / Math.max(1, shares.length);
}

function revision(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  try {
    const dirty = git('status', '--porcelain', '--', 'workers', 'core/domain') !== '';
    return git('rev-parse', '--short', 'HEAD') + (dirty ? ' + uncommitted changes under workers/ or core/domain/' : '');
  } catch {
    return 'unknown';
  }
}

/** Each engine's pooled figures: latency (µs), QPS and nDCG@10 (null without qrels). */
function rowsOf(all: readonly Measured[], qrels: Qrels | null, queryIds: readonly string[]) {
  const position = new Map(queryIds.map((id, i) => [id, i]));
  const ndcg = (m: Measured) => (qrels === null ? null : meanOverQrels(qrels, (qid, judged) => ndcgAtK(m.ids[position.get(qid) ?? -1] ?? [], judged, K)));
  return all.map((m) => ({ m, ...stats(m.lat), qps: (m.queries / m.wallUs) * 1e6, ndcg: ndcg(m) }));
}

/** The figures of every engine for `--json` (sizes in bytes, times in µs unless named ms). */
function jsonRows(all: readonly Measured[], docCount: number, qrels: Qrels | null, queryIds: readonly string[]): Record<string, unknown>[] {
  const quarry = all.find((m) => m.peer.name === 'quarry');
  return rowsOf(all, qrels, queryIds).map((r) => ({
    engine: r.m.peer.name,
    version: r.m.peer.version,
    buildMs: r.m.build.buildMs,
    buildMsEach: r.m.buildEach,
    docsPerS: (docCount / r.m.build.buildMs) * 1000,
    rssGrowthBytes: r.m.build.rssGrowth,
    indexBytes: r.m.build.indexBytes,
    indexWhat: r.m.peer.indexWhat,
    p50Us: r.p50,
    p99Us: r.p99,
    meanUs: r.mean,
    qps: r.qps,
    ndcg10: r.ndcg,
    overlapVsQuarry: quarry === undefined || r.m === quarry ? null : overlap(r.m.ids, quarry.ids),
    client: r.m.clientLat.length > 0 ? stats(r.m.clientLat) : null,
  }));
}

function report(all: readonly Measured[], docCount: number, qrels: Qrels | null, queryIds: readonly string[]): void {
  const quarry = all.find((m) => m.peer.name === 'quarry');
  const rows = rowsOf(all, qrels, queryIds);

  console.log('\n| engine | build s | docs/s | RSS growth MiB | index MiB | p50 µs | p99 µs | mean µs | QPS | nDCG@10 | overlap@10 vs quarry |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const b = r.m.build;
    const qpsMark = r.m.clientLat.length > 0 ? ' †' : '';
    console.log(
      `| ${r.m.peer.name} | ${(b.buildMs / 1000).toFixed(2)} | ${int((docCount / b.buildMs) * 1000)} | ${mib(b.rssGrowth)} | ${mib(b.indexBytes)} | ` +
        `${us(r.p50)} | ${us(r.p99)} | ${us(r.mean)} | ${r.qps < 10 ? r.qps.toFixed(1) : int(r.qps)}${qpsMark} | ${r.ndcg === null ? '-' : r.ndcg.toFixed(4)} | ` +
        `${quarry === undefined || r.m === quarry ? '-' : `${(overlap(r.m.ids, quarry.ids) * 100).toFixed(1)}%`} |`,
    );
  }
  console.log('\nindex MiB is, per engine:');
  for (const m of all) console.log(`  ${m.peer.name}: ${m.peer.indexWhat}`);
  console.log('latency and QPS are timed, per engine:');
  for (const m of all) console.log(`  ${m.peer.name}: ${m.peer.timing}`);
  for (const m of all.filter((x) => x.clientLat.length > 0)) {
    const c = stats(m.clientLat);
    console.log(`† ${m.peer.name} as its client saw it (ioredis over loopback: RESP, the socket hop and the client's work included): p50 ${us(c.p50)} µs, p99 ${us(c.p99)} µs, mean ${us(c.mean)} µs; its QPS is the client's`);
  }
  for (const m of all) for (const n of m.build.notes) console.log(`${m.peer.name}: ${n}`);
  if (all.some((m) => m.buildEach.length > 1)) {
    console.log('build s is the median of each engine\'s builds, each in a fresh process (the other columns are its last build\'s):');
    for (const m of all) console.log(`  ${m.peer.name}: ${m.buildEach.map((ms) => (ms / 1000).toFixed(3)).join(', ')} s`);
  }

  const q = rows.find((r) => r.m === quarry);
  const others = rows.filter((r) => r.m !== quarry);
  if (q === undefined || others.length === 0) return;
  console.log("\nquarry / peer (✓ marks a ratio in quarry's favour: below 1 for costs, above 1 for nDCG@10):");
  console.log('\n| vs | build time | RSS growth | index size | p50 | p99 | mean | 1 / QPS | nDCG@10 |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const cell = (mine: number, theirs: number, higherIsBetter = false) => {
    const ratio = mine / theirs;
    const good = higherIsBetter ? ratio > 1 : ratio < 1;
    const digits = ratio < 0.1 || Math.abs(ratio - 1) < 0.01 ? 3 : 2;
    return `${ratio.toFixed(digits)} ${good ? '✓' : '✗'}`;
  };
  for (const o of others) {
    const qb = q.m.build;
    const ob = o.m.build;
    console.log(
      `| ${o.m.peer.name} | ${cell(qb.buildMs, ob.buildMs)} | ${cell(qb.rssGrowth, ob.rssGrowth)} | ${cell(qb.indexBytes, ob.indexBytes)} | ` +
        `${cell(q.p50, o.p50)} | ${cell(q.p99, o.p99)} | ${cell(q.mean, o.mean)} | ${cell(o.qps, q.qps)} | ` +
        `${q.ndcg === null || o.ndcg === null ? '-' : cell(q.ndcg, o.ndcg, true)} |`,
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      engines: { type: 'string', default: ENGINES.join(',') },
      data: { type: 'string', default: 'scifact' },
      docs: { type: 'string' },
      queries: { type: 'string' },
      reps: { type: 'string' },
      'xapian-stemmer': { type: 'string', default: 'porter' },
      'redisearch-scorer': { type: 'string', default: 'BM25' },
      builds: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const wanted = values.engines.split(',').map((e) => e.trim().toLowerCase());
  for (const e of wanted) if (!(ENGINES as readonly string[]).includes(e)) throw new Error(`unknown engine ${e}; known: ${ENGINES.join(', ')}`);
  const synthetic = values.data === 'synthetic';
  if (!synthetic && values.data !== 'scifact') throw new Error(`--data must be scifact or synthetic, not ${values.data}`);
  if (!synthetic && (values.docs ?? values.queries) !== undefined) throw new Error('--docs and --queries are for --data synthetic (SciFact runs whole, with its test queries)');
  const reps = Number(values.reps ?? (synthetic ? 3 : 10));
  const builds = Number(values.builds ?? (synthetic ? 1 : 3));
  if (!(Number.isInteger(builds) && builds >= 1)) throw new Error(`--builds must be a whole number of at least 1, not ${values.builds}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-native-'));
  const peers: Peer[] = [];
  const cleanUp = async () => {
    for (const p of peers.splice(0)) await p.close().catch((e: unknown) => console.error(`closing ${p.name}: ${String(e)}`));
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));
  try {
    const data = synthetic ? syntheticData(Number(values.docs ?? 1_000_000), Number(values.queries ?? 100)) : sciFactData();
    // Each engine reads the documents from this file, {id, text} a line (the tags play no part here).
    const docsFile = path.join(tmp, 'docs.jsonl');
    const out = fs.createWriteStream(docsFile);
    for (const d of JSON.parse(data.docsJson.toString('utf8')) as { id: string; text: string }[]) {
      if (!out.write(`${JSON.stringify({ id: d.id, text: d.text })}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    const queriesFile = path.join(tmp, 'queries.json');
    fs.writeFileSync(queriesFile, JSON.stringify(data.queries.map((q) => q.text)));

    console.log(`command: npx tsx bench/compare-native.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
    const loadAtStart = os.loadavg();
    console.log(`machine: ${machine()}; load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`data: ${data.description}`);
    console.log(
      `method: each engine in a process of its own, built one after another (the others idle), ${builds} time${builds > 1 ? 's, each in a fresh process (build time = the median)' : ''}; then ${reps} rounds, each running every engine once over the ` +
        `${data.queries.length} queries (the engine order rotating by one each round), figures pooled over the rounds after one untimed warm-up round each; ` +
        `latency = one query text -> top ${K} ids, timed inside the engine's process (no IPC); QPS = queries / wall time of the rounds, one query at a time; ` +
        `RSS growth = the engine process's RSS after the build minus before it; build time = the engine's own calls (reading and parsing the documents file outside it)`,
    );

    const skipped: string[] = [];
    /** A fresh process of engine `name` for build number `b` (its own directory, if it keeps one), or why it cannot run. */
    const start = async (name: string, b: number): Promise<Peer | string> => {
      if (name === 'quarry') return quarryPeer(revision());
      if (name === 'fts5') return fts5Peer();
      if (name === 'xapian') return xapianPeer(path.join(tmp, `xapian-${b}`), values['xapian-stemmer']);
      if (name === 'redisearch') {
        fs.mkdirSync(path.join(tmp, `redis-${b}`));
        return rediSearchPeer(path.join(tmp, `redis-${b}`), values['redisearch-scorer']);
      }
      return `bm25s: ${bm25sStatus()}`;
    };
    // Each build in a fresh process, one engine after another, every other engine's process idle
    // (started and answering: a peer spawned beside another's timed build used to load tsx, Python
    // or Xapian on the same 2 cores). The last build of each engine is the one its query rounds use.
    const measured: Measured[] = [];
    const buildTimes = new Map<Peer['name'], number[]>();
    const unavailable: string[] = [];
    for (let b = 0; b < builds; b++) {
      for (const name of wanted) {
        if (unavailable.includes(name)) continue;
        const made = await start(name, b);
        if (typeof made === 'string') {
          skipped.push(made.startsWith('bm25s') ? made : `${name}: ${made}`);
          unavailable.push(name);
          continue;
        }
        peers.push(made);
        await made.ready();
        if (b === 0) console.log(`engine: ${made.name} ${made.version}: ${made.config}`);
        console.log(`  building ${made.name}${builds > 1 ? ` (${b + 1} of ${builds})` : ''}...`);
        const build = await made.build(docsFile, queriesFile);
        console.log(`  ${made.name}: built in ${(build.buildMs / 1000).toFixed(2)} s, RSS +${mib(build.rssGrowth)} MiB, index ${mib(build.indexBytes)} MiB`);
        const times = buildTimes.get(made.name) ?? [];
        times.push(build.buildMs);
        buildTimes.set(made.name, times);
        const at = measured.findIndex((m) => m.peer.name === made.name);
        const m: Measured = { peer: made, build, buildEach: times, lat: [], clientLat: [], queries: 0, wallUs: 0, ids: [] };
        if (at < 0) {
          measured.push(m);
          continue;
        }
        const before = measured[at]!.peer;
        await before.close();
        peers.splice(peers.indexOf(before), 1);
        measured[at] = m;
      }
    }
    for (const s of skipped) console.log(`SKIPPED ${s}`);
    // The build time of each engine is the median of its builds (the machine's speed swings by a
    // quarter within minutes, more than one cold build can tell apart); the rest is its last build's.
    for (const m of measured) m.build = { ...m.build, buildMs: median(m.buildEach) };
    for (const m of measured) m.ids = (await m.peer.round(true)).ids ?? [];
    for (let r = 0; r < reps; r++) {
      for (let j = 0; j < measured.length; j++) {
        const m = measured[(r + j) % measured.length]!;
        const round = await m.peer.round(false);
        m.lat.push(...round.lat);
        m.clientLat.push(...(round.clientLat ?? []));
        m.queries += round.lat.length;
        m.wallUs += round.wallUs;
      }
      process.stdout.write(`  round ${r + 1}/${reps} done\n`);
    }
    const queryIds = data.queries.map((q) => q.id);
    report(measured, data.docCount, data.qrels, queryIds);
    for (const s of skipped) console.log(`SKIPPED ${s}`);
    writeJsonFigures(values.json, 'compare-native', {
      data: data.description,
      docCount: data.docCount,
      queryCount: data.queries.length,
      reps,
      revision: revision(),
      loadAtStart,
      engines: jsonRows(measured, data.docCount, data.qrels, queryIds),
      skipped,
    });
  } finally {
    await cleanUp();
  }
}

await main();
