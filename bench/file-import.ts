/**
 * CSV and JSONL import through the public API (issue 14): generates (fixed seed) N realistic
 * product rows as a CSV and as a JSONL file in a temporary directory, then for each file on a
 * fresh stack asks `POST /api/file/csv_or_jsonl` for an upload URL, PUTs the file to it (streamed
 * from disk, with its Content-Length, as an S3 client would) and polls `GET /api/file/{id}` every
 * 250 ms until the job workers have imported it. Reports upload seconds, import seconds (upload
 * answered → file `done`), rows/s, and the resident memory of every process of the stack (Redis,
 * the HTTP process with the core in it, or a separate core, the job workers, and anything they
 * spawn) sampled every 250 ms: start, peak, growth. Checks at the end that every row was imported
 * (`rows_done == rows_total == N`, no row errors, the dataset's chunk count N, a bm25 search finds
 * rows).
 *
 * Lexical-only runs have background embedding off (QUARRY_EMBED_JOBS=false) and a dataset with
 * SEMANTIC_ENABLED false; `--embeddings` also runs each file with embedding on (the default
 * embedded model, a dataset with the default configuration), where rows/s is still the import's
 * own rate and the bench then waits (at most `--embed-wait-s`) for `chunks_pending_embedding` to
 * reach 0 and reports how long that took.
 *
 * After the import (and the embedding wait), `--after-s` more seconds (default 15; 0: none) are
 * sampled as a phase of their own: what the stack still does for the import once it is `done`
 * (a snapshot still being written, say) shows there, and the peak over both phases is printed
 * against the reading before the import.
 *
 * Goal (issue 14): ≥ 20,000 rows/s lexical on this machine, RSS growth under 300 MB.
 *
 *   npm run build && npx tsx bench/file-import.ts [--rows 1000000] [--only csv|jsonl] [--embeddings]
 *       [--embed-wait-s 600] [--batch-rows N] [--seed 14] [--import-timeout-s 3600] [--after-s 15] [--keep-files]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { RssSampler, type RssFigures } from './lib/rss-sampler.js';
import { machine, post, startBenchStack, type BenchStack } from './lib/spawn-stack.js';
import { sfc32 } from './lib/synthetic.js';

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const numArg = (name: string, fallback: number): number => {
  const v = Number(argValue(name));
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const ROWS = Math.floor(numArg('--rows', 1_000_000));
const ONLY = argValue('--only');
const EMBEDDINGS = process.argv.includes('--embeddings');
const EMBED_WAIT_S = numArg('--embed-wait-s', 600);
const BATCH_ROWS = argValue('--batch-rows');
const SEED = Math.floor(numArg('--seed', 14));
const IMPORT_TIMEOUT_S = numArg('--import-timeout-s', 3600);
const KEEP_FILES = process.argv.includes('--keep-files');
/** Seconds sampled after the import (0: none). */
const AFTER_S = argValue('--after-s') === '0' ? 0 : numArg('--after-s', 15);
const POLL_MS = 250;
const PROGRESS_EVERY_MS = 5_000;
const GOAL_ROWS_PER_S = 20_000;
const GOAL_GROWTH_BYTES = 300 * 1024 * 1024;

type Format = 'csv' | 'jsonl';
type Mode = 'lexical' | 'embeddings';

if (ONLY !== undefined && ONLY !== 'csv' && ONLY !== 'jsonl') throw new Error('--only takes csv or jsonl');
const FORMATS: readonly Format[] = ONLY === 'csv' || ONLY === 'jsonl' ? [ONLY] : ['csv', 'jsonl'];
const MODES: readonly Mode[] = EMBEDDINGS ? ['lexical', 'embeddings'] : ['lexical'];

// ---------------------------------------------------------------------------------------------
// Data: realistic product rows from a seeded PRNG, streamed to disk.

