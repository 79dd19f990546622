/**
 * The engines of bench/compare-native.ts behind one interface: build from a JSONL file of
 * `{id, text}`, then answer query rounds (every query text -> top 10 ids, each timed inside the
 * engine's own process). Each engine lives in a process of its own for the whole run so that the
 * query rounds can alternate between engines and each one's RSS growth is its own:
 *   quarry, fts5  lib/native-node-worker.ts (Node, better-sqlite3 for FTS5)
 *   xapian        lib/native-xapian.py (Debian's /usr/bin/python3 with python3-xapian)
 *   redisearch    redis-server with Debian's redisearch.so, driven from this process by ioredis
 * Missing Debian packages are installed with apt-get, as deploy/redis.sh installs Redis.
 */
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { aptInstall } from './apt-install.js';
import { BM25, packageVersion } from './compare-engines.js';
import { repoRoot } from './scifact.js';
import { freePort } from './spawn-stack.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Debian's interpreter: python3-xapian installs into its dist-packages, not into a pyenv or venv python. */
export const DEBIAN_PYTHON = '/usr/bin/python3';

/** Where Debian's redis-redisearch package puts the module (`dpkg -L redis-redisearch`). */
export const REDISEARCH_MODULE = '/usr/lib/redis/modules/redisearch.so';

/** Figures of one build. Sizes in bytes. */
export interface BuildFigures {
  /** Time inside the engine (see each engine's `buildNote`). */
  buildMs: number;
  /** RSS of the engine's process after the build minus before it. */
  rssGrowth: number;
  /** The engine's own measure of its index (see `indexWhat`). */
  indexBytes: number;
  /** Extra figures for the report (one line each). */
  notes: string[];
}

/** Figures of one pass over the queries. */
export interface RoundFigures {
  /** Microseconds per query, measured inside the engine's process, in query order. */
  lat: number[];
  /** Wall time of the whole pass, in the process that issued the queries (us). */
  wallUs: number;
  /** Top-10 ids per query when asked for. */
  ids: string[][] | null;
  /** Microseconds per query as the client saw them, when the engine is behind a socket. */
  clientLat?: number[];
}

/** A running engine. */
export interface Peer {
  readonly name: string;
  readonly version: string;
  readonly config: string;
  /** What `indexBytes` measures. */
  readonly indexWhat: string;
  /** Where the latency and QPS figures are taken. */
  readonly timing: string;
  /**
   * Resolves once the engine's process has started (loaded its code, modules, interpreter) and
   * idles: compare-native waits for every engine before the first build, so that no engine's
   * start-up runs on the cores beside another's timed build.
   */
  ready(): Promise<void>;
  build(docsFile: string, queriesFile: string): Promise<BuildFigures>;
  round(wantIds: boolean): Promise<RoundFigures>;
  close(): Promise<void>;
}

/** Runs `check`; when it fails, installs `packages` once and runs it again. Returns null or why the engine cannot run. */
function ensure(check: () => boolean, packages: readonly string[]): string | null {
  if (check()) return null;
  const failed = aptInstall(packages);
  if (failed !== null) return failed;
  return check() ? null : `still missing after apt-get install -y ${packages.join(' ')}`;
}

function pythonOk(code: string): boolean {
  return existsSync(DEBIAN_PYTHON) && spawnSync(DEBIAN_PYTHON, ['-c', code], { stdio: 'ignore' }).status === 0;
}

/** Version of an installed Debian package, or '?'. */
function debVersion(pkg: string): string {
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '?';
}

/** VmRSS of a process, bytes. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) * 1024;
}

/** A child that answers one JSON line on stdout per JSON line written to its stdin. */
class LineWorker {
  private readonly waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  private exited = false;

