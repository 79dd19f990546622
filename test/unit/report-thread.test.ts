/**
 * The SQLite report thread answers as the in-line report SQL does (same rows, same bound
 * parameters), refuses bad SQL with the engine's error, keeps answering after one, sees commits
 * made after it started, and ends with the store.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/sqlite-store.js';
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
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-report-thread-'));
  store = openSqliteStore(dir, { reportThread: { nice: 0 } });
  db = openDatabase(dir);
});

afterEach(async () => {
  await store.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('answers in its thread exactly as in line, sees later commits, and survives a bad statement', async () => {
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

it('sees rows another process commits after the thread started', async () => {
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