const COLORS = ['black', 'white', 'navy', 'olive', 'charcoal', 'red', 'sand', 'forest green', 'slate', 'ivory', 'copper', 'teal'];
const MATERIALS = ['cotton', 'linen', 'wool', 'leather', 'bamboo', 'steel', 'ceramic', 'oak', 'walnut', 'glass', 'merino', 'nylon', 'cast iron', 'recycled'];
const ADJECTIVES = ['waterproof', 'lightweight', 'compact', 'classic', 'ergonomic', 'wireless', 'foldable', 'insulated', 'slim', 'heavy-duty', 'organic', 'portable', 'vintage', 'premium', 'adjustable', 'quick-dry', 'stackable', 'rechargeable'];
const NOUNS = [
  'trail boot', 'rain jacket', 'backpack', 'water bottle', 'desk lamp', 'office chair', 'coffee grinder', 'chef knife', 'frying pan', 'tea kettle',
  'yoga mat', 'running shoe', 'sunglasses', 'wall clock', 'bookshelf', 'headphones', 'keyboard', 'phone case', 'tent', 'sleeping bag',
  'duvet cover', 'bath towel', 'cutting board', 'blender', 'scarf', 'beanie', 'wallet', 'watch', 'notebook', 'planter', 'candle', 'rug',
  'speaker', 'monitor stand', 'bike light', 'helmet', 'dress shirt', 'hoodie', 'jeans', 'sneaker',
];
const CATEGORIES = [
  'outdoor', 'hiking', 'camping', 'kitchen', 'home', 'garden', 'office', 'electronics', 'audio', 'fitness', 'running', 'cycling', 'apparel',
  'footwear', 'accessories', 'bedding', 'bath', 'decor', 'lighting', 'furniture', 'travel', 'gifts', 'sale', 'new arrivals', 'eco',
];
const BRAND_HEADS = ['Nord', 'Alpen', 'Cedar', 'Ember', 'Granite', 'Harbor', 'Iron', 'Juniper', 'Kestrel', 'Lumen', 'Maple', 'Orbit', 'Pine', 'Quill', 'River', 'Summit', 'Tundra', 'Vela', 'Willow', 'Zephyr'];
const BRAND_TAILS = ['haven', 'works', 'craft', 'line', 'field', 'wear', ' & Co', 'labs', 'forge', 'supply'];
const WORDS = (
  'the a and with for of to in on is this that our your it its made from built designed keeps stays all day long lasting ' +
  'comfort fit soft durable strong easy clean care machine wash hand dry water resistant breathable warm cool light weight ' +
  'everyday use travel home office outdoor adventures weekend trips city commute gift perfect ideal simple modern timeless ' +
  'finish detail stitching seams zipper pocket strap handle base lid edge surface grip texture color tone matte gloss ' +
  'sustainably sourced materials recycled packaging fair trade certified tested quality guarantee warranty years support ' +
  'fits most sizes includes storage bag charger cable manual extra parts compatible standard small medium large set pieces ' +
  'heat cold rain snow wind sun protection layer shell lining insulation padding cushion support arch sole tread ' +
  'battery hours charge fast quiet powerful efficient energy saving smart control app bluetooth range sound bass clear ' +
  'kitchen coffee tea cooking baking knife steel blade sharp edge wood board oven safe dishwasher nonstick coating even ' +
  'new improved version customers love reviews favorite bestseller limited edition seasonal collection available now'
).split(' ');

/** The element of `xs` that `r` (in [0, 1)) falls on. */
const pick = <T>(xs: readonly T[], r: number): T => xs[Math.floor(xs.length * r)]!;

/** One product. */
interface Product {
  sku: string;
  title: string;
  description: string;
  brand: string;
  categories: string[];
  price: number;
  rating: number;
  reviews: number;
  lat: number | null;
  lon: number | null;
  imageUrl: string | null;
  updatedAt: string;
  inStock: boolean;
}

const START_2020 = Date.UTC(2020, 0, 1);
const SPAN_MS = Date.UTC(2025, 0, 1) - START_2020;

