import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ImportCursor } from '../../core/domain/files.js';
import { FileFormatError, readRows, type ReadRow } from '../../core/files/row-reader.js';

type Kind = 'csv' | 'jsonl';

/** Splits bytes into pieces whose sizes cycle through `sizes`, so piece boundaries fall anywhere. */
function pieces(bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(Buffer.from(bytes.subarray(at, at + size)));
    at += size;
  }
  return out;
}

/** An `open` over in-memory bytes, handing them out in pieces of `sizes` (whole by default); counts its calls. */
function blob(bytes: Buffer | string, sizes: readonly number[] = [1 << 16]) {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const opened: number[] = [];
  const open = (start: number) => {
    opened.push(start);
    return Promise.resolve(Readable.from(pieces(data.subarray(start), sizes)));
  };
  return { data, open, opened };
}

/** Every row of a read, and the error that ended it (null when it ended normally). */
async function readAll(kind: Kind, open: (start: number) => Promise<Readable>, cursor: ImportCursor | null = null, maxRowBytes?: number) {
  const rows: ReadRow[] = [];
  let failure: unknown = null;
  try {
    for await (const r of readRows(kind, open, cursor, maxRowBytes === undefined ? {} : { maxRowBytes })) rows.push(r);
  } catch (err) {
    failure = err;
  }
  return { rows, failure };
}

/** The rows' values (or errors), for compact expectations. */
const outcomes = (rows: readonly ReadRow[]) => rows.map((r) => (r.error === null ? r.value : { error: r.error }));

