/** SQLite file repository: `files` (migration 7), the records of CSV/JSONL imports and documents. */
import type { FileRecord } from '../../core/domain/files.js';
import { FILE_COLUMN_LIST, FILE_COLUMNS, fileFromRow, fileRowValues, newFileRecord, progressedFile, transitionedFile } from '../file-records.js';
import { datasetGone } from '../rag-records.js';
import type { FileRepository } from '../repository.js';
import { toJson } from '../rows.js';
import type { Db } from './database.js';

/** Whether a driver error is a foreign-key violation (the file's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

/** Builds the SQLite file repository. */
export function sqliteFiles(db: Db): FileRepository {
  const insert = db.prepare(`INSERT INTO files (${FILE_COLUMN_LIST}) VALUES (${FILE_COLUMNS.map(() => '?').join(', ')})`);
  const byId = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE id = ?`);
  const inDataset = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = ? AND id = ?`);
  const page = db.prepare(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?`);
  const count = db.prepare('SELECT COUNT(*) AS n FROM files WHERE dataset_id = ?').pluck();
  const rewriteStatus = db.prepare(
    'UPDATE files SET status = ?, size = ?, group_id = ?, rows_total = ?, failure = ?, updated_at = ? WHERE id = ?',
  );
  const rewriteProgress = db.prepare(
    `UPDATE files SET cursor = ?, rows_done = ?, rows_imported = ?, rows_skipped = ?, bytes_done = ?, errors = ?, error_count = ?, updated_at = ?
     WHERE id = ?`,
  );
  const remove = db.prepare('DELETE FROM files WHERE dataset_id = ? AND id = ?');

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

  const commitOne = db.transaction((...[id, progress]: Parameters<FileRepository['commitProgress']>): boolean => {
    const current = find(id);
    if (current?.status !== 'processing') return false;
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
      id,
    );
    return true;
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
    async transition(id, from, status, patch) {
      return transitionOne.immediate(id, from, status, patch);
    },
    async commitProgress(id, progress) {
      return commitOne.immediate(id, progress);
    },
    async delete(datasetId, id) {
      return remove.run(datasetId, id).changes > 0;
    },
  };
}
