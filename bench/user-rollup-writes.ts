/**
 * What the per-user rollups (store/user-rollup-batch.ts) add to the analytics batch inserts:
 * batches of N searches (default 1,000) of a few hours each, from a pool of users, inserted through
 * a SQLite store's repository, timed with the per-user writer and with its work measured alone
 * (the same batches applied to a second store's writer directly). Prints ms per batch.
 *
 *   npx tsx bench/user-rollup-writes.ts [--batches 200] [--batch 1000] [--users 20000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { SearchRecord } from '../core/domain/analytics.js';
import { openDatabase } from '../store/sqlite/database.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { sqliteUserRollup } from '../store/sqlite/user-rollup.js';
import { searchUsers } from '../store/user-rollup-batch.js';
import { machine } from './lib/spawn-stack.js';

const { values } = parseArgs({ options: { batches: { type: 'string', default: '200' }, batch: { type: 'string', default: '1000' }, users: { type: 'string', default: '20000' } } });
const BATCHES = Number(values.batches);
const BATCH = Number(values.batch);
const USERS = Number(values.users);
const DATASET = '11111111-1111-4111-8111-111111111111';
const HOUR = 3_600_000;

let seed = 7;
const rand = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
let n = 0;
/** Batch `b`: searches spread over its two hours, types and methods as the analytics bench draws them. */
const batchOf = (b: number): SearchRecord[] =>
  Array.from({ length: BATCH }, () => ({
    id: `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`,
    datasetId: DATASET,
    kind: rand() < 0.8 ? 'search' : 'autocomplete',
    searchMethod: ['bm25', 'hybrid', 'semantic', 'fulltext'][Math.floor(rand() * 4)]!,
    query: `q${Math.floor(rand() * 5000)}`,
    requestParams: null,
    latencyMs: 1 + rand() * 50,
    topScore: rand(),
    results: [],
    resultCount: 10,
    userId: rand() < 0.9 ? `user-${Math.floor(rand() * USERS)}` : null,
    metadata: null,
    createdAt: Date.UTC(2026, 0, 1) + Math.floor(b / 2) * HOUR + Math.floor(rand() * 2 * HOUR),
  }));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-user-rollup-bench-'));
try {
  const batches = Array.from({ length: BATCHES }, (_, b) => batchOf(b));
  fs.mkdirSync(path.join(dir, 'a'));
  const store = openSqliteStore(path.join(dir, 'a'));
  let t = performance.now();
  for (const b of batches) await store.analytics.insertSearches(b);
  const whole = (performance.now() - t) / BATCHES;
  await store.close();
  // The writer's own work, on a store of its own with the same searches.
  fs.mkdirSync(path.join(dir, 'b'));
  const db = openDatabase(path.join(dir, 'b'));
  const users = sqliteUserRollup(db);
  const apply = db.transaction((rows: SearchRecord[]) =>
    users.added(searchUsers(rows.map((r) => ({ datasetId: r.datasetId, createdAt: r.createdAt, searchType: r.kind, searchMethod: r.searchMethod, userId: r.userId })))),
  );
  t = performance.now();
  for (const b of batches) apply(b);
  const own = (performance.now() - t) / BATCHES;
  db.close();
  console.log(`# per-user rollup writes, ${machine()}`);
  console.log(`- ${BATCHES} batches of ${BATCH} searches (2 hours each), ${USERS} users, 90% with a user`);
  console.log(`- insertSearches: ${whole.toFixed(2)} ms per batch (${((whole / BATCH) * 1000).toFixed(1)} µs per search), of which the per-user writer ${own.toFixed(2)} ms (${((own / whole) * 100).toFixed(0)}%)`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