describe('CSV rows', () => {
  it('reads quoted fields with embedded newlines, delimiters and doubled quotes', async () => {
    const csv = 'name,desc,n\r\n"a","line 1\nline 2 ""quoted""",1\r\nb,"x,y",2\n"c\r\nd",,3\n';
    const { rows, failure } = await readAll('csv', blob(csv).open);
    expect(failure).toBeNull();
    expect(outcomes(rows)).toEqual([
      { name: 'a', desc: 'line 1\nline 2 "quoted"', n: '1' },
      { name: 'b', desc: 'x,y', n: '2' },
      // An empty cell is absent, as a JSON null is.
      { name: 'c\r\nd', n: '3' },
    ]);
    expect(rows.map((r) => [r.row, r.rowIndex, r.cursor.rowIndex])).toEqual([
      [1, 0, 1],
      [2, 1, 2],
      [3, 2, 3],
    ]);
    expect(rows.every((r) => r.cursor.header?.join() === 'name,desc,n')).toBe(true);
  });

  it('gives each row the byte offset where the next record starts, BOM and multibyte characters counted', async () => {
    const lines = ['\uFEFFid,text\r\n', '1,héllo 😀\r\n', '2,"a\r\nb"\r\n', '\r\n', '3,z'];
    const { data, open } = blob(lines.join(''));
    const { rows } = await readAll('csv', open);
    const starts = lines.map((_, i) => Buffer.byteLength(lines.slice(0, i + 1).join(''), 'utf8'));
    expect(rows.map((r) => r.cursor.byteOffset)).toEqual([starts[1], starts[2], data.length]);
    expect(outcomes(rows)).toEqual([
      { id: '1', text: 'héllo 😀' },
      { id: '2', text: 'a\r\nb' },
      { id: '3', text: 'z' },
    ]);
    // The BOM is not part of the first column's name.
    expect(rows[0]!.cursor.header).toEqual(['id', 'text']);
  });

  it('skips a UTF-8 BOM only at offset 0: a resumed read keeps a U+FEFF that opens a row', async () => {
    const { open } = blob('a,b\n\uFEFFx,y\n');
    const resumed = await readAll('csv', open, { byteOffset: 4, rowIndex: 0, header: ['a', 'b'] });
    expect(outcomes(resumed.rows)).toEqual([{ a: '\uFEFFx', b: 'y' }]);
  });

  it('reports a record with the wrong field count as a row error and reads on', async () => {
    const { rows, failure } = await readAll('csv', blob('a,b,c,d\n1,2,3\n1,2,3,4\n1\n1,2,3,4,5\n5,6,7,8\n').open);
    expect(failure).toBeNull();
    expect(outcomes(rows)).toEqual([
      { error: 'row has 3 fields, the header has 4' },
      { a: '1', b: '2', c: '3', d: '4' },
      { error: 'row has 1 field, the header has 4' },
      { error: 'row has 5 fields, the header has 4' },
      { a: '5', b: '6', c: '7', d: '8' },
    ]);
    expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 4, 5]);
    expect(rows[0]!.value).toBeNull();
  });

  it.each([
    ['a,b\n1,"\r"\r\n2,x\r\n', [{ a: '1', b: '\r' }, { a: '2', b: 'x' }]],
    ['a,b\n1,"x\r"\r\n2,"\r\r"\n', [{ a: '1', b: 'x\r' }, { a: '2', b: '\r\r' }]],
    ['a\n"\r"\r\nx\r\r\n\r\n""\r\n', [{ a: '\r' }, { a: 'x\r' }, {}]],
    ['a,b\n1,2\r', [{ a: '1', b: '2\r' }]],
  ])('keeps a carriage return that a quoted field holds, and the one before a line end only there: %j', async (csv, expected) => {
    const { rows, failure } = await readAll('csv', blob(csv, [1, 2]).open);
    expect(failure).toBeNull();
    expect(outcomes(rows)).toEqual(expected);
    const reference = csvParseRecords(Buffer.from(csv)).slice(1);
    expect(rows.map((r) => r.cursor.byteOffset)).toEqual(reference.map((r) => r.info.bytes));
  });

  it('keeps a stray quote inside an unquoted field as a character', async () => {
    const { rows } = await readAll('csv', blob('a,b\nsix 6" tall,"ok"\n').open);
    expect(outcomes(rows)).toEqual([{ a: 'six 6" tall', b: 'ok' }]);
  });

  it('makes a column named __proto__ an own field, not the prototype', async () => {
    const { rows } = await readAll('csv', blob('__proto__,x\nvalue,1\n').open);
    const value = rows[0]!.value!;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(value)).toBe('{"__proto__":"value","x":"1"}');
  });

  it('decodes invalid UTF-8 as U+FFFD', async () => {
    const data = Buffer.concat([Buffer.from('a\n'), Buffer.from([0x61, 0xff, 0x62, 0xc3]), Buffer.from('\n')]);
    const { rows } = await readAll('csv', blob(data, [1]).open);
    expect(outcomes(rows)).toEqual([{ a: 'a\uFFFDb\uFFFD' }]);
  });

  it.each([
    ['a,b,a\n1,2,3\n', 'the header repeats the column "a"'],
    ['a,,c\n1,2,3\n', 'header column 2 has no name'],
    ['a, \n1,2\n', 'header column 2 has no name'],
    ['', 'the file has no header row'],
    ['\n\r\n\n', 'the file has no header row'],
    ['\uFEFF', 'the file has no header row'],
    ['"a,b\n1,2\n', 'the header row opens a quoted field that the file never closes'],
  ])('fails the whole file on a bad header: %j', async (csv, message) => {
    const { rows, failure } = await readAll('csv', blob(csv).open);
    expect(rows).toEqual([]);
    expect(failure).toBeInstanceOf(FileFormatError);
    expect((failure as Error).message).toBe(message);
  });

  it('refuses a UTF-16 file (a resumed read could not know its encoding)', async () => {
    const data = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\n1,2\n', 'utf16le')]);
    const { failure } = await readAll('csv', blob(data).open);
    expect(failure).toBeInstanceOf(FileFormatError);
    expect((failure as Error).message).toMatch(/utf16le; save it as UTF-8/);
  });

  it('yields the rows before an unclosed quote, then fails the file', async () => {
    const { rows, failure } = await readAll('csv', blob('a,b\n1,2\n3,"never closed\n4,5\n', [3]).open);
    expect(outcomes(rows)).toEqual([{ a: '1', b: '2' }]);
    expect(failure).toBeInstanceOf(FileFormatError);
    expect((failure as Error).message).toBe('row 2 opens a quoted field that the file never closes');
  });

  it('yields the rows before a quoted field with text after its closing quote, then fails the file', async () => {
    const { rows, failure } = await readAll('csv', blob('a,b\n1,2\n"abc"def,1\n2,"x"\n3,4\n', [5]).open);
    expect(outcomes(rows)).toEqual([{ a: '1', b: '2' }]);
    expect(failure).toBeInstanceOf(FileFormatError);
    expect((failure as Error).message).toBe('row 2 has text after the closing quote of a quoted field (a quote inside a quoted field is written twice: "")');
  });

  it('reads a 256 KiB quoted record fed a byte at a time in linear time (held bytes are parsed again only once doubled)', async () => {
    const long = 'x,'.repeat(128 * 1024);
    const { rows, failure } = await readAll('csv', blob(`a,b\n1,"${long}"\n2,3\n`, [1]).open);
    expect(failure).toBeNull();
    expect(outcomes(rows)).toEqual([
      { a: '1', b: long },
      { a: '2', b: '3' },
    ]);
  }, 20_000);

  it('fails the file on a record longer than the bound instead of buffering it', async () => {
    const csv = `a,b\n1,2\n3,"${'x'.repeat(5000)}"\n`;
    const { rows, failure } = await readAll('csv', blob(csv, [100]).open, null, 1000);
    expect(outcomes(rows)).toEqual([{ a: '1', b: '2' }]);
    expect((failure as Error).message).toBe('row 2 is longer than 1000 bytes (is a quote left open?)');
  });

  it('resumes with the header of the cursor and numbers rows from its row index', async () => {
    const csv = 'h1,h2\n1,2\n3,4\n5,6\n';
    const { open, opened } = blob(csv);
    const whole = await readAll('csv', open);
    const resumed = await readAll('csv', open, whole.rows[0]!.cursor);
    expect(opened).toEqual([0, whole.rows[0]!.cursor.byteOffset]);
    expect(resumed.rows).toEqual(whole.rows.slice(1));
    expect(resumed.rows.map((r) => r.row)).toEqual([2, 3]);
    // A cursor at the end yields nothing (and is no error).
    expect(await readAll('csv', open, whole.rows[2]!.cursor)).toEqual({ rows: [], failure: null });
  });

  it('fails a resume whose cursor has no header', async () => {
    const { failure } = await readAll('csv', blob('a\n1\n2\n').open, { byteOffset: 4, rowIndex: 1, header: null });
    expect(failure).toBeInstanceOf(FileFormatError);
  });

  it('destroys the blob stream when the consumer stops early', async () => {
    const { open } = blob('a\n1\n2\n3\n');
    let stream: Readable | undefined;
    const gen = readRows('csv', async (start) => (stream = await open(start)), null);
    const first = await gen.next();
    expect((first.value as ReadRow).value).toEqual({ a: '1' });
    await gen.return(undefined);
    expect(stream!.destroyed).toBe(true);
  });
});

