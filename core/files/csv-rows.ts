/**
 * CSV rows (RFC 4180) through PapaParse: quoted fields with embedded delimiters, newlines and
 * doubled quotes; CRLF or LF, mixed in one file; a UTF-8 BOM at offset 0; the first record is the
 * header. A record whose field count differs from the header's is a row error and reading goes
 * on; an empty cell is absent from the row (as a JSON null is). A stray quote inside a field is
 * kept as a character, as lenient CSV writers produce them, so the only mid-file failures are a
 * quote the file never closes and a record past the size bound. Invalid UTF-8 becomes U+FFFD.
 *
 * Why PapaParse, and why this way: csv-parse, used before, took ~7 µs a record of a product file
 * (~390 bytes) in its byte-at-a-time loop, the largest part of the job worker's time in an import
 * after SQLite; PapaParse's `indexOf` scanning takes under 1 µs. It parses strings, and a resume
 * needs the exact byte offset after each record, so it is given the bytes as latin1 (one
 * character per byte: offsets are byte offsets) and only fields holding bytes above 0x7F are
 * decoded as UTF-8. Delimiters, quotes and line ends are ASCII, which no byte of a multibyte UTF-8
 * character is, so the latin1 view splits the records and fields the UTF-8 text has.
 *
 * Resuming: every parse starts at a record boundary, so parsing from the byte just after a
 * record's line end, with the saved header and no BOM check, yields exactly the records a whole
 * read yields from there (test/unit/row-reader.test.ts proves it on generated files fed in 1..7
 * byte pieces, and compares every read with csv-parse's records).
 */
import { isAscii } from 'node:buffer';
import Papa from 'papaparse';
import type { ImportCursor } from '../domain/files.js';
import { chunkBytes, FileFormatError, MAX_ROW_BYTES, readRow, type OpenBlob, type ReadOptions, type ReadRow } from './read-row.js';

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;
/** Bytes above 0x7F in a latin1 view: the field holds UTF-8 to decode. */
const HIGH = /[\x80-\xff]/;

/** The step results PapaParse hands over for one record (`Papa.Parser` with `step`). */
interface StepResult {
  readonly data: string[][];
  readonly errors: readonly { readonly code: string }[];
  readonly meta: { readonly cursor: number };
}

/** Turns records into rows: the header first (unless resuming), then one row per record. */
class CsvRows {
  /** Rows of the last fed bytes, handed out and cleared by the reader. */
  readonly out: ReadRow[] = [];
  failure: FileFormatError | null = null;
  /** Index in the header of a column named `__proto__`, set with defineProperty (plain assignment would set the prototype). */
  private protoColumn = -1;

  constructor(
    public header: readonly string[] | null,
    /** 1-based number of the next record. */
    public nextRow: number,
  ) {
    if (header !== null) this.protoColumn = header.indexOf('__proto__');
  }

  /** Takes one record's fields (decoded) and the absolute byte offset just after it. */
  onRecord(fields: string[], byteOffset: number): void {
    const header = this.header;
    if (header === null) {
      this.failure = headerProblem(fields);
      this.header = fields;
      this.protoColumn = fields.indexOf('__proto__');
      return;
    }
    const row = this.nextRow++;
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
  }

  /** Where the current record is, for a whole-file error. */
  where(): string {
    return this.header === null ? 'the header row' : `row ${this.nextRow}`;
  }
}

/** Why a header cannot name the columns, or null when it can. */
function headerProblem(names: readonly string[]): FileFormatError | null {
  const seen = new Set<string>();
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (name.trim() === '') return new FileFormatError(`header column ${i + 1} has no name`);
    if (seen.has(name)) return new FileFormatError(`the header repeats the column "${name}"`);
    seen.add(name);
  }
  return null;
}

/** The encoding a UTF-16 byte order mark names, or null. */
function utf16Bom(bytes: Buffer): string | null {
  if (bytes.length < 2) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf16be';
  return null;
}

/** Whether `bytes` starts with the UTF-8 BOM. */
const hasUtf8Bom = (bytes: Buffer): boolean => bytes.length >= 3 && UTF8_BOM.every((b, i) => bytes[i] === b);

/**
 * The record splitter: bytes in, complete records out with the offset after each; the bytes of
 * an incomplete last record are kept until more come.
 */
class RecordSplitter {
  /** Bytes not yet parsed into a complete record, from absolute offset `pendingAt`. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pendingAt: number;
  /** Size of the last parse that found no complete record: the next waits for twice as much (a long record costs linear time). */
  private lastMiss = 0;
  // Per parse, read by the step callback.
  private text = '';
  private ascii = true;
  private base = 0;
  private recordStart = 0;
  private failure: FileFormatError | null = null;
  private readonly parser: Papa.Parser;

  constructor(
    start: number,
    private readonly rows: CsvRows,
    private readonly maxRowBytes: number,
  ) {
    this.pendingAt = start;
    this.parser = new Papa.Parser({ delimiter: ',', newline: '\n', quoteChar: '"', escapeChar: '"', step: (r: StepResult) => this.onStep(r) });
  }