/** A description of 20-60 words in sentences, with commas, some quoted phrases and inch marks, and some line breaks. */
function description(rand: () => number): string {
  const target = 20 + Math.floor(rand() * 41);
  const parts: string[] = [];
  let words = 0;
  while (words < target) {
    const n = Math.min(target - words, 5 + Math.floor(rand() * 10));
    const sentence: string[] = [];
    for (let i = 0; i < n; i++) {
      // The product of two uniforms favours the first words: a rough Zipf.
      let w = WORDS[Math.floor(WORDS.length * rand() * rand())]!;
      if (i === 0) w = w[0]!.toUpperCase() + w.slice(1);
      if (i < n - 1 && rand() < 0.08) w += ',';
      sentence.push(w);
    }
    const roll = rand();
    // Quotes and inch marks make CSV double its quotes and JSON escape them.
    if (roll < 0.05) sentence.splice(1, 0, `"${pick(ADJECTIVES, rand())}"`);
    else if (roll < 0.08) sentence.push(`${10 + Math.floor(rand() * 30)}" wide`);
    words += sentence.length;
    parts.push(sentence.join(' ') + '.');
    // A line break inside the field: a CSV record that spans lines.
    if (rand() < 0.04) parts.push('\n');
  }
  return parts.join(' ').replace(/ \n /g, '\n').replace(/ \n$/, '');
}

/** Product number `i` of the seeded stream. */
function product(i: number, rand: () => number): Product {
  const nWords = 2 + Math.floor(rand() * 5);
  const title: string[] = [];
  while (title.length < nWords - 1) {
    const r = rand();
    title.push(r < 0.3 ? pick(COLORS, rand()) : r < 0.6 ? pick(MATERIALS, rand()) : pick(ADJECTIVES, rand()));
  }
  title.push(pick(NOUNS, rand()));
  const cats = new Set<string>();
  const nCats = 1 + Math.floor(rand() * 3);
  while (cats.size < nCats) cats.add(pick(CATEGORIES, rand()));
  const located = rand() < 0.3;
  const titled = title.join(' ');
  return {
    sku: `SKU-${String(i).padStart(8, '0')}`,
    title: titled[0]!.toUpperCase() + titled.slice(1),
    description: description(rand),
    brand: pick(BRAND_HEADS, rand()) + pick(BRAND_TAILS, rand()),
    categories: [...cats],
    price: Math.round((1 + rand() ** 3 * 1999) * 100) / 100,
    rating: Math.round((1 + rand() * 4) * 10) / 10,
    reviews: Math.floor(rand() ** 2 * 5000),
    lat: located ? Math.round((-60 + rand() * 130) * 1e5) / 1e5 : null,
    lon: located ? Math.round((-180 + rand() * 360) * 1e5) / 1e5 : null,
    imageUrl: rand() < 0.85 ? `https://img.example.com/p/${i}/${Math.floor(rand() * 4)}.jpg` : null,
    updatedAt: new Date(START_2020 + Math.floor(rand() * SPAN_MS)).toISOString(),
    inStock: rand() < 0.8,
  };
}

const CSV_HEADER = ['sku', 'title', 'description', 'brand', 'categories', 'price', 'rating', 'reviews', 'lat', 'lon', 'image_url', 'updated_at', 'in_stock'];

/** A CSV field, quoted when it holds a delimiter, a quote or a line break (RFC 4180). */
const csvField = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The product as a CSV record (LF): categories comma separated in one quoted cell, an absent location as empty cells. */
function csvRecord(p: Product): string {
  return (
    [
      p.sku,
      csvField(p.title),
      csvField(p.description),
      csvField(p.brand),
      csvField(p.categories.join(',')),
      String(p.price),
      String(p.rating),
      String(p.reviews),
      p.lat === null ? '' : String(p.lat),
      p.lon === null ? '' : String(p.lon),
      p.imageUrl ?? '',
      p.updatedAt,
      String(p.inStock),
    ].join(',') + '\n'
  );
}

