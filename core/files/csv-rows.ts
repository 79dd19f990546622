/**
 * CSV rows (RFC 4180) through csv-parse: quoted fields with embedded delimiters, newlines and
 * doubled quotes; CRLF or LF; a UTF-8 BOM at offset 0; the first record is the header. A record
 * whose field count differs from the header's is a row error and reading goes on; an empty cell
 * is absent from the row (as a JSON null is). A stray quote inside a field is kept as a character
 * (`relax_quotes`), as lenient CSV writers produce them, so the only mid-file failures are a quote
 * the file never closes and a record past the size bound. Invalid UTF-8 becomes U+FFFD.
 *
 * Resuming: after each record the parser is in its initial state (not quoting, no field, no
 * record), so parsing from the byte just after a record's delimiter, with the saved header and
 * no BOM check, yields exactly the records a whole read yields from there
 * (test/unit/row-reader.test.ts proves it on generated files fed in 1..7 byte pieces).
 */
import type { TransformCallback } from 'node:stream';
import { CsvError, Parser, type Options } from 'csv-parse';
import type { ImportCursor } from '../domain/files.js';
import { chunkBytes, FileFormatError, MAX_ROW_BYTES, readRow, type OpenBlob, type ReadOptions, type ReadRow } from './read-row.js';

/**
 * csv-parse with each record taken at the moment the parser emits it, when `info.bytes` is the
 * exact offset just after the record's delimiter (or the end of the blob for a last record
 * without one). Read from the stream's buffered side, a record would arrive after the parser had
 * moved on; the `info: true` option copies some fifteen fields per record and halved the
 * throughput (measured: 330k → 130k rows/s). So `push` is overridden, and the Transform's own
 * `_transform`/`_flush` are called synchronously, without the Writable machinery around them.
 */
class RecordTap extends Parser {
  constructor(
    options: Options,
    private readonly onRecord: (fields: string[], endByte: number) => void,
  ) {
    super(options);
  }

  override push(record: unknown): boolean {
    if (record !== null) this.onRecord(record as string[], this.info.bytes);
    return true;
  }

  /** Parses `bytes` (undefined: the end of the blob); returns the parser's error, if any. */
  feed(bytes: Buffer | undefined): Error | undefined {
    let failure: Error | undefined;
    const done: TransformCallback = (err) => {
      failure = err ?? undefined;
    };
    // The encoding argument is ignored: the parser reads bytes.
    if (bytes === undefined) this._flush(done);
    else this._transform(bytes, 'binary', done);
    return failure;
  }
}

/** Turns records into rows: the header first (unless resuming), then one row per record. */
class CsvRows {
  /** Rows of the last fed bytes, handed out and cleared by the reader. */
  readonly out: ReadRow[] = [];
  failure: FileFormatError | null = null;
  /** Index in the header of a column named `__proto__`, set with defineProperty (plain assignment would set the prototype). */
  private protoColumn = -1;

  constructor(
    /** Absolute offset of the parser's first byte in the blob. */
    private readonly base: number,
    public header: readonly string[] | null,
    /** 1-based number of the next record. */
    public nextRow: number,
    private readonly encodingOf: () => string | null,
  ) {
    if (header !== null) this.protoColumn = header.indexOf('__proto__');
  }

  readonly onRecord = (fields: string[], endByte: number): void => {
    if (this.failure !== null) return;
    const header = this.header;
    if (header === null) {
      this.failure = headerProblem(fields, this.encodingOf());
      this.header = fields;
      this.protoColumn = fields.indexOf('__proto__');
      return;
    }
    const row = this.nextRow++;
    const byteOffset = this.base + endByte;
    const n = header.length;
    if (fields.length !== n) {
      const has = fields.length === 1 ? '1 field' : `${fields.length} fields`;
      this.out.push(readRow(row, null, `row has ${has}, the header has ${n}`, byteOffset, header));
      return;
    }
    const value: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const cell = fields[i]!;
      if (cell === '') continue;
      if (i === this.protoColumn) Object.defineProperty(value, '__proto__', { value: cell, enumerable: true, writable: true, configurable: true });
      else value[header[i]!] = cell;
    }
    this.out.push(readRow(row, value, null, byteOffset, header));
  };

  /** Throws the whole-file error, if any: a bad header, or the parser's `err` at the current record. */
  check(err: Error | undefined, maxRowBytes: number): void {
    if (this.failure !== null) throw this.failure;
    if (err !== undefined) throw this.parserFailure(err, maxRowBytes);
  }

  private parserFailure(err: Error, maxRowBytes: number): FileFormatError {
    const where = this.header === null ? 'the header row' : `row ${this.nextRow}`;
    const code = err instanceof CsvError ? err.code : undefined;
    if (code === 'CSV_QUOTE_NOT_CLOSED') return new FileFormatError(`${where} opens a quoted field that the file never closes`);
    if (code === 'CSV_MAX_RECORD_SIZE') return new FileFormatError(`${where} is longer than ${maxRowBytes} bytes (is a quote left open?)`);
    return new FileFormatError(`${where} cannot be read as CSV: ${err.message}`);
  }
}

/** Why a header cannot name the columns, or null when it can. */
function headerProblem(names: readonly string[], encoding: string | null): FileFormatError | null {
  // csv-parse switches to UTF-16 on a UTF-16 BOM; a resumed read (no BOM in view) could not.
  if (encoding !== null && encoding !== 'utf8' && encoding !== 'utf-8') {
    return new FileFormatError(`the file is ${encoding}; save it as UTF-8`);
  }
  const seen = new Set<string>();
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (name.trim() === '') return new FileFormatError(`header column ${i + 1} has no name`);
    if (seen.has(name)) return new FileFormatError(`the header repeats the column "${name}"`);
    seen.add(name);
  }
  return null;
}

/** Reads a CSV blob's rows from `cursor` (null: the start, where the header is read). */
export async function* readCsvRows(open: OpenBlob, cursor: ImportCursor | null, options: ReadOptions = {}): AsyncGenerator<ReadRow> {
  const start = cursor?.byteOffset ?? 0;
  const resumeHeader = start > 0 ? (cursor?.header ?? null) : null;
  if (start > 0 && resumeHeader === null) throw new FileFormatError('the import cursor has no CSV header to resume with');
  const maxRowBytes = options.maxRowBytes ?? MAX_ROW_BYTES;
  const tap: RecordTap = new RecordTap(
    {
      bom: start === 0,
      // Explicit, not discovered: discovery decides per read, so a resumed read could decide otherwise.
      record_delimiter: ['\r\n', '\n'],
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: maxRowBytes,
    },
    (fields, endByte) => rows.onRecord(fields, endByte),
  );
  const rows = new CsvRows(start, resumeHeader, (cursor?.rowIndex ?? 0) + 1, () => tap.options.encoding);
  const out = rows.out;
  const stream = await open(start);
  for await (const chunk of stream) {
    const err = tap.feed(chunkBytes(chunk));
    for (let i = 0; i < out.length; i++) yield out[i]!;
    out.length = 0;
    rows.check(err, maxRowBytes);
  }
  const err = tap.feed(undefined);
  for (let i = 0; i < out.length; i++) yield out[i]!;
  out.length = 0;
  rows.check(err, maxRowBytes);
  if (rows.header === null) throw new FileFormatError('the file has no header row');
}