  /** Adds bytes; parses them when there is enough new to try. */
  feed(bytes: Buffer): void {
    if (this.failed()) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes < 2 * this.lastMiss && this.pendingBytes <= this.maxRowBytes) return;
    this.parse(false);
  }

  /** Parses what is left as the last record. */
  end(): void {
    if (!this.failed()) this.parse(true);
  }

  /** Throws the whole-file error met so far, if any (called once the rows before it are handed out). */
  check(): void {
    if (this.failure !== null) throw this.failure;
    if (this.rows.failure !== null) throw this.rows.failure;
  }

  private failed(): boolean {
    return this.failure !== null || this.rows.failure !== null;
  }

  private parse(final: boolean): void {
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.text = bytes.toString('latin1');
    this.ascii = isAscii(bytes);
    this.base = this.pendingAt;
    this.recordStart = 0;
    this.parser.parse(this.text, 0, !final);
    if (this.failed()) return;
    const used = this.recordStart;
    const rest = bytes.length - used;
    if (rest > this.maxRowBytes) {
      this.failure = new FileFormatError(`${this.rows.where()} is longer than ${this.maxRowBytes} bytes (is a quote left open?)`);
      return;
    }
    this.lastMiss = used === 0 ? bytes.length : 0;
    this.pending = rest === 0 ? [] : [bytes.subarray(used)];
    this.pendingBytes = rest;
    this.pendingAt += used;
  }

  private onStep(r: StepResult): void {
    if (this.failed()) return;
    const end = r.meta.cursor;
    const start = this.recordStart;
    this.recordStart = end;
    if (r.errors.length > 0) {
      // A closing quote followed by text (`"abc"def`): PapaParse reads on to a later quote, which
      // would fold the next records into this one. Where the file means something else is unknown.
      const missing = r.errors.some((e) => e.code === 'MissingQuotes');
      this.failure = new FileFormatError(
        missing
          ? `${this.rows.where()} opens a quoted field that the file never closes`
          : `${this.rows.where()} has text after the closing quote of a quoted field (a quote inside a quoted field is written twice: "")`,
      );
      return;
    }
    if (end - start > this.maxRowBytes) {
      this.failure = new FileFormatError(`${this.rows.where()} is longer than ${this.maxRowBytes} bytes (is a quote left open?)`);
      return;
    }
    const text = this.text;
    const fields = r.data[0]!;
    // The line end is `\n`; a `\r` before it closes a CRLF record, unless a quoted field holds it.
    const lineEnd = end > start && text.charCodeAt(end - 1) === 10 ? end - 1 : end;
    if (lineEnd < end && lineEnd > start && text.charCodeAt(lineEnd - 1) === 13) {
      const last = fields.length - 1;
      const cell = fields[last]!;
      const at = lineEnd - cell.length;
      // Unquoted: the cell is the line's raw tail, after a delimiter or at the record's start.
      if (cell.endsWith('\r') && at >= start && text.startsWith(cell, at) && (at === start || text.charCodeAt(at - 1) === 44)) {
        fields[last] = cell.slice(0, -1);
      }
    }
    // An empty line (nothing, or only the `\r` of a CRLF) is no record.
    if (fields.length === 1 && fields[0] === '' && (lineEnd === start || (lineEnd === start + 1 && text.charCodeAt(start) === 13))) return;
    if (!this.ascii) {
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i]!;
        if (HIGH.test(f)) fields[i] = Buffer.from(f, 'latin1').toString('utf8');
      }
    }
    this.rows.onRecord(fields, this.base + end);
  }
}

/** Reads a CSV blob's rows from `cursor` (null: the start, where the header is read). */
export async function* readCsvRows(open: OpenBlob, cursor: ImportCursor | null, options: ReadOptions = {}): AsyncGenerator<ReadRow> {
  const start = cursor?.byteOffset ?? 0;
  const resumeHeader = start > 0 ? (cursor?.header ?? null) : null;
  if (start > 0 && resumeHeader === null) throw new FileFormatError('the import cursor has no CSV header to resume with');
  const maxRowBytes = options.maxRowBytes ?? MAX_ROW_BYTES;
  const rows = new CsvRows(resumeHeader, (cursor?.rowIndex ?? 0) + 1);
  const out = rows.out;
  const stream = await open(start);
  // At offset 0 the first bytes are held until a byte order mark can be told apart.
  let head: Buffer | null = start === 0 ? Buffer.alloc(0) : null;
  let splitter: RecordSplitter | null = start === 0 ? null : new RecordSplitter(start, rows, maxRowBytes);
  const begin = (bytes: Buffer): RecordSplitter => {
    const encoding = utf16Bom(bytes);
    if (encoding !== null) throw new FileFormatError(`the file is ${encoding}; save it as UTF-8`);
    const skip = hasUtf8Bom(bytes) ? 3 : 0;
    const s = new RecordSplitter(skip, rows, maxRowBytes);
    if (bytes.length > skip) s.feed(bytes.subarray(skip));
    return s;
  };
  for await (const chunk of stream) {
    const bytes = chunkBytes(chunk);
    if (splitter === null) {
      head = head!.length === 0 ? bytes : Buffer.concat([head!, bytes]);
      if (head.length < 3) continue;
      splitter = begin(head);
      head = null;
    } else splitter.feed(bytes);
    for (let i = 0; i < out.length; i++) yield out[i]!;
    out.length = 0;
    splitter.check();
  }
  if (splitter === null) splitter = begin(head!);
  splitter.end();
  for (let i = 0; i < out.length; i++) yield out[i]!;
  out.length = 0;
  splitter.check();
  if (rows.header === null) throw new FileFormatError('the file has no header row');
}
