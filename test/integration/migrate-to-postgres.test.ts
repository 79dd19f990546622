/**
 * The migration command (dist/deploy/migrate-to-postgres.js) end to end: real data put into a
 * SQLite stack through the HTTP API (300 BEIR SciFact abstracts with tracking ids, tags, metadata
 * and groups, a second API key, searches and a recommendation recorded by analytics), the stack
 * stopped, the command run as a child process; then a stack on the PostgreSQL database, with the
 * same data directory (its index snapshots), serves the same chunks, groups and search results to
 * the old keys, and a chunk written afterwards is searchable (the change log's sequence went on
 * above the numbers the snapshots recorded). Also: a second run copies nothing, an interrupted
 * run resumes, and user errors are one line with a non-zero exit.
 *
 * SQLite to PostgreSQL only: skipped in the vitest project `postgres` (its stacks store in PostgreSQL).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { freshPgDatabase, testStore, type TestDatabase } from '../helpers/pg.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { freePort, startStack, type Stack } from '../helpers/stack.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const COMMAND = path.join(path.resolve(ROOT, process.env.QUARRY_TEST_DIST_DIR || 'dist'), 'deploy/migrate-to-postgres.js');
/** BEIR SciFact, read where it lies (never copied into the repository). */
const CORPUS = path.resolve(ROOT, '../shared/data/scifact/corpus.jsonl.gz');
const DOCS = 300;
const GROUPS = ['grp-cells', 'grp-clinical', 'grp-genes'];
/** The tables the command copies, as it reports them. */
const TABLES = [
  'organizations',
  'users',
  'memberships',
  'api_keys',
  'datasets',
  'chunks',
  'chunk_groups',
  'chunk_group_members',
  'change_log',
  'chunk_vectors',
  'chunk_sparse_vectors',
  'dataset_events',
  'topics',
  'messages',
  'files',
  'search_queries',
  'search_rollup_hourly',
  'search_rollup_daily',
  'search_query_totals',
  'search_filter_rollup_hourly',
  'search_filter_rollup_daily',
  'search_query_hourly',
  'search_query_daily',
  'recommendation_queries',
  'rag_queries',
  'record_rollup_hourly',
  'record_rollup_daily',
  'rag_message_totals',
  'analytics_users',
  'user_rollup_hourly',
  'user_rollup_daily',
  'rag_followup_totals',
  'rag_followup_type_totals',
  'user_events',
  'record_event_rollup_hourly',
  'record_event_rollup_daily',
  'user_event_rollup_hourly',
  'user_event_rollup_daily',
  'query_ratings',
  'experiments',
  'experiment_assignments',
];

interface Doc {
  id: string;
  title: string;
  text: string;
}

interface TableReport {
  table: string;
  sourceRows: number;
  targetRows: number;
  copied: number;
  sourceSha256: string;
  targetSha256: string;
  ok: boolean;
}

