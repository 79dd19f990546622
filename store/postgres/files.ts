/** PostgreSQL file repository: `files`, the records of CSV/JSONL imports and documents. */
import { QuarryError } from '../../core/domain/errors.js';
import type { FileBatch, FileBatchOutcome, FileProgress, FileRecord, RowError } from '../../core/domain/files.js';
import { batchProgress, refusedForData } from '../file-batch.js';
import { FILE_COLUMN_LIST, FILE_COLUMNS, fileFromRow, fileRowValues, newFileRecord, progressedFile, rowsToComeSql } from '../file-records.js';
import { datasetGone } from '../rag-records.js';
import type { FileRepository } from '../repository.js';
import { toJson } from '../rows.js';
import { CHANGES_CHANNEL, conflictingTrackingId, datasetTx } from './change-log.js';
import { writeChunks } from './chunks.js';
import { byKeys } from './keyed-reads.js';
import type { PgDb, Tx } from './database.js';

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

const TO_COME = rowsToComeSql('$1');

/** Whether a driver error is a foreign-key violation (SQLSTATE 23503: the file's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23503';

/** Writes a processing file's progress (`current`, read FOR UPDATE in `tx`) with one batch's counts added. */
async function writeProgress(tx: Tx, current: FileRecord, progress: FileProgress): Promise<void> {
  const next = progressedFile(current, progress, Date.now());
  await tx.run(PROGRESS, [
    current.id,
    toJson(next.cursor),
    next.rowsDone,
    next.rowsImported,
    next.rowsSkipped,
    next.bytesDone,
    JSON.stringify(next.errors),
    next.errorCount,
    next.updatedAt,
  ]);
}

/**
 * Runs `write` in a savepoint of `tx`: a data refusal undoes it alone (true: written, false:
 * refused, `onRefused` told why), and the transaction goes on; anything else ends the transaction.
 * A unique violation (a driver error, not a refusal) is not the data's fault but a writer that
 * skipped the dataset lock: it ends the transaction too, and datasetTx runs it again.
 */
async function inSavepoint(tx: Tx, write: () => Promise<unknown>, onRefused: (err: QuarryError) => void): Promise<boolean> {
  await tx.run('SAVEPOINT file_batch');
  try {
    await write();
  } catch (err) {
    if (!refusedForData(err)) throw err;
    await tx.run('ROLLBACK TO SAVEPOINT file_batch');
    onRefused(err);
    return false;
  }
  await tx.run('RELEASE SAVEPOINT file_batch');
  return true;
}

/**
 * Writes a batch's rows in `tx` (which holds the dataset's lock): all at once, or, when that is
 * refused for one row's sake, row by row, the refused rows becoming row errors.
 */
async function writeRows(tx: Tx, datasetId: string, rows: FileBatch['rows'], upsert: boolean): Promise<{ imported: number; errors: RowError[] }> {
  if (rows.length === 0) return { imported: 0, errors: [] };
  const flags = rows.map(() => upsert);
  const whole = await inSavepoint(
    tx,
    () =>
      writeChunks(
        tx,
        datasetId,
        rows.map((r) => r.input),
        flags,
      ),
    () => {},
  );
  if (whole) return { imported: rows.length, errors: [] };
  const errors: RowError[] = [];
  let imported = 0;
  for (const r of rows) {
    if (await inSavepoint(tx, () => writeChunks(tx, datasetId, [r.input], [upsert]), (err) => errors.push({ row: r.row, reason: err.message }))) imported++;
  }
  // The change-log notice queued by the refused whole-batch write went with its savepoint, and
  // appendChanges queues one per transaction: queue it again (repeats within a commit are folded).
  if (imported > 0) await tx.run('SELECT pg_notify($1::text, $2::text)', [CHANGES_CHANNEL, datasetId]);
  return { imported, errors };
}

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
    async scroll(datasetId, from, limit) {
      const rows = await db.all(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE dataset_id = $1 AND id >= $2 ORDER BY id LIMIT $3`, [datasetId, from ?? '', limit]);
      return rows.map(fileFromRow);
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
        await writeProgress(tx, fileFromRow(row), progress);
        return true;
      });
    },
    commitBatch(id, datasetId, batch) {
      // The dataset's lock first (datasetTx), as every chunk write takes it, then the file's row:
      // the chunks and the progress commit together, and a second commit or a transition waits.
      return datasetTx(
        db,
        datasetId,
        async (tx): Promise<FileBatchOutcome | undefined> => {
          const row = await tx.get(`SELECT ${FILE_COLUMN_LIST} FROM files WHERE id = $1 AND dataset_id = $2 FOR UPDATE`, [id, datasetId]);
          if (row?.status !== 'processing') return undefined;
          let rows = batch.rows;
          if (!batch.upsert) {
            const tids = rows.flatMap((r) => (typeof r.input.trackingId === 'string' ? [r.input.trackingId] : []));
            const taken = new Set(
              tids.length === 0 ? [] : (await tx.all<{ tracking_id: string }>(byKeys('tracking_id', 'chunks', 'tracking_id'), [datasetId, tids])).map((r) => r.tracking_id),
            );
            rows = rows.filter((r) => !(typeof r.input.trackingId === 'string' && taken.has(r.input.trackingId)));
          }
          const { imported, errors } = await writeRows(tx, datasetId, rows, batch.upsert);
          const outcome: FileBatchOutcome = { imported, skipped: batch.rows.length - rows.length, errors };
          await writeProgress(tx, fileFromRow(row), batchProgress(batch.progress, outcome));
          return outcome;
        },
        (err) =>
          new QuarryError(
            'duplicate_tracking_id',
            `A chunk with tracking_id "${conflictingTrackingId(err, datasetId)}" already exists in this dataset; the batch was not stored`,
            { cause: err },
          ),
      );
    },
    async delete(datasetId, id) {
      return (await db.run('DELETE FROM files WHERE dataset_id = $1 AND id = $2', [datasetId, id])) > 0;
    },
    async rowsToCome(datasetId) {
      return Math.floor((await db.get<{ n: number }>(TO_COME, [datasetId]))!.n);
    },
  };
}
