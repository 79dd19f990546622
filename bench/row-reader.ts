/**
 * CSV/JSONL row reading throughput (not a test): generates short rows (4 fields: an id, a title,
 * a price, two tags) as CSV and as JSONL in memory, hands them to `readRows` in 64 KiB pieces as
 * a blob stream would, and prints rows/s and MB/s for reading alone and for reading plus
 * `rowToChunk` (with tag_set and num_value mappings). The import needs >= 20,000 rows/s end to
 * end, so the reader aims at >= 200,000.
 *
 *   npx tsx bench/row-reader.ts                 # 1,000,000 rows, best of 3
 *   npx tsx bench/row-reader.ts --rows 200000 --reps 1
 */
import { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { RowImportOptions } from '../core/domain/files.js';
import { readRows } from '../core/files/row-reader.js';
import { rowToChunk, type RowFile } from '../core/files/row-to-chunk.js';
import { machine } from './lib/spawn-stack.js';

const PIECE = 64 * 1024;

const OPTIONS: RowImportOptions = {
  tagSet: ['bench'],
  link: null,
  timeStamp: Date.UTC(2024, 0, 1),
  groupTrackingId: 'bench-file',
  upsertByTrackingId: true,
  mappings: [
    { csvJsonlField: 'tags', chunkReqPayloadField: 'tag_set' },
    { csvJsonlField: 'price', chunkReqPayloadField: 'num_value' },
  ],
  fulltextBoostFactor: null,
  semanticBoostFactor: null,
};

/** `rows` generated rows as CSV (header first) or JSONL. */
function generate(kind: 'csv' | 'jsonl', rows: number): Buffer {
  const parts: string[] = kind === 'csv' ? ['id,title,price,tags\n'] : [];
  for (let i = 0; i < rows; i++) {
    const price = ((i * 7919) % 100_000) / 100;
    parts.push(
      kind === 'csv'
        ? `${i},Item number ${i},${price},"red,sale"\n`
        : `{"id":${i},"title":"Item number ${i}","price":${price},"tags":["red","sale"]}\n`,
    );
  }
  return Buffer.from(parts.join(''), 'utf8');
}

/** The blob from `start`, in 64 KiB pieces. */
function opener(data: Buffer) {
  return (start: number) => {
    const pieces: Buffer[] = [];
    for (let at = start; at < data.length; at += PIECE) pieces.push(data.subarray(at, at + PIECE));
    return Promise.resolve(Readable.from(pieces));
  };
}

/** The file the rows belong to: no file metadata, a group id as the import passes it. */
const FILE: RowFile = { options: OPTIONS, metadata: null, groupId: '00000000-0000-7000-8000-000000000000' };

/** Milliseconds to read every row (and map it to a chunk when `map`); checks the count. */
async function run(kind: 'csv' | 'jsonl', data: Buffer, rows: number, map: boolean): Promise<number> {
  const started = performance.now();
  let n = 0;
  let failed = 0;
  for await (const r of readRows(kind, opener(data), null)) {
    n++;
    if (r.value === null) failed++;
    else if (map && 'error' in rowToChunk(r.value, r.rowIndex, FILE)) failed++;
  }
  const ms = performance.now() - started;
  if (n !== rows || failed !== 0) throw new Error(`read ${n} rows (${failed} failed), expected ${rows}`);
  return ms;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, reps: { type: 'string', default: '3' } } });
  const rows = Number(values.rows);
  const reps = Number(values.reps);
  console.log(`row reader: ${rows} rows, best of ${reps}; ${machine()}`);
  for (const kind of ['csv', 'jsonl'] as const) {
    const data = generate(kind, rows);
    for (const map of [false, true]) {
      let best = Infinity;
      for (let i = 0; i < reps; i++) best = Math.min(best, await run(kind, data, rows, map));
      const label = `${kind.padEnd(5)} ${map ? 'read + rowToChunk' : 'read'}`;
      console.log(
        `${label.padEnd(24)} ${Math.round((rows / best) * 1000).toLocaleString('en-US').padStart(10)} rows/s  ${((data.length / 1e6 / best) * 1000).toFixed(1).padStart(6)} MB/s  (${(data.length / 1e6).toFixed(1)} MB, ${best.toFixed(0)} ms)`,
      );
    }
  }
}

await main();
