/**
 * The analytics report thread of an HTTP process (see report-thread.ts): a connection that only reads
 * to the SQLite file that runs each report statement it is sent and answers with the rows or the
 * error. A report scanning millions of rows takes this thread's time, never the event loop's.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { niceThisThread } from '../../core/domain/thread-entry.js';
import { encodeError } from './write-protocol.js';

if (!parentPort) throw new Error('store/sqlite/report-thread-entry runs as a worker thread (see store/sqlite/report-thread.ts)');
const port = parentPort;
const { file, nice } = workerData as { file: string; nice: number };
niceThisThread(nice);
// Not opened read-only: a read-only connection intermittently read the database without the
// commits other processes had made in the WAL (reports of rows seeded by another process came
// back empty, 2 runs of 3), so it is a read-write connection that refuses writes instead.
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('query_only = ON');

/** Most statements kept prepared (report variants have a few shapes each). */
const PREPARED_STATEMENTS = 256;
const prepared = new Map<string, Database.Statement>();

port.on('message', (call: { id: number; sql: string; params: unknown[] } | { close: true }) => {
  if ('close' in call) {
    db.close();
    port.close();
    return;
  }
  try {
    let statement = prepared.get(call.sql);
    if (!statement) {
      if (prepared.size >= PREPARED_STATEMENTS) prepared.clear();
      statement = db.prepare(call.sql);
      prepared.set(call.sql, statement);
    }
    port.postMessage({ id: call.id, rows: statement.all(...call.params) });
  } catch (err) {
    port.postMessage({ id: call.id, error: encodeError(err) });
  }
});
