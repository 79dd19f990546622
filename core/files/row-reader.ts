/**
 * The rows of a CSV or JSONL blob, read as a stream from a resumable byte cursor: the import job
 * reads a batch, commits its chunks and the last row's cursor, and after a crash reads again from
 * that cursor (core/domain/files.ts). Pure: bytes in, rows out; the blob store, the queue and the
 * store are the caller's.
 */
import type { ImportCursor } from '../domain/files.js';
import { readCsvRows } from './csv-rows.js';
import { readJsonlRows } from './jsonl-rows.js';
import type { OpenBlob, ReadOptions, ReadRow } from './read-row.js';

export { FileFormatError, MAX_ROW_BYTES, type OpenBlob, type ReadOptions, type ReadRow } from './read-row.js';

/**
 * Reads rows starting at `cursor` (null: the start). `open(start)` returns the blob's bytes from
 * byte `start`. Throws FileFormatError for a whole-file problem (after yielding the rows before it).
 */
export function readRows(kind: 'csv' | 'jsonl', open: OpenBlob, cursor: ImportCursor | null, options: ReadOptions = {}): AsyncGenerator<ReadRow> {
  return kind === 'csv' ? readCsvRows(open, cursor, options) : readJsonlRows(open, cursor, options);
}