describe('JSONL rows', () => {
  it('reads objects, reports non-objects and invalid JSON per line, and numbers blank lines as lines', async () => {
    const jsonl = ['{"a":1,"b":null}', '', '[1,2]', '   ', '42', '"text"', 'null', 'true', '{"a":', '{"nested":{"x":[1]}}'].join('\n') + '\n';
    const { rows, failure } = await readAll('jsonl', blob(jsonl).open);
    expect(failure).toBeNull();
    expect(rows.map((r) => r.row)).toEqual([1, 3, 5, 6, 7, 8, 9, 10]);
    const out = outcomes(rows);
    expect(out.slice(0, 6)).toEqual([
      { a: 1, b: null },
      { error: 'line 3 is not a JSON object (an array)' },
      { error: 'line 5 is not a JSON object (a number)' },
      { error: 'line 6 is not a JSON object (a string)' },
      { error: 'line 7 is not a JSON object (null)' },
      { error: 'line 8 is not a JSON object (a boolean)' },
    ]);
    expect(out[6]).toEqual({ error: expect.stringMatching(/^invalid JSON: .+/) });
    expect(out[7]).toEqual({ nested: { x: [1] } });
    expect(rows.every((r) => r.cursor.header === null && r.cursor.rowIndex === r.row)).toBe(true);
  });

  it('reads a final line without a newline, tolerates CRLF and skips a BOM at offset 0', async () => {
    const jsonl = '\uFEFF{"a":"x"}\r\n\r\n{"b":"é"}\r\n{"c":true}';
    const { data, open } = blob(jsonl, [1, 2, 3]);
    const { rows } = await readAll('jsonl', open);
    expect(outcomes(rows)).toEqual([{ a: 'x' }, { b: 'é' }, { c: true }]);
    expect(rows.map((r) => r.row)).toEqual([1, 3, 4]);
    const afterLine = (n: number) => Buffer.byteLength(jsonl.split('\n').slice(0, n).join('\n') + '\n', 'utf8');
    expect(rows.map((r) => r.cursor.byteOffset)).toEqual([afterLine(1), afterLine(3), data.length]);
  });

  it('reads a multi-megabyte line fed in small pieces', async () => {
    const big = { text: 'é'.repeat(1_500_000), n: 1 };
    const jsonl = `{"a":1}\n${JSON.stringify(big)}\n{"a":2}\n`;
    const { rows } = await readAll('jsonl', blob(jsonl, [65_536, 7, 1000]).open);
    expect(outcomes(rows)).toEqual([{ a: 1 }, big, { a: 2 }]);
  });

  it('reports a line longer than the bound as a row error and reads the next', async () => {
    const jsonl = `{"a":1}\n{"t":"${'x'.repeat(3000)}"}\n{"a":2}\n{"t":"${'y'.repeat(3000)}"}`;
    const { data, open } = blob(jsonl, [64]);
    const { rows, failure } = await readAll('jsonl', open, null, 1000);
    expect(failure).toBeNull();
    expect(outcomes(rows)).toEqual([{ a: 1 }, { error: 'line is longer than 1000 bytes' }, { a: 2 }, { error: 'line is longer than 1000 bytes' }]);
    expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 4]);
    expect(rows[3]!.cursor.byteOffset).toBe(data.length);
  });

  it('decodes invalid UTF-8 inside a string as U+FFFD', async () => {
    const data = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xe2, 0x82]), Buffer.from('y"}\n')]);
    const { rows } = await readAll('jsonl', blob(data, [1]).open);
    expect(outcomes(rows)).toEqual([{ a: 'x\uFFFDy' }]);
  });
});

