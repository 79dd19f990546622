/** The per-dataset change log: every chunk write appends here in the same transaction. */
import type { ChangeLogEntry, ChangeLogRepository } from '../repository.js';
import type { Db } from './database.js';

/** Appends change-log entries; call only inside the transaction of the write it records. */
export class ChangeLogWriter {
  private readonly insert;

  constructor(db: Db) {
    this.insert = db.prepare('INSERT INTO change_log (dataset_id, chunk_id, op, created_at) VALUES (?, ?, ?, ?)');
  }

  /** Records that a chunk was created or changed. */
  upsert(datasetId: string, chunkId: string, now: number): void {
    this.insert.run(datasetId, chunkId, 'upsert', now);
  }

  /** Records that a chunk was removed. */
  delete(datasetId: string, chunkId: string, now: number): void {
    this.insert.run(datasetId, chunkId, 'delete', now);
  }
}

/** Reads the change log. */
export function sqliteChangeLog(db: Db): ChangeLogRepository {
  const since = db.prepare(
    'SELECT seq, dataset_id, chunk_id, op FROM change_log WHERE dataset_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  );
  const head = db.prepare('SELECT COALESCE(MAX(seq), 0) AS head FROM change_log');
  return {
    async since(datasetId, afterSeq, limit) {
      return (since.all(datasetId, afterSeq, limit) as { seq: number; dataset_id: string; chunk_id: string; op: ChangeLogEntry['op'] }[]).map(
        (r) => ({ seq: r.seq, datasetId: r.dataset_id, chunkId: r.chunk_id, op: r.op }),
      );
    },
    async head() {
      return (head.get() as { head: number }).head;
    },
  };
}
