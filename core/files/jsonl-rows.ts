/**
 * JSONL rows: the blob is split on `\n` at the byte level (a `\r` before it is JSON whitespace),
 * and each non-blank line is `JSON.parse`d. Lines are numbered from 1, blank ones included. A
 * line that is not a JSON object, or not JSON, is a row error; a line longer than the bound is a
 * row error too, skipped without being held in memory. A final line without a newline is read. A
 * UTF-8 BOM at offset 0 is skipped; invalid UTF-8 becomes U+FFFD before parsing (as the WHATWG
 * decoder does), so such a line still imports, with replacement characters.
 *
 * Memory: one line at a time (pieces of a line that spans stream chunks are kept until its
 * newline, then joined once), never the file.
 */
import type { ImportCursor } from '../domain/files.js';
import { chunkBytes, MAX_ROW_BYTES, readRow, type OpenBlob, type ReadOptions, type ReadRow } from './read-row.js';

const NEWLINE = 0x0a;
/** Longest JSON.parse message kept in a row error (V8 quotes part of the line in it). */
const MAX_MESSAGE = 300;

/** Whether bytes [from, to) hold only JSON whitespace (space, tab, CR). */
function isBlank(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/** What a parsed value that is not an object is, for the row error. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Parses line `line` (bytes [from, to) of `bytes`, no newline) into a row; null for a blank line. */
function lineRow(bytes: Buffer, from: number, to: number, line: number, byteOffset: number, atBlobStart: boolean): ReadRow | null {
  // A BOM can only open the blob: elsewhere it is content (and JSON.parse refuses it).
  if (atBlobStart && to - from >= 3 && bytes[from] === 0xef && bytes[from + 1] === 0xbb && bytes[from + 2] === 0xbf) from += 3;
  if (isBlank(bytes, from, to)) return null;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8', from, to));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return readRow(line, null, `invalid JSON: ${message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message}`, byteOffset, null);
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return readRow(line, value as Record<string, unknown>, null, byteOffset, null);
  return readRow(line, null, `line ${line} is not a JSON object (${kindOf(value)})`, byteOffset, null);
}

/** Reads a JSONL blob's rows from `cursor` (null: the start). */
export async function* readJsonlRows(open: OpenBlob, cursor: ImportCursor | null, options: ReadOptions = {}): AsyncGenerator<ReadRow> {
  const start = cursor?.byteOffset ?? 0;
  const maxRowBytes = options.maxRowBytes ?? MAX_ROW_BYTES;
  const tooLong = `line is longer than ${maxRowBytes} bytes`;
  /** Lines before the current one: the current line's number is line + 1. */
  let line = cursor?.rowIndex ?? 0;
  /** Absolute offsets of the current chunk's first byte and of the current line's first byte. */
  let chunkStart = start;
  let lineStart = start;
  /** The current line's bytes from earlier chunks (none while `overlong`). */
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  /** The current line passed the bound: its bytes are dropped until its newline. */
  let overlong = false;
  const stream = await open(start);
  for await (const piece of stream) {
    const chunk = chunkBytes(piece);
    let pos = 0;
    for (let nl = chunk.indexOf(NEWLINE, pos); nl !== -1; nl = chunk.indexOf(NEWLINE, pos)) {
      line++;
      const end = chunkStart + nl + 1;
      let row: ReadRow | null;
      if (overlong || pendingBytes + (nl - pos) > maxRowBytes) {
        row = readRow(line, null, tooLong, end, null);
      } else if (pendingBytes === 0) {
        row = lineRow(chunk, pos, nl, line, end, lineStart === 0);
      } else {
        pending.push(chunk.subarray(pos, nl));
        const whole = Buffer.concat(pending, pendingBytes + (nl - pos));
        row = lineRow(whole, 0, whole.length, line, end, lineStart === 0);
      }
      pending.length = 0;
      pendingBytes = 0;
      overlong = false;
      lineStart = end;
      pos = nl + 1;
      if (row !== null) yield row;
    }
    if (pos < chunk.length && !overlong) {
      pendingBytes += chunk.length - pos;
      if (pendingBytes > maxRowBytes) {
        overlong = true;
        pending.length = 0;
        pendingBytes = 0;
      } else {
        pending.push(pos === 0 ? chunk : chunk.subarray(pos));
      }
    }
    chunkStart += chunk.length;
  }
  if (overlong) {
    yield readRow(line + 1, null, tooLong, chunkStart, null);
  } else if (pendingBytes > 0) {
    const whole = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    const row = lineRow(whole, 0, whole.length, line + 1, chunkStart, lineStart === 0);
    if (row !== null) yield row;
  }
}
