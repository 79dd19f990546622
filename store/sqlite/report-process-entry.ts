/**
 * An analytics report process of the HTTP process (see report-process.ts): a connection that only
 * reads the SQLite file, running each statement it is sent and answering with the rows or the
 * error. A process, not a thread, so that a statement past its deadline can be stopped: killed.
 * Started as `node report-process-entry.js <file> <nice>` with an IPC channel.
 */
import Database from 'better-sqlite3';
import { niceThisProcess } from '../../core/domain/thread-entry.js';
import type { ReportReply } from './report-process.js';
import { encodeError } from './write-protocol.js';

const send = process.send?.bind(process);
if (!send) throw new Error('store/sqlite/report-process-entry runs as a child process with an IPC channel (see store/sqlite/report-process.ts)');
const reply = (m: ReportReply): void => {
  // A channel closed under the send: the HTTP process is gone, and nobody waits for this answer.
  send(m, undefined, undefined, (err: Error | null) => {
    if (err) process.exit(0);
  });
};
const [file, nice] = process.argv.slice(2);
if (!file) throw new Error('store/sqlite/report-process-entry needs the SQLite file as its first argument');
// The main thread runs the statements: Linux keeps nice per thread, and this is the one that counts.
niceThisProcess(Number(nice) || 0);
// Not opened read-only: a read-only connection intermittently read the database without the
// commits other processes had made in the WAL (reports of rows seeded by another process came
// back empty, 2 runs of 3), so it is a read-write connection that refuses writes instead.
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('query_only = ON');

/** Most statements kept prepared (report variants have a few shapes each). */
const PREPARED_STATEMENTS = 256;
const prepared = new Map<string, Database.Statement>();

process.on('message', (call: { sql: string; params: unknown[] }) => {
  try {
    let statement = prepared.get(call.sql);
    if (!statement) {
      if (prepared.size >= PREPARED_STATEMENTS) prepared.clear();
      statement = db.prepare(call.sql);
      prepared.set(call.sql, statement);
    }
    reply({ rows: statement.all(...call.params) as Record<string, any>[] });
  } catch (err) {
    reply({ error: encodeError(err) });
  }
});
// The HTTP process is gone (closed the channel, or died): nothing will ask for a report again.
process.on('disconnect', () => process.exit(0));
reply({ ready: true });
