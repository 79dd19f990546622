/**
 * The analytics report thread of an HTTP process (see report-thread.ts): a read-only connection
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
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');

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