  constructor(
    private readonly label: string,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stderr.on('data', (b: Buffer) => process.stderr.write(`[${label}] ${b.toString('utf8')}`));
    readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      const w = this.waiting.shift();
      if (w === undefined) return;
      let reply: { error?: string };
      try {
        reply = JSON.parse(line) as { error?: string };
      } catch {
        w.reject(new Error(`${label}: not a JSON reply: ${line.slice(0, 200)}`));
        return;
      }
      if (reply.error !== undefined) w.reject(new Error(`${label}: ${reply.error}`));
      else w.resolve(reply);
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const w of this.waiting.splice(0)) w.reject(new Error(`${label} exited (${code ?? signal}) before answering`));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  request<T>(req: object): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.label} has exited`));
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.write(`${JSON.stringify({ cmd: 'quit' })}\n`);
    this.child.stdin.end();
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    if (!this.exited) this.child.kill();
  }
}

interface WorkerBuild {
  buildMs: number;
  rssGrowth: number;
  heapGrowth?: number;
  dbBytes: number | null;
  version?: string;
}

/** A peer served by a LineWorker. */
function workerPeer(
  w: LineWorker,
  meta: Pick<Peer, 'name' | 'version' | 'config' | 'indexWhat'>,
  indexBytes: (b: WorkerBuild) => number,
  notes: (b: WorkerBuild) => string[],
): Peer {
  return {
    ...meta,
    timing: `inside its process (${meta.name === 'Xapian' ? 'time.perf_counter_ns' : 'process.hrtime.bigint'} around each query)`,
    ready: async () => {
      await w.request<object>({ cmd: 'ready' });
    },
    async build(docsFile, queriesFile) {
      const b = await w.request<WorkerBuild>({ cmd: 'build', docs: docsFile, queries: queriesFile });
      return { buildMs: b.buildMs, rssGrowth: b.rssGrowth, indexBytes: indexBytes(b), notes: notes(b) };
    },
    round: (wantIds) => w.request<RoundFigures>({ cmd: 'round', ids: wantIds }),
    close: () => w.close(),
  };
}

const MiB = 2 ** 20;

function nodeWorker(engine: 'quarry' | 'fts5'): LineWorker {
  // process.execArgv carries tsx's loader to the child.
  const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', path.join(here, 'native-node-worker.ts'), engine], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new LineWorker(engine, child);
}

/** quarry's shard, in a Node process of its own. */
export function quarryPeer(revision: string): Peer {
  return workerPeer(
    nodeWorker('quarry'),
    {
      name: 'quarry',
      version: revision,
      config: `Shard({k1: ${BM25.k1}, b: ${BM25.b}}), apply() in batches of 1,000; query = termStats + search (analysis included); repository analyzer (NFKC, lowercase, Unicode words, Porter, stop words kept)`,
      indexWhat: 'V8 heap used + array buffers retained after the build, after full GC',
    },
    (b) => b.heapGrowth ?? 0,
    () => [],
  );
}

/** SQLite FTS5 through better-sqlite3, in a Node process of its own. */
export function fts5Peer(): Peer {
  const db = spawnSync(process.execPath, ['-e', "const D=require('better-sqlite3');console.log(new D(':memory:').prepare('select sqlite_version()').pluck().get())"], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return workerPeer(
    nodeWorker('fts5'),
    {
      name: 'SQLite FTS5',
      version: `SQLite ${db.stdout.trim() || '?'} (better-sqlite3 ${packageVersion('better-sqlite3')})`,
      config:
        "in-memory database, contentless fts5(text, content='', tokenize='porter unicode61'), one transaction per 1,000 docs, 'optimize' at the end (inside the build time); " +
        'query = every word quoted, joined by OR, ORDER BY rank (bm25(): k1 1.2, b 0.75, fixed in SQLite) LIMIT 10; rowid -> id through an array',
      indexWhat: 'database pages (page_count x page_size of the in-memory database)',
    },
    (b) => b.dbBytes ?? 0,
    (b) => [`V8 heap growth ${((b.heapGrowth ?? 0) / MiB).toFixed(1)} MiB (the id array)`],
  );
}

/**
 * Xapian through Debian's python3-xapian, in a Python process of its own; the database in `dir`.
 * Returns the reason instead when python3-xapian is missing and cannot be installed.
 */
export function xapianPeer(dir: string, stemmer: string): Peer | string {
  const missing = ensure(() => pythonOk('import xapian'), ['python3-xapian']);
  if (missing !== null) return missing;
  const child = spawn(DEBIAN_PYTHON, [path.join(here, 'native-xapian.py'), stemmer, String(BM25.k1), String(BM25.b), dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const version = execFileSync(DEBIAN_PYTHON, ['-c', 'import xapian; print(xapian.version_string())'], { encoding: 'utf8' }).trim();
  return workerPeer(
    new LineWorker('xapian', child),
    {
      name: 'Xapian',
      version: `${version} (python3-xapian ${debVersion('python3-xapian')}, Python ${execFileSync(DEBIAN_PYTHON, ['--version'], { encoding: 'utf8' }).trim().replace('Python ', '')})`,
      config:
        `glass database on disk (DB_NO_SYNC), TermGenerator with Snowball "${stemmer}" stemmer${stemmer === 'porter' ? ' (the original Porter algorithm, as quarry)' : ''}, STEM_ALL, positions kept, commit inside the build time; ` +
        `query = OR of the query's terms from the same TermGenerator, BM25Weight(k1 ${BM25.k1}, k2 0, k3 1, b ${BM25.b}, min_normlen 0.5), get_mset(0, 10)`,
      indexWhat: 'database files on disk after commit (served from the page cache)',
    },
    (b) => b.dbBytes ?? 0,
    (b) => [`Python process RSS growth over the build (documents flushed to disk every 10,000): ${(b.rssGrowth / MiB).toFixed(1)} MiB`],
  );
}

