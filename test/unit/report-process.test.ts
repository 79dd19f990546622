/**
 * The SQLite report processes answer as the in-line report SQL does (same rows, same bound
 * parameters), refuse bad SQL with the engine's error, keep answering after one, see commits made
 * after they started, and end with the store. A statement past its deadline fails with `timeout`
 * and its process is killed (it stops using the CPU), while the statements queued behind it run on
 * a fresh process; with two processes a short statement passes a long one.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { processReportSql } from '../../store/sqlite/report-process.js';
import { sqliteReportSql } from '../../store/sqlite/reports.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';

let dir: string;
let store: SqliteStore;
let db: Db;

const search = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  datasetId: i % 2 === 0 ? 'ds-even' : 'ds-odd',
  kind: 'search' as const,
  searchMethod: 'bm25',
  query: `q${i % 7}`,
  requestParams: {},
  latencyMs: i,
  topScore: i / 10,
  results: [],
  resultCount: 0,
  userId: null,
  metadata: null,
  createdAt: 1_700_000_000_000 + i,
});

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-report-process-'));
  store = openSqliteStore(dir, { reportProcesses: { nice: 0, timeoutMs: 30_000 } });
  db = openDatabase(dir);
});

afterEach(async () => {
  await store.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('answers in its report process exactly as in line, sees later commits, and survives a bad statement', async () => {
  await store.analytics.insertSearches(Array.from({ length: 500 }, (_, i) => search(i)));
  const sql = 'SELECT query, COUNT(*) AS n, SUM(latency) AS total FROM search_queries WHERE dataset_id = ? GROUP BY query ORDER BY query';
  const inline = await sqliteReportSql(db).all(sql, ['ds-even']);
  expect(inline.length).toBe(7);
  expect(await store.reports.all(sql, ['ds-even'])).toEqual(inline);

  await expect(store.reports.all('SELECT nope FROM search_queries', [])).rejects.toThrow(/no such column: nope/);

  await store.analytics.insertSearches([search(1000)]);
  const after = await store.reports.all<{ n: number }>('SELECT COUNT(*) AS n FROM search_queries WHERE dataset_id = ?', ['ds-even']);
  expect(after).toEqual([{ n: 251 }]);
});

it('fails reports after close instead of hanging', async () => {
  await store.reports.all('SELECT 1 AS one', []);
  await store.close();
  await expect(store.reports.all('SELECT 1 AS one', [])).rejects.toThrow(/closing/);
});

it('sees rows another process commits after the report process started', async () => {
  await store.reports.all('SELECT 1 AS one', []);
  for (let round = 0; round < 5; round++) {
    const ids = Array.from({ length: 50 }, (_, i) => search(10_000 + round * 100 + i));
    // Another process: the way the test suites seed analytics rows beside a running service.
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(${JSON.stringify(path.join(dir, 'quarry.sqlite'))});
      db.pragma('busy_timeout = 5000');
      const insert = db.prepare("INSERT INTO search_queries (id, dataset_id, search_type, search_method, query, request_params, latency, top_score, results, result_count, created_at) VALUES (?, 'ds-other', 'search', 'bm25', 'q', '{}', 1, 0, '[]', 0, 1)");
      db.transaction(() => { for (const id of ${JSON.stringify(ids.map((s) => s.id))}) insert.run(id); })();
      db.close();`;
    execFileSync(process.execPath, ['-e', script], { cwd: path.resolve(import.meta.dirname, '../..') });
    const [row] = await store.reports.all<{ n: number }>('SELECT COUNT(*) AS n FROM search_queries WHERE dataset_id = ?', ['ds-other']);
    expect(row!.n).toBe(50 * (round + 1));
  }
});

/** A statement that runs for seconds on one core: it counts to `n` in a recursive CTE. */
const slow = (n: number) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT COUNT(*) AS n FROM c`;

/** Pids of this process's report processes (Linux `ps`). */
function reportPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('report-process-entry'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Whether process `pid` still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('stops a statement past its deadline, kills its process, and runs the statements queued behind it on a new one', async () => {
  await store.analytics.insertSearches(Array.from({ length: 20 }, (_, i) => search(i)));
  const reports = processReportSql({ file: path.join(dir, 'quarry.sqlite'), nice: 0, timeoutMs: 300, processes: 1 });
  try {
    await reports.all('SELECT 1 AS one', []);
    const [first] = reportPids();
    expect(first).toBeDefined();

    const started = Date.now();
    const stopped = reports.all(slow(2_000_000_000), []).then(
      () => 'answered',
      (err: unknown) => err,
    );
    // Queued behind it on the one process: never sent to the one that is killed.
    const queued = reports.all<{ n: number }>('SELECT COUNT(*) AS n FROM search_queries WHERE dataset_id = ?', ['ds-even']);
    const err = await stopped;
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).code).toBe('timeout');
    expect((err as QuarryError).httpStatus).toBe(504);
    expect((err as QuarryError).message).toMatch(/took longer than 300 ms.*shorter date_range/);
    expect(await queued).toEqual([{ n: 10 }]);
    // Killed, not left to finish its count (minutes of CPU).
    await vi.waitFor(() => expect(alive(first!)).toBe(false), { timeout: 2000 });
    expect(Date.now() - started).toBeLessThan(10_000);

    // A later report works, on the new process.
    expect(await reports.all('SELECT ? AS x', [7])).toEqual([{ x: 7 }]);
    expect(reportPids()).toHaveLength(1);
    expect(reportPids()).not.toContain(first);
  } finally {
    await reports.close();
  }
  expect(reportPids()).toEqual([]);
});

it('runs a short statement beside a long one on its second process', async () => {
  const reports = processReportSql({ file: path.join(dir, 'quarry.sqlite'), nice: 0, timeoutMs: 2000 });
  try {
    await Promise.all([reports.all('SELECT 1 AS one', []), reports.all('SELECT 2 AS two', [])]);
    const long = reports.all(slow(2_000_000_000), []).catch((err: unknown) => err);
    const t0 = Date.now();
    expect(await reports.all('SELECT 3 AS three', [])).toEqual([{ three: 3 }]);
    // Not queued behind the long one (which runs until its 2 s deadline).
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(((await long) as QuarryError).code).toBe('timeout');
  } finally {
    await reports.close();
  }
});
