/** PostgreSQL file repository: `files`, the records of CSV/JSONL imports and documents. */
import { FILE_COLUMN_LIST, FILE_COLUMNS, fileFromRow, fileRowValues, newFileRecord, progressedFile } from '../file-records.js';
import { datasetGone } from '../rag-records.js';
import type { FileRepository } from '../repository.js';
import { toJson } from '../rows.js';
import type { PgDb } from './database.js';

const INSERT = `INSERT INTO files (${FILE_COLUMN_LIST}) VALUES (${FILE_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

/**
 * The compare and set of a transition in one statement: the row changes only if its status is
 * one of `from` when the statement runs (another worker's UPDATE of the row waits for, then
 * re-checks against, this one's commit). Absent patch fields (NULL) keep the column, as
 * `transitionedFile` of ../file-records.ts does on SQLite; `failure` has a flag of its own
 * because null is a value it may be set to.
 */
const TRANSITION = `UPDATE files SET
    status = $3,
    size = COALESCE($4::bigint, size),
    group_id = COALESCE($5::text, group_id),
    rows_total = COALESCE($6::bigint, rows_total),
    failure = CASE WHEN $7::boolean THEN $8::text ELSE failure END,
    updated_at = GREATEST($9::bigint, updated_at)
  WHERE id = $1 AND status = ANY($2::text[])
  RETURNING ${FILE_COLUMN_LIST}`;

const PROGRESS = `UPDATE files SET cursor = $2, rows_done = $3, rows_imported = $4, rows_skipped = $5, bytes_done = $6, errors = $7, error_count = $8, updated_at = $9
  WHERE id = $1`;

/** Whether a driver error is a foreign-key violation (SQLSTATE 23503: the file's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23503';

/** Builds the PostgreSQL file repository. */
export function pgFiles(db: PgDb): FileRepository {
  return {
    async create(input) {
      const record = newFileRecord(input, Date.now());
      try {
        await db.run(INSERT, fileRowValues(record));
      } catch (err) {
        if (isForeignKeyViolation(err)) throw datasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      const row = await db.get(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = $1 AND id = $2`, [datasetId, id]);
      return row ? fileFromRow(row) : undefined;
    },
    async getById(id) {
      const row = await db.get(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE id = $1`, [id]);
      return row ? fileFromRow(row) : undefined;
    },
    async list(datasetId, pageNo, pageSize) {
      const [rows, count] = await Promise.all([
        // SQLite's LIMIT and OFFSET as PostgreSQL takes them: a negative limit is no limit, a negative offset none.
        db.all(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`, [
          datasetId,
          pageSize < 0 ? null : pageSize,
          Math.max(0, (pageNo - 1) * pageSize),
        ]),
        db.get<{ n: number }>('SELECT COUNT(*) AS n FROM files WHERE dataset_id = $1', [datasetId]),
      ]);
      return { files: rows.map(fileFromRow), total: count!.n };
    },
    async transition(id, from, status, patch = {}) {
      const row = await db.get(TRANSITION, [
        id,
        [...from],
        status,
        patch.size ?? null,
        patch.groupId ?? null,
        patch.rowsTotal ?? null,
        patch.failure !== undefined,
        patch.failure ?? null,
        Date.now(),
      ]);
      return row ? fileFromRow(row) : undefined;
    },
    commitProgress(id, progress) {
      // The row is locked (FOR UPDATE) before its counts and errors are read: a second commit or
      // a transition waits, and the status checked is the one written over.
      return db.tx(async (tx) => {
        const row = await tx.get(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE id = $1 FOR UPDATE`, [id]);
        if (row?.status !== 'processing') return false;
        const next = progressedFile(fileFromRow(row), progress, Date.now());
        await tx.run(PROGRESS, [
          id,
          toJson(next.cursor),
          next.rowsDone,
          next.rowsImported,
          next.rowsSkipped,
          next.bytesDone,
          JSON.stringify(next.errors),
          next.errorCount,
          next.updatedAt,
        ]);
        return true;
      });
    },
    async delete(datasetId, id) {
      return (await db.run('DELETE FROM files WHERE dataset_id = $1 AND id = $2', [datasetId, id])) > 0;
    },
  };
}