/** The product as a JSONL line: categories an array, numbers as numbers, absent fields left out. */
function jsonlLine(p: Product): string {
  const o: Record<string, unknown> = {
    sku: p.sku,
    title: p.title,
    description: p.description,
    brand: p.brand,
    categories: p.categories,
    price: p.price,
    rating: p.rating,
    reviews: p.reviews,
  };
  if (p.lat !== null) {
    o.lat = p.lat;
    o.lon = p.lon;
  }
  if (p.imageUrl !== null) o.image_url = p.imageUrl;
  o.updated_at = p.updatedAt;
  o.in_stock = p.inStock;
  return JSON.stringify(o) + '\n';
}

/** A file being written in ~1 MiB pieces, waiting for the disk when the stream's buffer is full. */
class BlockWriter {
  private readonly out: fs.WriteStream;
  private parts: string[] = [];
  private pending = 0;
  bytes = 0;

  constructor(readonly file: string) {
    this.out = fs.createWriteStream(file);
  }

  async add(s: string): Promise<void> {
    this.parts.push(s);
    this.pending += s.length;
    if (this.pending >= 1 << 20) await this.flush();
  }

  private async flush(): Promise<void> {
    const block = Buffer.from(this.parts.join(''), 'utf8');
    this.parts = [];
    this.pending = 0;
    this.bytes += block.length;
    if (!this.out.write(block)) await new Promise<void>((r) => this.out.once('drain', () => r()));
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** Writes the N products (one seeded stream, so both files hold the same rows) to the requested files; returns their sizes. */
async function generate(dir: string, formats: readonly Format[]): Promise<Map<Format, { file: string; bytes: number }>> {
  const rand = sfc32(SEED);
  const writers = new Map<Format, BlockWriter>(formats.map((f) => [f, new BlockWriter(path.join(dir, `products.${f}`))]));
  const csv = writers.get('csv');
  const jsonl = writers.get('jsonl');
  await csv?.add(CSV_HEADER.join(',') + '\n');
  for (let i = 0; i < ROWS; i++) {
    const p = product(i, rand);
    await csv?.add(csvRecord(p));
    await jsonl?.add(jsonlLine(p));
  }
  const out = new Map<Format, { file: string; bytes: number }>();
  for (const [f, w] of writers) {
    await w.close();
    out.set(f, { file: w.file, bytes: w.bytes });
  }
  return out;
}

/** Column mappings of the import: most targets a product has (the rest of the row is the chunk's text and metadata). */
const MAPPINGS = [
  { csv_jsonl_field: 'sku', chunk_req_payload_field: 'tracking_id' },
  { csv_jsonl_field: 'price', chunk_req_payload_field: 'num_value' },
  { csv_jsonl_field: 'categories', chunk_req_payload_field: 'tag_set' },
  { csv_jsonl_field: 'brand', chunk_req_payload_field: 'tag_set' },
  { csv_jsonl_field: 'lat', chunk_req_payload_field: 'lat' },
  { csv_jsonl_field: 'lon', chunk_req_payload_field: 'lon' },
  { csv_jsonl_field: 'image_url', chunk_req_payload_field: 'image_urls' },
  { csv_jsonl_field: 'updated_at', chunk_req_payload_field: 'time_stamp' },
];

// ---------------------------------------------------------------------------------------------
// One import on a fresh stack.

/** What one run measured. */
interface RunResult {
  readonly format: Format;
  readonly mode: Mode;
  readonly bytes: number;
  readonly uploadS: number;
  /** Upload answered → file `done`. */
  readonly importS: number;
  /** Upload answered → first poll that saw `processing` (queue and start-up latency, within 250 ms). */
  readonly startS: number | null;
  readonly status: string;
  readonly file: Record<string, unknown>;
  readonly chunkCount: number;
  readonly searchHits: number;
  /** Seconds from the import's end until nothing was pending embedding (null: not an embedding run, or the wait was cut). */
  readonly embedS: number | null;
  readonly pendingAtEnd: number;
  readonly rssImport: RssFigures[];
  readonly rssEmbed: RssFigures[] | null;
  /** The `--after-s` seconds after the import (and the embedding wait); null with `--after-s 0`. */
  readonly rssAfter: RssFigures[] | null;
  readonly failures: string[];
}

/** PUTs the file to the presigned URL, streamed from disk with its Content-Length (which S3 requires of a presigned PUT); throws unless 200. */
async function putFile(url: string, file: string, bytes: number, contentType: string): Promise<void> {
  const req = http.request(new URL(url), { method: 'PUT', headers: { 'content-length': bytes, 'content-type': contentType } });
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  // A refusal closes the connection mid-body: its answer says why, so the pipeline's own error waits for it.
  const sent = pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), req).catch((err: unknown) => err as Error);
  const res = await answered;
  let body = '';
  res.setEncoding('utf8');
  for await (const part of res) body += part as string;
  const sendError = await sent;
  if (res.statusCode !== 200) throw new Error(`PUT ${url.split('?')[0]}: ${res.statusCode} ${body}`);
  if (sendError) throw sendError;
}