interface Report {
  tables: TableReport[];
  copied: number;
  resumed: boolean;
  rowsPerSecond: number;
  seconds: number;
  nextChangeSeq: number;
  ok: boolean;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The first `n` documents of the corpus (the file holds 5,183). */
async function readDocs(n: number): Promise<Doc[]> {
  // The whole file at once (~2.7 MB): a missing ../shared fails here with ENOENT, where a file
  // stream piped into readline left the hook waiting out its timeout.
  const docs: Doc[] = [];
  for (const line of gunzipSync(fs.readFileSync(CORPUS)).toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    const r = JSON.parse(line) as { _id: string; title: string; text: string };
    docs.push({ id: String(r._id), title: r.title, text: r.text });
    if (docs.length === n) break;
  }
  return docs;
}

/** Runs the command; the environment names no store of its own unless `env` does. */
function migrate(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const base = { ...process.env };
  delete base.QUARRY_DATA_DIR;
  delete base.QUARRY_DATABASE_URL;
  delete base.QUARRY_MIGRATE_STOP_AFTER_BATCHES;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [COMMAND, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Row counts of the SQLite store, by table. */
function sqliteCounts(dataDir: string): Record<string, number> {
  const db = new Database(path.join(dataDir, 'quarry.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

/** Rows of a query on the SQLite store. */
function sqliteRows<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path.join(dataDir, 'quarry.sqlite'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Rows of a query on a PostgreSQL database. */
async function pgRows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const pgCounts = async (url: string): Promise<Record<string, number>> =>
  Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, Number((await pgRows<{ n: string }>(url, `SELECT COUNT(*) AS n FROM ${t}`))[0]!.n)])));

const countsOf = (report: Report, field: 'sourceRows' | 'targetRows'): Record<string, number> => Object.fromEntries(report.tables.map((t) => [t.table, t[field]]));

/** Expects an exit status other than 0 and one line of explanation on stderr, no stack. */
function expectOneLineError(run: Run, message: RegExp): void {
  expect(run.code, run.stderr).not.toBe(0);
  expect(run.code).not.toBeNull();
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

const SEARCHES = 6;

describe.skipIf(testStore() === 'postgres')('migrate-to-postgres', () => {
  let stack: Stack;
  let pgStack: Stack | undefined;
  let t: Tenant;
  let readKey: string;
  let docs: Doc[];
  const databases: TestDatabase[] = [];
  let first: Report;
  let source: Record<string, number>;
  /** What the SQLite stack answered before the migration, to compare with the PostgreSQL one. */
  const before = {
    searches: [] as { body: Record<string, unknown>; ids: string[]; scores: number[] }[],
    chunks: new Map<string, unknown>(),
    groups: new Map<string, { group: unknown; members: string[] }>(),
  };

  const search = (c: Client, body: Record<string, unknown>) => c.post('/api/chunk/search', body);
  const groupMembers = async (c: Client, trackingId: string): Promise<string[]> => {
    const ids: string[] = [];
    for (let page = 1; ; page++) {
      const res = await c.get(`/api/chunk_group/tracking_id/${trackingId}/${page}`);
      expect(res.status, res.text).toBe(200);
      ids.push(...res.body.chunks.map((c: { id: string }) => c.id));
      if (page >= res.body.total_pages) break;
    }
    return ids.sort();
  };

  beforeAll(async () => {
    docs = await readDocs(DOCS);
    expect(docs).toHaveLength(DOCS);
    stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false' } });
    t = await createTenant(stack);
    readKey = await createKey(stack, t.orgId, { role: 0 });

    const groups = await t.ds.post(
      '/api/chunk_group',
      GROUPS.map((g, i) => ({ name: g.slice(4), description: `SciFact group ${i}`, tracking_id: g, metadata: { rank: i }, tag_set: ['scifact', g] })),
    );
    expect(groups.status, groups.text).toBe(200);
    for (let start = 0; start < DOCS; start += 100) {
      const res = await t.ds.post(
        '/api/chunk',
        docs.slice(start, start + 100).map((d, k) => {
          const i = start + k;
          return {
            tracking_id: `scifact-${d.id}`,
            chunk_html: `<h1>${d.title}</h1><p>${d.text}</p>`,
            link: `https://example.org/scifact/${d.id}`,
            tag_set: [`topic-${i % 5}`, i % 2 === 0 ? 'even' : 'odd'],
            metadata: { doc_id: d.id, title: d.title, position: i, ratio: i / 7, nested: { words: d.text.split(' ').length } },
            num_value: i * 1.5,
            weight: 1 + (i % 4) / 8,
            time_stamp: new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 19),
            // One chunk in ten in a group, some in two.
            group_tracking_ids: i % 10 === 0 ? [GROUPS[i % 3]!, ...(i % 30 === 0 ? [GROUPS[(i + 1) % 3]!] : [])] : undefined,
          };
        }),
      );
      expect(res.status, res.text).toBe(200);
    }

    // Queries made of title words, so every one has hits.
    for (let k = 0; k < SEARCHES; k++) {
      const words = docs[k * 37]!.title.split(/\s+/).slice(0, 5).join(' ');
      const body = { query: words, search_type: k % 2 === 0 ? 'bm25' : 'fulltext', page_size: 10, user_id: `user-${k}`, metadata: { k } };
      await eventually({ what: `hits for "${words}"`, context: () => stack.output().slice(-3000) }, async () => {
        const res = await search(t.ds, body);
        return res.status === 200 && res.body.chunks.length > 0;
      });
      const res = await search(client(stack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId }), body);
      expect(res.status, res.text).toBe(200);
      before.searches.push({ body, ids: res.body.chunks.map((c: any) => c.chunk.id), scores: res.body.chunks.map((c: any) => c.score) });
    }
    const rec = await t.ds.post('/api/chunk/recommend', { positive_tracking_ids: [`scifact-${docs[3]!.id}`], recommend_type: 'bm25', limit: 5 });
    expect(rec.status, rec.text).toBe(200);

    for (const d of [docs[0]!, docs[10]!, docs[299]!]) {
      const res = await t.ds.get(`/api/chunk/tracking_id/scifact-${d.id}`);
      expect(res.status, res.text).toBe(200);
      before.chunks.set(d.id, res.body);
    }
    for (const g of GROUPS) {
      const res = await t.ds.get(`/api/chunk_group/tracking_id/${g}`);
      expect(res.status, res.text).toBe(200);
      before.groups.set(g, { group: res.body, members: await groupMembers(t.ds, g) });
    }
    expect(before.groups.get(GROUPS[0]!)!.members.length).toBeGreaterThan(0);

    // Analytics arrive through a queue: wait until they are in the store before stopping.
    await eventually({ what: 'the analytics records in the store', timeoutMs: 30_000, context: () => stack.output().slice(-3000) }, () => {
      const [s] = sqliteRows<{ n: number }>(stack.dataDir, 'SELECT COUNT(*) AS n FROM search_queries WHERE dataset_id = ?', t.datasetId);
      const [r] = sqliteRows<{ n: number }>(stack.dataDir, 'SELECT COUNT(*) AS n FROM recommendation_queries WHERE dataset_id = ?', t.datasetId);
      return s!.n >= SEARCHES && r!.n >= 1;
    });

    // Stopped process by process, not with stop(), which would remove the data directory.
    for (const name of ['facade', 'jobs', 'core'] as const) await stack.kill(name, 'SIGTERM');
    // The core snapshots its indexes on shutdown: the PostgreSQL stack starts from them.
    expect(fs.existsSync(path.join(stack.dataDir, 'index', t.datasetId))).toBe(true);
    // RAG rows, through the store of the stopped stack: two topics (one a clone), messages (one
    // replaced, so flagged deleted), a RAG record; the copy and its checksums must cover them.
    const sqlite = openSqliteStore(stack.dataDir);
    try {
      const chat = await sqlite.topics.create({ datasetId: t.datasetId, name: 'scurvy', ownerId: 'owner-1', metadata: { k: 1 } });
      await sqlite.messages.append(t.datasetId, chat.id, [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: docs[0]!.title },
        { role: 'assistant', content: 'first answer', promptTokens: 120, completionTokens: 9 },
      ]);
      await sqlite.messages.append(t.datasetId, chat.id, [{ role: 'assistant', content: 'second answer ü', promptTokens: 130, completionTokens: 11 }], 3);
      await sqlite.topics.clone(t.datasetId, chat.id, { ownerId: 'owner-2' });
      // A file mid-import (JSON options, cursor and row errors), so the copy covers the files table.
      const file = await sqlite.files.create({
        id: 'file-1',
        datasetId: t.datasetId,
        fileName: 'rows ü.csv',
        kind: 'csv',
        status: 'queued',
        description: '',
        link: null,
        metadata: { k: 1 },
        tagSet: ['a'],
        timeStamp: null,
        size: 2048,
        blobKey: `datasets/${t.datasetId}/files/file-1`,
        contentType: null,
        importOptions: null,
        splitOptions: null,
      });
      await sqlite.files.transition(file.id, ['queued'], 'processing');
      await sqlite.files.commitProgress(file.id, {
        cursor: { byteOffset: 900, rowIndex: 10, header: ['id', 'text'] },
        rowsDone: 10,
        rowsImported: 9,
        rowsSkipped: 0,
        bytesDone: 900,
        errors: [{ row: 4, reason: 'lat is not a number' }],
      });
      await sqlite.analytics.insertRags([
        {
          id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
          datasetId: t.datasetId,
          ragType: 'chosen_chunks',
          userMessage: docs[0]!.title,
          searchId: null,
          topicId: chat.id,
          results: [{ id: before.searches[0]!.ids[0]!, score: 0 }],
          llmResponse: 'second answer ü',
          topScore: 0,
          userId: 'user-1',
          metadata: { k: 1.5 },
          promptTokens: 130,
          completionTokens: 11,
          latencyMs: 812.25,
          createdAt: Date.now(),
        },
      ]);
    } finally {
      await sqlite.close();
    }
    source = sqliteCounts(stack.dataDir);
  }, 240_000);

  afterAll(async () => {
    await pgStack?.stop();
    await stack?.stop();
    for (const db of databases) await db.drop();
  });

  const newDatabase = async (): Promise<TestDatabase> => {
    const db = await freshPgDatabase();
    databases.push(db);
    return db;
  };

  it('copies every table into an empty database and verifies it', async () => {
    const db = await newDatabase();
    const run = await migrate(['--from', stack.dataDir, '--to', db.url, '--json']);
    expect(run.code, run.stderr).toBe(0);
    first = JSON.parse(run.stdout) as Report;
    expect(first.ok).toBe(true);
    expect(first.resumed).toBe(false);
    expect(first.tables.map((r) => r.table)).toEqual(TABLES);
    expect(countsOf(first, 'sourceRows')).toEqual(source);
    expect(countsOf(first, 'targetRows')).toEqual(source);
    expect(await pgCounts(db.url)).toEqual(source);
    for (const r of first.tables) {
      expect(r.copied, r.table).toBe(source[r.table]);
      expect(r.targetSha256, r.table).toBe(r.sourceSha256);
    }
    expect(first.copied).toBe(Object.values(source).reduce((a, b) => a + b, 0));
    expect(source.chunks).toBe(DOCS);
    expect(source.chunk_group_members).toBeGreaterThanOrEqual(30);
    expect(source.search_queries).toBeGreaterThanOrEqual(SEARCHES);
    expect(source.recommendation_queries).toBeGreaterThanOrEqual(1);
    expect([source.topics, source.messages, source.rag_queries, source.files]).toEqual([2, 7, 1, 1]);
    // The change log keeps its numbers, and the identity continues above them.
    const [maxSeq] = sqliteRows<{ m: number }>(stack.dataDir, 'SELECT MAX(seq) AS m FROM change_log');
    expect(first.nextChangeSeq).toBeGreaterThan(maxSeq!.m);
    expect(run.stderr).toMatch(/chunks: done 300\/300 rows/);
    console.info(`migrate-to-postgres: ${first.copied} rows copied at ${first.rowsPerSecond} rows/s (${first.seconds.toFixed(2)} s with verification)`);
  }, 120_000);

  it('copies nothing on a completed migration, and says so', async () => {
    const db = databases[0]!;
    const run = await migrate(['--from', stack.dataDir, '--to', db.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Nothing to copy: the target already holds every row/);
    expect(run.stdout).not.toMatch(/MISMATCH/);
    for (const table of TABLES) expect(run.stdout).toMatch(new RegExp(`^${table} .* ok$`, 'm'));
    expect(await pgCounts(db.url)).toEqual(source);
  }, 120_000);

  it('a stack on the PostgreSQL database serves the migrated data to the old keys', async () => {
    const db = databases[0]!;
    // The analytics records came across as they were (compared before the new stack records more).
    const q = 'SELECT id, query, search_type, user_id, results FROM search_queries WHERE dataset_id = $1 ORDER BY id';
    const sqliteSearches = sqliteRows(stack.dataDir, q.replace('$1', '?'), t.datasetId);
    expect(sqliteSearches.length).toBeGreaterThanOrEqual(SEARCHES);
    expect(await pgRows(db.url, q, [t.datasetId])).toEqual(sqliteSearches);
    const r = 'SELECT id, positive_tracking_ids, results FROM recommendation_queries WHERE dataset_id = $1 ORDER BY id';
    expect(await pgRows(db.url, r, [t.datasetId])).toEqual(sqliteRows(stack.dataDir, r.replace('$1', '?'), t.datasetId));
    const m = 'SELECT topic_id, sort_order, role, content, deleted FROM messages WHERE dataset_id = $1 ORDER BY topic_id, sort_order, deleted';
    expect(await pgRows(db.url, m, [t.datasetId])).toEqual(sqliteRows(stack.dataDir, m.replace('$1', '?'), t.datasetId));

    pgStack = await startStack({ env: { QUARRY_DATABASE_URL: db.url, QUARRY_DATA_DIR: stack.dataDir } });
    const owner = client(pgStack.baseUrl, { authorization: t.ownerKey, 'tr-dataset': t.datasetId });
    const reader = client(pgStack.baseUrl, { authorization: readKey, 'tr-dataset': t.datasetId });

    for (const [id, chunk] of before.chunks) {
      const res = await reader.get(`/api/chunk/tracking_id/scifact-${id}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(chunk);
    }
    for (const s of before.searches) {
      const res = await search(reader, s.body);
      expect(res.status, res.text).toBe(200);
      expect(res.body.chunks.map((c: any) => c.chunk.id)).toEqual(s.ids);
      res.body.chunks.forEach((c: any, i: number) => expect(c.score).toBeCloseTo(s.scores[i]!, 9));
    }
    for (const [g, { group, members }] of before.groups) {
      const res = await owner.get(`/api/chunk_group/tracking_id/${g}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(group);
      expect(await groupMembers(owner, g)).toEqual(members);
    }

    // A chunk written now gets a sequence number above those the core's snapshots applied (a
    // number restarting at 1 would never be applied, and the chunk never found).
    const fresh = await owner.post('/api/chunk', [{ tracking_id: 'after-migration', chunk_html: 'xylophonist quokka postmigration' }]);
    expect(fresh.status, fresh.text).toBe(200);
    await eventually({ what: 'the new chunk in search results', context: () => pgStack!.output().slice(-3000) }, async () => {
      const res = await search(owner, { query: 'xylophonist quokka', search_type: 'bm25' });
      return res.status === 200 && res.body.chunks.some((c: any) => c.chunk.tracking_id === 'after-migration');
    });
    const [seq] = await pgRows<{ seq: string }>(db.url, 'SELECT MAX(seq) AS seq FROM change_log WHERE chunk_id = $1', [fresh.body.chunk_metadata[0].id]);
    expect(Number(seq?.seq)).toBeGreaterThanOrEqual(first.nextChangeSeq);
    await pgStack.stop();
    pgStack = undefined;
  }, 180_000);

  it('refuses a target that holds other data, in one line', async () => {
    // The PostgreSQL stack wrote a chunk into the first database since the migration.
    const run = await migrate(['--from', stack.dataDir, '--to', databases[0]!.url]);
    expectOneLineError(run, /^migrate-to-postgres: error: the target database holds data that is not a copy of .*chunks: 301 rows in the target, 300/);
  }, 120_000);

  it('resumes an interrupted migration and ends with the same rows', async () => {
    const db = await newDatabase();
    const stopped = await migrate(['--from', stack.dataDir, '--to', db.url, '--batch-size', '40'], { QUARRY_MIGRATE_STOP_AFTER_BATCHES: '6' });
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toMatch(/stopped after 6 batches .* run again to resume/);
    const partial = await pgCounts(db.url);
    const partialChunks = partial.chunks!;
    // Whole batches only: the tables before chunks take at most one batch each, then chunks 40 at a time.
    expect(partialChunks).toBeGreaterThan(0);
    expect(partialChunks).toBeLessThan(DOCS);
    expect(partialChunks % 40).toBe(0);
    expect(partial.change_log).toBe(0);

    const run = await migrate(['--from', stack.dataDir, '--to', db.url, '--batch-size', '40', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/resuming: the target already holds/);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.ok).toBe(true);
    expect(report.resumed).toBe(true);
    expect(report.tables.find((r) => r.table === 'chunks')!.copied).toBe(DOCS - partialChunks);
    expect(report.copied).toBe(first.copied - Object.values(partial).reduce((a, b) => a + b, 0));
    // The same source gives the same checksums as the uninterrupted migration.
    expect(report.tables.map((r) => [r.table, r.targetRows, r.targetSha256])).toEqual(first.tables.map((r) => [r.table, r.sourceRows, r.sourceSha256]));
    expect(report.nextChangeSeq).toBe(first.nextChangeSeq);
  }, 120_000);

  it('an unreachable database or a missing data directory is one line and a non-zero exit', async () => {
    const port = await freePort();
    expectOneLineError(
      await migrate(['--from', stack.dataDir, '--to', `postgres://quarry:secret@127.0.0.1:${port}/quarry`]),
      /^migrate-to-postgres: error: cannot open the PostgreSQL database postgres:\/\/quarry:\*\*\*@127\.0\.0\.1:\d+\/quarry: .*ECONNREFUSED/,
    );
    expectOneLineError(
      await migrate(['--from', path.join(stack.dataDir, 'missing'), '--to', databases[0]!.url]),
      /^migrate-to-postgres: error: the data directory .*missing does not exist$/,
    );
    // The defaults come from the environment the service reads.
    const noStore = await migrate([], { QUARRY_DATA_DIR: path.join(stack.dataDir, 'index'), QUARRY_DATABASE_URL: databases[0]!.url });
    expectOneLineError(noStore, /holds no SQLite store/);
    const help = await migrate(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node dist\/deploy\/migrate-to-postgres\.js --from <data dir> --to <postgres:\/\/\.\.\.>/);
  }, 60_000);
});