// --- The resume oracle: reading from any row's cursor yields exactly what a whole read yields after it.

/**
 * Piece sizes of 1..7 bytes, so boundaries fall inside multibyte characters, quotes and CRLFs;
 * sometimes the whole file at once, for the paths that find a row inside one piece.
 */
const pieceSizes = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constant([1 << 16]) },
);

const csvChar = fc.constantFrom('a', 'b', 'Z', '0', ' ', 'é', '😀', '\uFEFF', ',', '"', '\n', '\r', '\r\n');
const plainChar = fc.constantFrom('a', 'b', 'Z', '0', ' ', 'é', '😀', '\uFEFF');

/** A cell and how it is written: quoted (anything, quotes doubled), plain, or plain with a stray quote inside. */
const csvCell = fc.oneof(
  fc.array(csvChar, { maxLength: 6 }).map((cs) => {
    const text = cs.join('');
    return { text, raw: `"${text.replaceAll('"', '""')}"` };
  }),
  fc.array(plainChar, { maxLength: 6 }).map((cs) => ({ text: cs.join(''), raw: cs.join('') })),
  fc.tuple(fc.array(plainChar, { minLength: 1, maxLength: 3 }), fc.array(plainChar, { maxLength: 3 })).map(([a, b]) => {
    const text = `${a.join('')}"${b.join('')}`;
    return { text, raw: text };
  }),
);

const NAMES = ['id', '__proto__', 'é', 'price'];

const csvFile = fc
  .record({
    columns: fc.integer({ min: 1, max: 4 }),
    bom: fc.boolean(),
    trailingNewline: fc.boolean(),
    records: fc.array(
      fc.record({
        extra: fc.constantFrom(0, 0, 0, 0, -1, 1),
        cells: fc.array(csvCell, { minLength: 5, maxLength: 5 }),
        eol: fc.constantFrom('\n', '\r\n'),
        blankAfter: fc.constantFrom('', '', '', '\n', '\r\n'),
      }),
      { maxLength: 12 },
    ),
  })
  .map(({ columns, bom, trailingNewline, records }) => {
    const header = NAMES.slice(0, columns);
    let text = (bom ? '\uFEFF' : '') + header.join(',') + '\n';
    const expected: (Record<string, string> | { error: string })[] = [];
    records.forEach((r, i) => {
      const n = Math.max(1, columns + r.extra);
      const cells = r.cells.slice(0, n);
      // A lone empty cell written plain would be a blank line, which is skipped.
      const raw = cells.map((c, j) => (n === 1 && j === 0 && c.raw === '' ? '""' : c.raw)).join(',');
      const last = i === records.length - 1;
      text += raw + (last && !trailingNewline ? '' : r.eol + r.blankAfter);
      if (n !== columns) {
        expected.push({ error: `row has ${n === 1 ? '1 field' : `${n} fields`}, the header has ${columns}` });
      } else {
        const value: Record<string, string> = {};
        cells.forEach((c, j) => {
          if (c.text !== '') Object.defineProperty(value, header[j]!, { value: c.text, enumerable: true, writable: true, configurable: true });
        });
        expected.push(value);
      }
    });
    return { text, expected };
  });

