/** SQLite file repository: `files` (migration 7), the records of CSV/JSONL imports and documents. */
import type { FileBatch, FileBatchOutcome, FileProgress, FileRecord, RowError } from '../../core/domain/files.js';
import { batchProgress, refusedForData } from '../file-batch.js';
import { FILE_COLUMN_LIST, FILE_COLUMNS, fileFromRow, fileRowValues, newFileRecord, progressedFile, rowsToComeSql, transitionedFile } from '../file-records.js';
import { datasetGone } from '../rag-records.js';
import type { FileRepository } from '../repository.js';
import { toJson } from '../rows.js';
import { ChangeLogWriter } from './change-log.js';
import { chunkBatchWriter } from './chunks.js';
import type { Db } from './database.js';

/** Whether a driver error is a foreign-key violation (the file's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

/** Builds the SQLite file repository. */
export function sqliteFiles(db: Db): FileRepository {
  const insert = db.prepare(`INSERT INTO files (${FILE_COLUMN_LIST}) VALUES (${FILE_COLUMNS.map(() => '?').join(', ')})`);
  const byId = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE id = ?`);
  const inDataset = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = ? AND id = ?`);
  const page = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?`);
  const fromId = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = ? AND id >= ? ORDER BY id LIMIT ?`);
  const count = db.prepare('SELECT COUNT(*) AS n FROM files WHERE dataset_id = ?').pluck();
  const rewriteStatus = db.prepare(
    'UPDATE files SET status = ?, size = ?, group_id = ?, rows_total = ?, failure = ?, updated_at = ? WHERE id = ?',
  );
  const rewriteProgress = db.prepare(
    `UPDATE files SET cursor = ?, rows_done = ?, rows_imported = ?, rows_skipped = ?, bytes_done = ?, errors = ?, error_count = ?, updated_at = ?
     WHERE id = ?`,
  );
  const remove = db.prepare('DELETE FROM files WHERE dataset_id = ? AND id = ?');
  const toCome = db.prepare(rowsToComeSql('?')).pluck();

  const find = (id: string): FileRecord | undefined => {
    const row = byId.get(id) as Record<string, unknown> | undefined;
    return row ? fileFromRow(row) : undefined;
  };

  // Each a read then a write in one transaction, run IMMEDIATE: the write lock is taken before the
  // status is read, so the status checked is the one written over (compare and set).
  const transitionOne = db.transaction((...[id, from, status, patch]: Parameters<FileRepository['transition']>): FileRecord | undefined => {
    const current = find(id);
    if (!current || !from.includes(current.status)) return undefined;
    const next = transitionedFile(current, status, patch ?? {}, Date.now());
    rewriteStatus.run(next.status, next.size, next.groupId, next.rowsTotal, next.failure, next.updatedAt, id);
    return next;
  });

  const writeProgress = (current: FileRecord, progress: FileProgress): void => {
    const next = progressedFile(current, progress, Date.now());
    rewriteProgress.run(
      toJson(next.cursor),
      next.rowsDone,
      next.rowsImported,
      next.rowsSkipped,
      next.bytesDone,
      JSON.stringify(next.errors),
      next.errorCount,
      next.updatedAt,
      current.id,
    );
  };

  const commitOne = db.transaction((...[id, progress]: Parameters<FileRepository['commitProgress']>): boolean => {
    const current = find(id);
    if (current?.status !== 'processing') return false;
    writeProgress(current, progress);
    return true;
  });

  // A file's batch: its chunks through the write of chunks.createMany (a savepoint here, so a
  // refused batch or row is undone alone), then its progress, in one transaction: the chunks a
  // batch stored and the cursor that passes them commit together or not at all.
  const writeChunks = chunkBatchWriter(db, new ChangeLogWriter(db));
  const trackingTaken = db.prepare('SELECT 1 FROM chunks WHERE dataset_id = ? AND tracking_id = ?').pluck();
  // Without upsert the rows whose tracking ids are stored were left out already (commitBatchOne),
  // in this transaction: the batch's write need not look them up again (`absent`; it still
  // refuses a tracking id repeated within the batch).
  const writeRows = (datasetId: string, rows: FileBatch['rows'], upsert: boolean): { imported: number; errors: RowError[] } => {
    if (rows.length === 0) return { imported: 0, errors: [] };
    try {
      writeChunks(
        datasetId,
        rows.map((r) => r.input),
        rows.map(() => upsert),
        !upsert,
      );
      return { imported: rows.length, errors: [] };
    } catch (err) {
      if (!refusedForData(err)) throw err;
    }
    // One row spoiled the batch: find it (them) by writing each row alone.
    const errors: RowError[] = [];
    let imported = 0;
    for (const r of rows) {
      try {
        // Looked up again: an earlier row of this batch, written alone just before, may hold its tracking id.
        writeChunks(datasetId, [r.input], [upsert]);
        imported++;
      } catch (err) {
        if (!refusedForData(err)) throw err;
        errors.push({ row: r.row, reason: err.message });
      }
    }
    return { imported, errors };
  };
  const commitBatchOne = db.transaction((...[id, datasetId, batch]: Parameters<FileRepository['commitBatch']>): FileBatchOutcome | undefined => {
    const current = find(id);
    if (current?.status !== 'processing' || current.datasetId !== datasetId) return undefined;
    const rows = batch.upsert ? batch.rows : batch.rows.filter((r) => !(r.input.trackingId && trackingTaken.get(datasetId, r.input.trackingId)));
    const { imported, errors } = writeRows(datasetId, rows, batch.upsert);
    const outcome: FileBatchOutcome = { imported, skipped: batch.rows.length - rows.length, errors };
    writeProgress(current, batchProgress(batch.progress, outcome));
    return outcome;
  });

  return {
    async create(input) {
      const record = newFileRecord(input, Date.now());
      try {
        insert.run(...fileRowValues(record));
      } catch (err) {
        if (isForeignKeyViolation(err)) throw datasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      const row = inDataset.get(datasetId, id) as Record<string, unknown> | undefined;
      return row ? fileFromRow(row) : undefined;
    },
    async getById(id) {
      return find(id);
    },
    async list(datasetId, pageNo, pageSize) {
      const rows = page.all(datasetId, pageSize, Math.max(0, (pageNo - 1) * pageSize)) as Record<string, unknown>[];
      return { files: rows.map(fileFromRow), total: count.get(datasetId) as number };
    },
    async scroll(datasetId, from, limit) {
      return (fromId.all(datasetId, from ?? '', limit) as Record<string, unknown>[]).map(fileFromRow);
    },
    async transition(id, from, status, patch) {
      return transitionOne.immediate(id, from, status, patch);
    },
    async commitProgress(id, progress) {
      return commitOne.immediate(id, progress);
    },
    async commitBatch(id, datasetId, batch) {
      return commitBatchOne.immediate(id, datasetId, batch);
    },
    async delete(datasetId, id) {
      return remove.run(datasetId, id).changes > 0;
    },
    async rowsToCome(datasetId) {
      return Math.floor(toCome.get(datasetId) as number);
    },
  };
}
