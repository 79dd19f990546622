/**
 * Report SQL run in a thread of its own (report-thread-entry.ts), started at the first report and
 * replaced if it dies. On SQLite every read is synchronous: a report over millions of analytics
 * rows run on the HTTP process's event loop would hold every search in flight for its duration.
 */
import { Worker } from 'node:worker_threads';
import { QuarryError } from '../../core/domain/errors.js';
import { threadEntry } from '../../core/domain/thread-entry.js';
import type { ReportSql } from '../reports/report-sql.js';
import { decodeError, type EncodedError } from './write-protocol.js';

type Reply = { readonly id: number; readonly rows: Record<string, any>[] } | { readonly id: number; readonly error: EncodedError };

interface Pending {
  readonly resolve: (rows: Record<string, any>[]) => void;
  readonly reject: (err: Error) => void;
}

/** Report SQL over the SQLite file `file` in a thread at Linux nice `nice`; `close` ends the thread. */
export function threadedReportSql(file: string, nice: number): ReportSql & { close(): Promise<void> } {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let worker: Worker | null = null;
  let closed = false;

  const start = (): Worker => {
    const w = new Worker(threadEntry(import.meta.url, './report-thread-entry'), { workerData: { file, nice } });
    // Reports are not what keeps a process alive.
    w.unref();
    w.on('message', (m: Reply) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if ('error' in m) p.reject(decodeError(m.error));
      else p.resolve(m.rows);
    });
    w.on('exit', () => {
      if (worker === w) worker = null;
      // Reports in flight die with the thread; their callers may retry, the next report starts a new one.
      const lost = [...pending.values()];
      pending.clear();
      for (const p of lost) p.reject(new QuarryError('unavailable', 'the analytics report thread stopped; retry shortly', { retryAfterSeconds: 1 }));
    });
    w.on('error', () => {});
    return w;
  };

  return {
    dialect: 'sqlite',
    all(sql, params) {
      if (closed) return Promise.reject(new QuarryError('unavailable', 'the store is closing', { retryAfterSeconds: 1 }));
      worker ??= start();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as Pending['resolve'], reject });
        worker!.postMessage({ id, sql, params });
      });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}
