/**
 * What the CSV and JSONL readers hand the import: one row at a time, each with the cursor that
 * resumes reading just after it, and the one error that fails a whole file.
 */
import type { Readable } from 'node:stream';
import type { ImportCursor } from '../domain/files.js';

/** One row read from a CSV/JSONL blob: its value or why it is unusable, and the cursor just after it. */
export interface ReadRow {
  /** 1-based: CSV data record number (header excluded); JSONL line number (blank lines skipped but counted as lines). */
  readonly row: number;
  /** row - 1: used in tracking ids `<group_tracking_id>|<rowIndex>`. */
  readonly rowIndex: number;
  /** The row's fields; null when `error` is set. */
  readonly value: Record<string, unknown> | null;
  /** Why the row cannot be imported (the rest of the file still is); null for a usable row. */
  readonly error: string | null;
  /** Resume point just after this row: its byte offset in the blob, the index of the NEXT row, the CSV header. */
  readonly cursor: ImportCursor;
}

/**
 * A whole-file problem (repeated header column, empty header name, no header, an unclosed quote,
 * a record past the size bound). The import fails the file with this message.
 */
export class FileFormatError extends Error {
  override readonly name = 'FileFormatError';
}

/** Bounds of one read. */
export interface ReadOptions {
  /**
   * Largest row, in bytes: a CSV record (an unclosed quote would otherwise buffer the rest of a
   * 10 GB file in memory) or a JSONL line. A longer CSV record fails the file (where it ends is
   * unknown); a longer JSONL line is a row error and is skipped without being held.
   * @defaultValue 32 MiB
   */
  readonly maxRowBytes?: number;
}

/** Default of {@link ReadOptions.maxRowBytes}: far above a chunk's text and metadata caps, far below memory. */
export const MAX_ROW_BYTES = 32 * 1024 * 1024;

/** Where a blob's bytes come from: its bytes from byte `start` to the end. */
export type OpenBlob = (start: number) => Promise<Readable>;

/** Builds a row (one shape for every row, so the readers' call sites stay monomorphic). */
export function readRow(
  row: number,
  value: Record<string, unknown> | null,
  error: string | null,
  byteOffset: number,
  header: readonly string[] | null,
): ReadRow {
  return { row, rowIndex: row - 1, value, error, cursor: { byteOffset, rowIndex: row, header } };
}

/** A stream chunk as bytes: a reader counts bytes, so a stream decoding to strings is re-encoded. */
export function chunkBytes(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  throw new TypeError(`a blob stream gave a ${typeof chunk}, not bytes`);
}
