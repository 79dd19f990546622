/**
 * The store writer thread of an HTTP process (see threaded-store.ts): its own connection to the
 * same SQLite file, running each write it is sent, in the order sent, and answering with the
 * result or the error. Started only by `withWriteThread`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { niceThisThread } from '../../core/domain/thread-entry.js';
import { openSqliteStore } from './sqlite-store.js';
import { encodeError, type WriteCall, type WriteReply } from './write-protocol.js';

if (!parentPort) throw new Error('store/sqlite/write-thread runs as a worker thread (see store/sqlite/threaded-store.ts)');
const port = parentPort;
const { dataDir, nice } = workerData as { dataDir: string; nice: number };
niceThisThread(nice);
const store = openSqliteStore(dataDir);

port.on('message', (call: WriteCall | { close: true }) => {
  if ('close' in call) {
    // Sent once every write has answered: close the connection and let the thread end.
    void store.close().finally(() => port.close());
    return;
  }
  const repository = store[call.repository] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  // Each write's SQL runs synchronously when called, so writes take effect in the order sent even
  // when a long one (a purge in slices) awaits between its transactions.
  repository[call.method]!(...call.args).then(
    (value) => port.postMessage({ id: call.id, value } satisfies WriteReply),
    (err: unknown) => port.postMessage({ id: call.id, error: encodeError(err) } satisfies WriteReply),
  );
});
port.postMessage({ ready: true });
