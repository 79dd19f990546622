/**
 * SQLite's write transactions that read first must take the write lock when they begin. A
 * DEFERRED transaction reads from a snapshot, and its first write then fails at once with
 * SQLITE_BUSY (busy_timeout does not apply) whenever another connection committed since that
 * snapshot. The job workers commit analytics batches from their own connection all the time, so a
 * rating (`PUT /api/analytics/search`, which reads the search's previous rating before writing its
 * own) answered 500 now and then (a CI run of search-analytics.test.ts). Here another thread
 * commits in a loop while this one rates searches.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../core/domain/ids.js';
import { searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, type TestStore } from '../helpers/both-stores.js';

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore('sqlite');
});
afterAll(async () => {
  await t?.dispose();
});

/** A thread committing one small write after another into the same database until it is told to stop. */
function startWriter(file: string): { ready: Promise<void>; stop: () => Promise<number> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require(workerData.module);
    const db = new Database(workerData.file);
    db.pragma('busy_timeout = 5000');
    db.exec('CREATE TABLE IF NOT EXISTS writer_ticks (n INTEGER)');
    const insert = db.prepare('INSERT INTO writer_ticks (n) VALUES (?)');
    let stop = false;
    parentPort.on('message', () => { stop = true; });
    let n = 0;
    parentPort.postMessage('ready');
    const tick = () => {
      for (let i = 0; i < 50 && !stop; i++) insert.run(n++);
      if (stop) { db.close(); parentPort.postMessage(n); return; }
      setImmediate(tick);
    };
    tick();`;
  const worker = new Worker(code, { eval: true, workerData: { file, module: createRequire(import.meta.url).resolve('better-sqlite3') } });
  let commits: (n: number) => void = () => {};
  const done = new Promise<number>((resolve) => (commits = resolve));
  const ready = new Promise<void>((resolve) => {
    worker.on('message', (m: unknown) => (m === 'ready' ? resolve() : commits(m as number)));
  });
  return {
    ready,
    stop: async () => {
      worker.postMessage('stop');
      const n = await done;
      await worker.terminate();
      return n;
    },
  };
}

it('rates searches while another connection commits, every rating stored and none refused', async () => {
  const datasetId = newId();
  const now = Date.now();
  const searches = Array.from({ length: 200 }, (_, i) => searchRecord({ id: newId(), datasetId, createdAt: now - i }));
  expect(await t.store.analytics.insertSearches(searches)).toBe(200);
  const writer = startWriter(path.join(t.loc.dataDir, 'quarry.sqlite'));
  await writer.ready;
  const failures: string[] = [];
  const deadline = Date.now() + 1500;
  let ratings = 0;
  try {
    while (Date.now() < deadline) {
      const s = searches[ratings % searches.length]!;
      try {
        await t.store.analytics.rate([{ queryId: s.id, kind: 'search', datasetId, rating: (ratings % 5) - 2, note: null, metadata: null, createdAt: Date.now() }]);
      } catch (err) {
        failures.push((err as Error).message);
      }
      ratings++;
      // Let the writer's commits land between ratings, as the job workers' do between requests.
      if (ratings % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    }
  } finally {
    const commits = await writer.stop();
    // Not vacuous: the other connection did commit throughout.
    expect(commits).toBeGreaterThan(100);
  }
  expect(ratings).toBeGreaterThan(100);
  expect(failures.slice(0, 3)).toEqual([]);
});