/** GETs JSON with headers; throws on a non-2xx answer. */
async function getJson(stack: BenchStack, p: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(stack.baseUrl + p, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A server timestamp (`YYYY-MM-DD HH:MM:SS.mmm`, UTC) as epoch ms, or NaN. */
const serverTime = (s: unknown): number => (typeof s === 'string' ? Date.parse(s.replace(' ', 'T') + 'Z') : NaN);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Imports one file on a fresh stack and measures it. */
async function runOne(format: Format, mode: Mode, data: { file: string; bytes: number }): Promise<RunResult> {
  const label = `${format} ${mode}`;
  const env: Record<string, string> = { QUARRY_EMBED_JOBS: mode === 'embeddings' ? 'true' : 'false' };
  if (BATCH_ROWS !== undefined) env.QUARRY_IMPORT_BATCH_ROWS = BATCH_ROWS;
  const stack = await startBenchStack(env);
  const failures: string[] = [];
  try {
    const admin = { authorization: stack.adminKey };
    const org = (await post(stack.baseUrl, '/api/organization', { name: `file-import-${format}-${mode}` }, admin)).id as string;
    const datasetId = (
      await post(
        stack.baseUrl,
        '/api/dataset',
        { dataset_name: `products-${format}`, server_configuration: mode === 'lexical' ? { SEMANTIC_ENABLED: false } : {} },
        { ...admin, 'tr-organization': org },
      )
    ).id as string;
    const headers = { ...admin, 'tr-dataset': datasetId };
    const inProcess = stack.pids.core === stack.pids.facade;
    const roots = new Map<string, number>([
      ['redis', stack.pids.redis],
      [inProcess ? 'http+core' : 'http', stack.pids.facade],
      ...(inProcess ? [] : ([['core', stack.pids.core]] as [string, number][])),
      ['jobs', stack.pids.jobs],
    ]);
    const httpLabel = inProcess ? 'http+core' : 'http';
    // Let the processes settle after start-up (the model loads, the workers connect) before the start reading.
    await sleep(mode === 'embeddings' ? 5_000 : 1_000);
    const rss = new RssSampler(roots, POLL_MS);
    try {
      const created = await post(
        stack.baseUrl,
        '/api/file/csv_or_jsonl',
        { file_name: `products.${format}`, group_tracking_id: `products-${format}`, mappings: MAPPINGS, tag_set: ['catalogue'], metadata: { source: 'bench' } },
        headers,
      );
      const fileId = (created.file_metadata as { id: string }).id;
      const t0 = performance.now();
      const wall0 = Date.now();
      await putFile(created.presigned_put_url as string, data.file, data.bytes, format === 'csv' ? 'text/csv' : 'application/x-ndjson');
      const uploadS = (performance.now() - t0) / 1000;
      const uploadEndWall = wall0 + uploadS * 1000;
      const t1 = performance.now();
      process.stderr.write(`${label}: uploaded ${mb(data.bytes)} MiB in ${uploadS.toFixed(2)} s (${(data.bytes / 2 ** 20 / uploadS).toFixed(0)} MiB/s)\n`);

      let file: Record<string, unknown> = {};
      let startS: number | null = null;
      let lastRows = 0;
      let lastAt = t1;
      let doneAt = 0;
      for (;;) {
        file = await getJson(stack, `/api/file/${fileId}`, headers);
        const now = performance.now();
        if (startS === null && file.status !== 'awaiting_upload' && file.status !== 'queued') startS = (now - t1) / 1000;
        if (file.status === 'done' || file.status === 'failed') {
          doneAt = now;
          break;
        }
        if (now - lastAt >= PROGRESS_EVERY_MS) {
          const rows = Number(file.rows_done ?? 0);
          process.stderr.write(
            `${label}: ${file.status as string} ${fmt(rows)} rows (${((rows / ROWS) * 100).toFixed(0)}%), ${fmt(((rows - lastRows) * 1000) / (now - lastAt))} rows/s now, ` +
              `${fmt((rows * 1000) / (now - t1))} since upload; errors ${String(file.error_count)}; RSS ${httpLabel} ${mb(rss.current(httpLabel))} MiB, jobs ${mb(rss.current('jobs'))} MiB\n`,
          );
          lastRows = rows;
          lastAt = now;
        }
        if ((now - t1) / 1000 > IMPORT_TIMEOUT_S) {
          failures.push(`import not done after ${IMPORT_TIMEOUT_S} s (--import-timeout-s): status ${String(file.status)}, ${String(file.rows_done)} rows`);
          doneAt = now;
          break;
        }
        await sleep(POLL_MS);
      }
      // The server stamps the file when it marks it done (same clock): finer than the 250 ms poll.
      const stamped = serverTime(file.updated_at) - uploadEndWall;
      const polled = doneAt - t1;
      const importS = (file.status === 'done' && stamped > 0 && stamped <= polled + 50 ? stamped : polled) / 1000;
      const rssImport = rss.phase();

      const usage = await getJson(stack, `/api/dataset/usage/${datasetId}`, headers);
      const chunkCount = Number(usage.chunk_count);
      // One cheap look that the rows are searchable (the import applied the index before `done`).
      const search = await post(stack.baseUrl, '/api/chunk/search', { query: 'waterproof trail boot', search_type: 'bm25', page_size: 10 }, headers);
      const searchHits = (search.chunks as unknown[]).length;

      if (file.status !== 'done') failures.push(`status ${String(file.status)}${file.failure ? `: ${String(file.failure)}` : ''}`);
      if (file.rows_done !== ROWS || file.rows_total !== ROWS) failures.push(`rows_done ${String(file.rows_done)}, rows_total ${String(file.rows_total)}, expected ${ROWS}`);
      if (file.rows_imported !== ROWS) failures.push(`rows_imported ${String(file.rows_imported)} (rows_skipped ${String(file.rows_skipped)}), expected ${ROWS}`);
      if (file.error_count !== 0) failures.push(`error_count ${String(file.error_count)}; first: ${JSON.stringify((file.errors as unknown[]).slice(0, 3))}`);
      if (file.bytes_done !== data.bytes || file.size !== data.bytes) failures.push(`bytes_done ${String(file.bytes_done)}, size ${String(file.size)}, expected ${data.bytes}`);
      if (chunkCount !== ROWS) failures.push(`dataset chunk_count ${chunkCount}, expected ${ROWS}`);
      if (searchHits === 0) failures.push('a bm25 search for "waterproof trail boot" found nothing');

      let embedS: number | null = null;
      let pendingAtEnd = 0;
      let rssEmbed: RssFigures[] | null = null;
      if (mode === 'embeddings') {
        const e0 = performance.now();
        let lastPrint = e0;
        let lastEmbedded = Number(usage.chunks_embedded ?? 0);
        for (;;) {
          const u = await getJson(stack, `/api/dataset/usage/${datasetId}`, headers);
          pendingAtEnd = Number(u.chunks_pending_embedding);
          const now = performance.now();
          if (pendingAtEnd === 0) {
            embedS = (now - e0) / 1000;
            break;
          }
          if ((now - e0) / 1000 >= EMBED_WAIT_S) break;
          if (now - lastPrint >= 10_000) {
            const embedded = Number(u.chunks_embedded ?? 0);
            process.stderr.write(`${label}: ${fmt(pendingAtEnd)} pending embedding, ${fmt(((embedded - lastEmbedded) * 1000) / (now - lastPrint))} chunks/s; RSS jobs ${mb(rss.current('jobs'))} MiB\n`);
            lastEmbedded = embedded;
            lastPrint = now;
          }
          await sleep(1_000);
        }
        rssEmbed = rss.phase();
      }
      let rssAfter: RssFigures[] | null = null;
      if (AFTER_S > 0) {
        await sleep(AFTER_S * 1000);
        rssAfter = rss.phase();
      }
      return { format, mode, bytes: data.bytes, uploadS, importS, startS, status: String(file.status), file, chunkCount, searchHits, embedS, pendingAtEnd, rssImport, rssEmbed, rssAfter, failures };
    } finally {
      rss.stop();
    }
  } finally {
    await stack.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Report.

/** The RSS table of one phase, markdown. */
function rssTable(figures: readonly RssFigures[]): string[] {
  const lines = ['| process | pid | start MiB | peak MiB (sampled) | VmHWM MiB | end MiB | growth MiB (peak − start) | goal < 300 MiB | CPU s |', '|---|---|---|---|---|---|---|---|---|'];
  let cpu = 0;
  let start = 0;
  let peak = 0;
  let end = 0;
  for (const f of figures) {
    const growth = f.peak - f.start;
    start += f.start;
    peak += f.peak;
    end += f.end;
    cpu += f.cpuS;
    lines.push(`| ${f.label} | ${f.pid} | ${mb(f.start)} | ${mb(f.peak)} | ${mb(f.hwm)} | ${mb(f.end)} | ${mb(growth)} | ${growth < GOAL_GROWTH_BYTES ? 'yes' : '**no**'} | ${f.cpuS.toFixed(1)} |`);
  }
  // The sum of peaks over-states the stack's peak a little: processes need not peak at once.
  lines.push(`| sum | | ${mb(start)} | ${mb(peak)} | | ${mb(end)} | ${mb(peak - start)} | | ${cpu.toFixed(1)} |`);
  return lines;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-file-bench-'));
  try {
    const g0 = performance.now();
    const files = await generate(dir, FORMATS);
    const genS = (performance.now() - g0) / 1000;
    for (const d of files.values()) process.stderr.write(`generated ${d.file}: ${fmt(ROWS)} rows, ${mb(d.bytes)} MiB\n`);
    process.stderr.write(`generation took ${genS.toFixed(1)} s\n`);

    const results: RunResult[] = [];
    for (const mode of MODES) for (const format of FORMATS) results.push(await runOne(format, mode, files.get(format)!));

    console.log(`machine: ${machine()}; load average at end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(
      `data: ${fmt(ROWS)} synthetic product rows (seed ${SEED}; sku, title of 2-6 words, description of 20-60 words with commas, quotes and some line breaks, brand, 1-3 categories, price, rating, reviews, lat/lon on ~30%, image url on ~85%, updated_at, in_stock), ` +
        `${[...files].map(([f, d]) => `${f} ${mb(d.bytes)} MiB`).join(', ')}; mappings: ${MAPPINGS.map((m) => `${m.csv_jsonl_field}→${m.chunk_req_payload_field}`).join(', ')}; ` +
        `batch rows ${BATCH_ROWS ?? 'default (QUARRY_IMPORT_BATCH_ROWS unset)'}; one fresh stack per run (SQLite store, core in the HTTP process unless QUARRY_CORE_IN_PROCESS=false)`,
    );
    console.log('');
    console.log(`| file | mode | rows | MiB | upload s | import s | rows/s (import) | rows/s (incl. upload) | goal ≥ ${fmt(GOAL_ROWS_PER_S)} rows/s lexical | start s | embedded after s | checks |`);
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const rate = ROWS / r.importS;
      const goal = r.mode === 'lexical' ? (rate >= GOAL_ROWS_PER_S ? 'yes' : '**no**') : '-';
      const embed = r.mode === 'embeddings' ? (r.embedS !== null ? r.embedS.toFixed(0) : `> ${EMBED_WAIT_S} (${fmt(r.pendingAtEnd)} pending)`) : '-';
      console.log(
        `| ${r.format} | ${r.mode} | ${fmt(ROWS)} | ${mb(r.bytes)} | ${r.uploadS.toFixed(2)} | ${r.importS.toFixed(2)} | ${fmt(rate)} | ${fmt(ROWS / (r.uploadS + r.importS))} | ${goal} | ${r.startS?.toFixed(2) ?? '-'} | ${embed} | ${r.failures.length === 0 ? 'ok' : '**FAILED**'} |`,
      );
    }
    for (const r of results) {
      console.log('');
      console.log(`### ${r.format} ${r.mode}: memory during the import (upload start → done), sampled every ${POLL_MS} ms`);
      for (const l of rssTable(r.rssImport)) console.log(l);
      if (r.rssEmbed) {
        console.log('');
        console.log(`### ${r.format} ${r.mode}: memory while waiting for embeddings (start = at the import's end)`);
        for (const l of rssTable(r.rssEmbed)) console.log(l);
      }
      if (r.rssAfter) {
        console.log('');
        console.log(`### ${r.format} ${r.mode}: memory in the ${AFTER_S} s after (start = at the end of the phase before)`);
        for (const l of rssTable(r.rssAfter)) console.log(l);
        // The import's growth goal, held to the after phase too: its peak against the reading before the import.
        const growth = r.rssImport.map((f) => {
          const after = r.rssAfter!.find((a) => a.pid === f.pid);
          return `${f.label} ${mb(Math.max(f.peak, after?.peak ?? 0) - f.start)} MiB, CPU ${(f.cpuS + (after?.cpuS ?? 0)).toFixed(1)} s`;
        });
        console.log(`import and after, from before the import: peak growth and CPU: ${growth.join('; ')}`);
      }
      const f = r.file;
      console.log('');
      console.log(
        `file: status ${r.status}, rows_done ${String(f.rows_done)}, rows_total ${String(f.rows_total)}, rows_imported ${String(f.rows_imported)}, rows_skipped ${String(f.rows_skipped)}, ` +
          `bytes_done ${String(f.bytes_done)}, error_count ${String(f.error_count)}, failure ${JSON.stringify(f.failure ?? null)}; dataset chunk_count ${r.chunkCount}; bm25 hits ${r.searchHits}`,
      );
      if (Array.isArray(f.errors) && f.errors.length > 0) console.log(`first row errors: ${JSON.stringify(f.errors.slice(0, 5))}`);
      for (const msg of r.failures) console.log(`CHECK FAILED (${r.format} ${r.mode}): ${msg}`);
    }
    if (results.some((r) => r.failures.length > 0)) process.exitCode = 1;
  } finally {
    if (KEEP_FILES) process.stderr.write(`files kept in ${dir}\n`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