const jsonlLine = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.string({ unit: 'binary', maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t', '{"a":', 'nope', '{"a":1}}', '\uFEFF{"a":1}') },
);

const jsonlFile = fc
  .record({
    bom: fc.boolean(),
    trailingNewline: fc.boolean(),
    lines: fc.array(fc.record({ text: jsonlLine, eol: fc.constantFrom('\n', '\r\n') }), { maxLength: 14 }),
  })
  .map(({ bom, trailingNewline, lines }) => {
    const text = (bom ? '\uFEFF' : '') + lines.map((l, i) => l.text + (i === lines.length - 1 && !trailingNewline ? '' : l.eol)).join('');
    const expected: { row: number; value: unknown }[] = [];
    lines.forEach((l, i) => {
      // A U+FEFF opening the blob is a BOM (skipped); anywhere else it is content.
      const line = i === 0 && !bom && l.text.startsWith('\uFEFF') ? l.text.slice(1) : l.text;
      if (line.trim() === '' && !line.includes('\uFEFF')) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        expected.push({ row: i + 1, value: 'invalid' });
        return;
      }
      expected.push({ row: i + 1, value: typeof value === 'object' && value !== null && !Array.isArray(value) ? value : 'error' });
    });
    return { text, expected };
  });

/** csv-parse's records of the bytes, with the byte offset after each: the reference the CSV reader is held to. */
function csvParseRecords(data: Buffer): { record: string[]; info: { bytes: number } }[] {
  const options = { bom: true, record_delimiter: ['\r\n', '\n'], relax_column_count: true, relax_quotes: true, skip_empty_lines: true, info: true };
  return csvParse(data, options) as unknown as { record: string[]; info: { bytes: number } }[];
}

/** A reference record as the reader reports it: its non-empty cells, or the field-count error. */
function expectedCells(record: readonly string[], columns: number): string[] | string {
  if (record.length !== columns) return `row has ${record.length === 1 ? '1 field' : `${record.length} fields`}, the header has ${columns}`;
  return record.filter((cell) => cell !== '');
}

/** Checks that a resumed read from each row's cursor (and from a zero cursor) yields the rest of the whole read. */
async function checkResumes(kind: Kind, text: string, sizes: readonly number[]): Promise<ReadRow[]> {
  const { open } = blob(text, sizes);
  const whole = await readAll(kind, open);
  expect(whole.failure).toBeNull();
  const fromZero = await readAll(kind, open, { byteOffset: 0, rowIndex: 0, header: null });
  expect(fromZero).toEqual(whole);
  for (let i = 0; i < whole.rows.length; i++) {
    const resumed = await readAll(kind, open, whole.rows[i]!.cursor);
    expect(resumed.failure).toBeNull();
    expect(resumed.rows).toEqual(whole.rows.slice(i + 1));
  }
  return whole.rows;
}

describe('resume oracle', () => {
  it('CSV: a read resumed at any row cursor yields exactly the remaining rows, in pieces of 1..7 bytes', async () => {
    await fc.assert(
      fc.asyncProperty(csvFile, pieceSizes, async ({ text, expected }, sizes) => {
        const rows = await checkResumes('csv', text, sizes);
        expect(outcomes(rows)).toEqual(expected);
        expect(rows.map((r) => r.row)).toEqual(expected.map((_, i) => i + 1));
        // Each cursor is the byte where the next record (or the end) starts: the byte before it ends a line.
        const data = Buffer.from(text, 'utf8');
        for (const r of rows) expect(r.cursor.byteOffset === data.length || data[r.cursor.byteOffset - 1] === 0x0a).toBe(true);
        // The same records, and the same offset after each, as csv-parse reads.
        const [referenceHeader, ...reference] = csvParseRecords(data);
        expect(rows.map((r) => r.cursor.byteOffset)).toEqual(reference.map((r) => r.info.bytes));
        expect(rows.map((r) => (r.error === null ? Object.values(r.value!) : r.error))).toEqual(reference.map((r) => expectedCells(r.record, referenceHeader!.record.length)));
      }),
      { numRuns: 150 },
    );
  });

  it('JSONL: a read resumed at any row cursor yields exactly the remaining rows, in pieces of 1..7 bytes', async () => {
    await fc.assert(
      fc.asyncProperty(jsonlFile, pieceSizes, async ({ text, expected }, sizes) => {
        const rows = await checkResumes('jsonl', text, sizes);
        expect(rows.map((r) => ({ row: r.row, value: r.error === null ? r.value : r.error.startsWith('invalid JSON') ? 'invalid' : 'error' }))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});