/** RediSearch 1.x's separators (src/toksep.h) and the rest of ASCII punctuation, which its query syntax reserves. */
const REDISEARCH_SPLIT = /[\s!-/:-@[-`{-~]+/;

/** A RediSearch query: the words of the text (split as RediSearch splits them) as a union. */
export function rediSearchQuery(text: string): string {
  return text
    .split(REDISEARCH_SPLIT)
    .filter((w) => w !== '')
    .join(' | ');
}

/** Server-side microseconds of a command from INFO commandstats, 0 when it never ran. */
function commandUsec(info: string, command: string): number {
  const m = new RegExp(`cmdstat_${command.replace('.', '\\.')}:calls=\\d+,usec=(\\d+)`, 'i').exec(info);
  return m === null ? 0 : Number(m[1]);
}

/**
 * RediSearch from Debian's redis-redisearch, loaded into redis-server on a free loopback port with
 * SAFEMODE (queries and indexing on Redis's one thread, so that the server's command timing covers
 * them) and TIMEOUT 0 (no query is cut short). Per-query time inside the server from SLOWLOG (every
 * command logged), build time from INFO commandstats; the client's own view is reported beside.
 * `scorer` is FT.SEARCH's SCORER (BM25, TFIDF, TFIDF.DOCNORM, DISMAX).
 */
export async function rediSearchPeer(dir: string, scorer: string): Promise<Peer | string> {
  const missing = ensure(() => existsSync(REDISEARCH_MODULE) && spawnSync('sh', ['-c', 'command -v redis-server']).status === 0, ['redis-redisearch']);
  if (missing !== null) return missing;
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', path.join(dir, 'redis.log'), '--loadmodule', REDISEARCH_MODULE, 'SAFEMODE', 'TIMEOUT', '0'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const until = Date.now() + 20_000;
  let connected: Redis | null = null;
  while (connected === null) {
    const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined); // a refused connection while the server starts; connect() rejects too
    try {
      await r.connect();
      await r.ping();
      connected = r;
    } catch (e) {
      r.disconnect();
      if (Date.now() > until || server.exitCode !== null) {
        server.kill();
        return `redis-server with ${REDISEARCH_MODULE} did not answer on 127.0.0.1:${port} (${String(e)}; log ${path.join(dir, 'redis.log')})`;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const redis = connected;
  const modules = (await redis.call('MODULE', 'LIST')) as unknown[][];
  const ft = modules.map((m) => Object.fromEntries(Array.from({ length: m.length / 2 }, (_, i) => [String(m[2 * i]), m[2 * i + 1]]))).find((m) => m.name === 'ft');
  const ver = Number(ft?.ver ?? 0);
  const serverVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
  const pid = server.pid ?? -1;
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
  let queries: string[] = [];
  return {
    name: 'RediSearch',
    version: `${Math.floor(ver / 10000)}.${Math.floor(ver / 100) % 100}.${ver % 100} (redis-redisearch ${debVersion('redis-redisearch')}) in Redis ${serverVersion}`,
    config:
      'module args SAFEMODE TIMEOUT 0; FT.CREATE STOPWORDS 0 SCHEMA text TEXT (Snowball English stemmer, i.e. Porter2, stems added as query expansions; offsets kept); ' +
      'FT.ADD <id> 1.0 NOSAVE (the text is not kept), pipelined 1,000 at a time; query = words as RediSearch splits them joined by | (union), ' +
      `FT.SEARCH NOCONTENT SCORER ${scorer} LIMIT 0 10 (RediSearch 1.2's BM25 has k1 1.2 and b 0.5 fixed and normalizes by the average document length, not each document's; ` +
      "every scorer divides a document's score by the distance between the query terms it holds, so a document holding several terms far apart ranks below one holding one)",
    indexWhat: "Redis used_memory growth (every allocation of the server and the module)",
    timing: 'inside redis-server: SLOWLOG duration of each FT.SEARCH (the command, without reading the request or writing the reply); QPS from the client, loopback hop included',
    // Started already: rediSearchPeer returns once the server answers PING with the module loaded.
    ready: async () => {
      await redis.ping();
    },
    async build(docsFile, queriesFile) {
      queries = JSON.parse(readFileSync(queriesFile, 'utf8')) as string[];
      await redis.call('FT.CREATE', 'idx', 'STOPWORDS', '0', 'SCHEMA', 'text', 'TEXT');
      await redis.call('CONFIG', 'RESETSTAT');
      const rss0 = rssOf(pid);
      const used0 = await usedMemory();
      let clientNs = 0n;
      let batch: { id: string; text: string }[] = [];
      const flush = async () => {
        const t = process.hrtime.bigint();
        const p = redis.pipeline();
        for (const d of batch) p.call('FT.ADD', 'idx', d.id, '1.0', 'NOSAVE', 'FIELDS', 'text', d.text);
        const replies = (await p.exec()) ?? [];
        clientNs += process.hrtime.bigint() - t;
        const failed = replies.find(([err]) => err !== null);
        if (failed) throw new Error(`FT.ADD failed: ${String(failed[0])}`);
        batch = [];
      };
      for await (const line of readline.createInterface({ input: createReadStream(docsFile), crlfDelay: Infinity })) {
        if (line === '') continue;
        batch.push(JSON.parse(line) as { id: string; text: string });
        if (batch.length === 1000) await flush();
      }
      if (batch.length > 0) await flush();
      const usec = commandUsec(await redis.info('commandstats'), 'ft.add');
      const info = (await redis.call('FT.INFO', 'idx')) as unknown[];
      const field = (k: string) => String(info[info.indexOf(k) + 1]);
      return {
        buildMs: usec / 1000,
        rssGrowth: rssOf(pid) - rss0,
        indexBytes: (await usedMemory()) - used0,
        notes: [
          `build time is the server's FT.ADD time (INFO commandstats); the client saw ${(Number(clientNs) / 1e9).toFixed(2)} s (pipelines of 1,000 over loopback, the client's own work on the other core)`,
          `FT.INFO: ${field('num_docs')} docs, ${field('num_terms')} terms, inverted ${Number(field('inverted_sz_mb')).toFixed(1)} MiB, offsets ${Number(field('offset_vectors_sz_mb')).toFixed(1)} MiB, doc table ${Number(field('doc_table_size_mb')).toFixed(1)} MiB, key table ${Number(field('key_table_size_mb')).toFixed(1)} MiB`,
        ],
      };
    },
    async round(wantIds) {
      await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0');
      await redis.call('CONFIG', 'SET', 'slowlog-max-len', String(queries.length + 100));
      await redis.call('SLOWLOG', 'RESET');
      const clientLat = new Array<number>(queries.length);
      const ids: string[][] | null = wantIds ? [] : null;
      const start = process.hrtime.bigint();
      for (let i = 0; i < queries.length; i++) {
        const a = process.hrtime.bigint();
        const q = rediSearchQuery(queries[i]!);
        const reply = (await redis.call('FT.SEARCH', 'idx', q, 'NOCONTENT', 'SCORER', scorer, 'LIMIT', '0', '10')) as unknown[];
        clientLat[i] = Number(process.hrtime.bigint() - a) / 1000;
        ids?.push(reply.slice(1).map(String));
      }
      const wallUs = Number(process.hrtime.bigint() - start) / 1000;
      await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '-1');
      const log = (await redis.call('SLOWLOG', 'GET', String(queries.length + 100))) as [number, number, number, unknown[]][];
      // Newest first; keep the searches, oldest first, to line them up with the queries.
      const lat = log
        .filter((e) => String(e[3][0]).toLowerCase() === 'ft.search')
        .map((e) => e[2])
        .reverse();
      if (lat.length !== queries.length) throw new Error(`SLOWLOG held ${lat.length} FT.SEARCH entries for ${queries.length} queries`);
      return { lat, wallUs, ids, clientLat };
    },
    async close() {
      try {
        await redis.call('SHUTDOWN', 'NOSAVE');
      } catch {
        // The connection closes as the server exits.
      }
      redis.disconnect();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (server.exitCode === null && server.signalCode === null) server.kill();
    },
  };
}

/** bm25s is on PyPI only (no Debian package): runnable only where someone installed it; no driver is written here. */
export function bm25sStatus(): string {
  return pythonOk('import bm25s')
    ? 'bm25s is importable by /usr/bin/python3, but this script has no driver for it: it was written on a machine that reaches only npm and Debian, so no bm25s code could be run or checked'
    : 'not installed, and it cannot be: bm25s is on PyPI only (pip install bm25s PyStemmer), which this machine cannot reach, and Debian has no package for it';
}
