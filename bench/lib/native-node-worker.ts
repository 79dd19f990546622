/**
 * One engine of bench/compare-native.ts in a Node process of its own: quarry's shard (in-process,
 * no gRPC, as bench/lib/compare-engines.ts runs it) or SQLite FTS5 through better-sqlite3. A
 * process per engine so that its RSS growth is its own and the engines can take query rounds in
 * turn. Started by lib/native-peers.ts with `--expose-gc` and tsx's loader:
 *
 *   node --expose-gc --import tsx bench/lib/native-node-worker.ts quarry|fts5
 *
 * Protocol (the same as lib/native-xapian.py): one JSON request a line on stdin, one JSON reply a
 * line on stdout (`{"error": ...}` when it failed); nothing else is written to stdout.
 *   {"cmd":"build","docs":<JSONL of {id, text}>,"queries":<JSON array of query texts>}
 *     -> {buildMs, rssGrowth, heapGrowth, dbBytes}
 *   {"cmd":"round","ids":bool} -> {lat: us per query, wallUs, ids: top-10 ids per query | null}
 *   {"cmd":"ready"} -> {} (once it answers, its start-up is over and it idles until the next request)
 *   {"cmd":"quit"}
 * Build time counts the engine's calls only: reading and parsing the JSONL (batches of 1,000) is
 * outside it, as in the other workers.
 */
import { createReadStream, readFileSync } from 'node:fs';
import readline from 'node:readline';
import Database from 'better-sqlite3';
import { Shard } from '../../workers/shard/shard.js';
import { textDoc } from '../../workers/shard/text-doc.js';
import { BM25 } from './compare-engines.js';

/** One line of the documents file. */
interface BenchDoc {
  readonly id: string;
  readonly text: string;
}

const K = 10;
const BATCH = 1000;
const gc = (globalThis as { gc?: () => void }).gc;

/** An index under construction and then searched. */
interface Engine {
  add(batch: readonly BenchDoc[]): void;
  /** Work after the last batch that belongs to the build (FTS5's optimize). */
  finish(): void;
  /** Bytes of the index as the engine counts them (FTS5: its database pages), or null. */
  dbBytes(): number | null;
  search(query: string): string[];
}

function quarryEngine(): Engine {
  const shard = new Shard({ k1: BM25.k1, b: BM25.b });
  return {
    add: (batch) => shard.apply(batch.map((d) => textDoc(d.id, d.text)), [], 1),
    finish: () => undefined,
    dbBytes: () => null,
    // As the coordinator runs a query: analyze + statistics (termStats), then the shard search.
    search: (query) => shard.search(query, shard.termStats(query), K, null, null, false).chunkIds,
  };
}

/** An FTS5 query: every word of the text quoted (FTS5's own tokenizer stems it), joined by OR. */
function fts5Query(text: string): string {
  return (text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).map((w) => `"${w}"`).join(' OR ');
}

/**
 * A contentless FTS5 table (the index only, no copy of the text) in an in-memory database,
 * tokenizer `porter unicode61`, ranked by FTS5's bm25() (k1 1.2 and b 0.75, fixed in SQLite).
 * Rowid = position in the corpus + 1; the id strings are kept in an array beside it.
 */
function fts5Engine(): Engine {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE d USING fts5(text, content='', tokenize='porter unicode61')`);
  const ids: string[] = [];
  const insert = db.prepare('INSERT INTO d(rowid, text) VALUES (?, ?)');
  const addBatch = db.transaction((batch: readonly BenchDoc[]) => {
    for (const doc of batch) {
      ids.push(doc.id);
      insert.run(ids.length, doc.text);
    }
  });
  const top = db.prepare<[string], number>('SELECT rowid FROM d WHERE d MATCH ? ORDER BY rank LIMIT 10').pluck();
  return {
    add: (batch) => addBatch(batch),
    // Merges the b-tree segments of the bulk load into one, as a bulk loader would.
    finish: () => db.exec(`INSERT INTO d(d) VALUES ('optimize')`),
    dbBytes: () => (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number),
    search(query) {
      const match = fts5Query(query);
      return match === '' ? [] : top.all(match).map((rowid) => ids[rowid - 1]!);
    },
  };
}

function retained(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Builds from the JSONL file; the engine's calls alone are timed. */
async function build(engine: Engine, docsFile: string): Promise<Record<string, number | null>> {
  const heap0 = retained();
  const rss0 = process.memoryUsage().rss;
  let ns = 0n;
  let batch: BenchDoc[] = [];
  const flush = () => {
    const t = process.hrtime.bigint();
    engine.add(batch);
    ns += process.hrtime.bigint() - t;
    batch = [];
  };
  for await (const line of readline.createInterface({ input: createReadStream(docsFile), crlfDelay: Infinity })) {
    if (line === '') continue;
    batch.push(JSON.parse(line) as BenchDoc);
    if (batch.length === BATCH) flush();
  }
  if (batch.length > 0) flush();
  const t = process.hrtime.bigint();
  engine.finish();
  ns += process.hrtime.bigint() - t;
  const heapGrowth = retained() - heap0;
  return { buildMs: Number(ns) / 1e6, rssGrowth: process.memoryUsage().rss - rss0, heapGrowth, dbBytes: engine.dbBytes() };
}

/** One pass over the queries, each timed from its text to its top-10 ids. */
function round(engine: Engine, queries: readonly string[], wantIds: boolean): { lat: number[]; wallUs: number; ids: string[][] | null } {
  const lat = new Array<number>(queries.length);
  const ids: string[][] | null = wantIds ? [] : null;
  const start = process.hrtime.bigint();
  for (let i = 0; i < queries.length; i++) {
    const a = process.hrtime.bigint();
    const top = engine.search(queries[i]!);
    lat[i] = Number(process.hrtime.bigint() - a) / 1000;
    ids?.push(top);
  }
  return { lat, wallUs: Number(process.hrtime.bigint() - start) / 1000, ids };
}

async function main(): Promise<void> {
  const name = process.argv[2];
  const engine = name === 'quarry' ? quarryEngine() : name === 'fts5' ? fts5Engine() : null;
  if (engine === null) throw new Error(`native-node-worker: unknown engine ${name}; known: quarry, fts5`);
  let queries: string[] = [];
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const req = JSON.parse(line) as { cmd: string; docs?: string; queries?: string; ids?: boolean };
    let reply: unknown;
    try {
      if (req.cmd === 'build') {
        queries = JSON.parse(readFileSync(req.queries!, 'utf8')) as string[];
        reply = await build(engine, req.docs!);
      } else if (req.cmd === 'round') {
        reply = round(engine, queries, req.ids === true);
      } else if (req.cmd === 'ready') {
        reply = {};
      } else if (req.cmd === 'quit') {
        break;
      } else {
        reply = { error: `unknown command ${req.cmd}` };
      }
    } catch (e) {
      reply = { error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
  process.exit(0);
}

await main();
