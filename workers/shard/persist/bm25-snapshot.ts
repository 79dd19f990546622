/**
 * Versioned binary snapshot of a {@link Bm25Index}: magic bytes, format version (u32 LE), then
 * tagged sections (tag u32, byte length u32, payload), then an end marker. Typed arrays are stored
 * little-endian as they sit in memory, so loading is a few copies, not a parse.
 */
import { endianness } from 'node:os';
import { Bm25Index, type Bm25Options, type Bm25State } from '../bm25/bm25-index.js';
import { tokensFromV2 } from './bm25-snapshot-v2.js';

/** First 8 bytes of every BM25 snapshot. */
export const BM25_SNAPSHOT_MAGIC = Buffer.from('QRYBM25\0', 'latin1');
/**
 * The format version this code writes. 3 replaced the forward index and the content-term
 * sequences by one coded sequence per document (its distinct terms and content positions,
 * sequence-store.ts); version 2 is still read (bm25-snapshot-v2.ts); version 1 (no sequences)
 * is rebuilt from the store.
 */
export const BM25_SNAPSHOT_VERSION = 3;

/** The oldest version this code reads. */
const OLDEST_READ_VERSION = 2;

/** Thrown when a buffer is not a snapshot this code can load. */
export class SnapshotFormatError extends Error {
  /** Why the snapshot was rejected. */
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotFormatError';
  }
}

// Section tags, in file order; End is 'END!' so a truncated file is easy to spot.
const Tag = { Head: 1, Ids: 2, Docs: 3, Terms: 4, Postings: 5, Forward: 6, Sequences: 7, Tokens: 8, End: 0x454e4421 } as const;
type Tag = (typeof Tag)[keyof typeof Tag];

const NO_STRING = 0xffffffff;

/**
 * Little-endian section builder. Its parts are kept as pushed (typed arrays as views, not copies)
 * and written out one after another ({@link bm25StateParts}), or concatenated once.
 */
class Writer {
  private chunks: Buffer[] = [];
  private size = 0;
  u32(v: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(v >>> 0);
    this.push(b);
  }
  f64(v: number): void {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleLE(v);
    this.push(b);
  }
  array(a: Uint32Array | Uint16Array | Uint8Array): void {
    this.u32(a.length);
    this.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    // Pad to 4 bytes so the next field is easy to inspect in a hex dump.
    if (a.byteLength % 4 !== 0) this.push(Buffer.alloc(4 - (a.byteLength % 4)));
  }
  /**
   * Strings, each as its u32 byte length (NO_STRING for undefined) and UTF-8 bytes, all in
   * one buffer: a buffer per string and per length was ~60,000 allocations for SciFact's terms
   * and chunk ids, most of the time the snapshot held its thread.
   */
  strings(list: readonly (string | undefined)[]): void {
    let size = 0;
    for (const s of list) size += 4 + (s === undefined ? 0 : Buffer.byteLength(s, 'utf8'));
    const b = Buffer.allocUnsafe(size);
    let o = 0;
    for (const s of list) {
      if (s === undefined) {
        o = b.writeUInt32LE(NO_STRING, o);
        continue;
      }
      const n = b.write(s, o + 4, 'utf8');
      b.writeUInt32LE(n, o);
      o += 4 + n;
    }
    this.push(b);
  }
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  section(tag: Tag, body: Writer): void {
    this.u32(tag);
    this.u32(body.size);
    for (const c of body.chunks) this.push(c);
  }
  /** The parts, in order, and their total length in bytes. */
  parts(): { parts: Buffer[]; size: number } {
    return { parts: this.chunks, size: this.size };
  }
}

/** Bounds-checked little-endian reader over one buffer. */
class Reader {
  constructor(
    private readonly buf: Buffer,
    private pos: number,
    private readonly end: number,
  ) {}
  private need(n: number): void {
    if (this.pos + n > this.end) throw new SnapshotFormatError('BM25 snapshot is truncated or corrupt');
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  u32s(): Uint32Array {
    const n = this.u32();
    return new Uint32Array(this.bytes(n * 4, 4));
  }
  u16s(): Uint16Array {
    const n = this.u32();
    return new Uint16Array(this.bytes(n * 2, 4));
  }
  u8s(): Uint8Array {
    const n = this.u32();
    return new Uint8Array(this.bytes(n, 4));
  }
  string(): string | undefined {
    const n = this.u32();
    if (n === NO_STRING) return undefined;
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** Copies n bytes (then skips padding to `align`) into a fresh, aligned ArrayBuffer. */
  private bytes(n: number, align: number): ArrayBuffer {
    this.need(n);
    const out = new ArrayBuffer(n);
    new Uint8Array(out).set(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    const pad = (align - (n % align)) % align;
    this.need(pad);
    this.pos += pad;
    return out;
  }
  /** Reads a section header, checks its tag, returns a reader over its body and skips past it. */
  section(tag: Tag): Reader {
    const got = this.u32();
    if (got !== tag) throw new SnapshotFormatError(`BM25 snapshot: expected section ${tag}, found ${got}`);
    const len = this.u32();
    this.need(len);
    const r = new Reader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }
}

function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new SnapshotFormatError('BM25 snapshots are little-endian only');
}

/** Serialises an index (compacting it first, which does not change its results). */
export function saveBm25Snapshot(index: Bm25Index): Buffer {
  return saveBm25State(index.exportState());
}

/** Serialises an index's exported state (a private copy: it may be written after the index changed). */
export function saveBm25State(s: Bm25State): Buffer {
  const { parts, size } = bm25StateParts(s);
  return Buffer.concat(parts, size);
}

/**
 * The bytes of {@link saveBm25State} as parts to write one after another: the arrays of `s` are
 * views, so a snapshot written this way never holds a second copy of the index (the concatenated
 * buffer, then one more for the shard file, held ~3x the file at its peak). `s` must not change
 * until they are written.
 */
export function bm25StateParts(s: Bm25State): { parts: Buffer[]; size: number } {
  assertLittleEndian();
  const out = new Writer();
  out.push(BM25_SNAPSHOT_MAGIC);
  out.u32(BM25_SNAPSHOT_VERSION);

  const head = new Writer();
  head.f64(s.k1);
  head.f64(s.b);
  head.f64(s.totalLength);
  head.u32(s.analyzer.removeStopWords ? 1 : 0);
  head.u32(s.analyzer.stem ? 1 : 0);
  head.u32(s.analyzer.maxTokenLength);
  head.u32(s.analyzer.stemCacheSize);
  out.section(Tag.Head, head);

  const ids = new Writer();
  ids.u32(s.chunkIds.length);
  ids.strings(s.chunkIds);
  ids.array(s.freeIds);
  out.section(Tag.Ids, ids);

  const docs = new Writer();
  docs.array(s.docLen);
  out.section(Tag.Docs, docs);

  const terms = new Writer();
  terms.u32(s.terms.length);
  terms.strings(s.terms);
  terms.array(s.df);
  terms.array(s.maxTf);
  terms.array(s.minDl);
  out.section(Tag.Terms, terms);

  const postings = new Writer();
  postings.array(s.postingOffsets);
  postings.array(s.postingDocs);
  postings.array(s.postingTfs);
  out.section(Tag.Postings, postings);

  const tokens = new Writer();
  tokens.array(s.tokenOffsets);
  tokens.array(s.tokenCodes);
  out.section(Tag.Tokens, tokens);

  out.section(Tag.End, new Writer());
  return out.parts();
}

/** Decodes a snapshot buffer into plain index state, validating shape as it goes. */
export function decodeBm25Snapshot(buf: Buffer): Bm25State {
  assertLittleEndian();
  if (buf.length < 12 || !buf.subarray(0, 8).equals(BM25_SNAPSHOT_MAGIC)) {
    throw new SnapshotFormatError('not a BM25 snapshot (bad magic bytes)');
  }
  const version = buf.readUInt32LE(8);
  if (version < OLDEST_READ_VERSION || version > BM25_SNAPSHOT_VERSION) {
    throw new SnapshotFormatError(
      `unsupported BM25 snapshot format version ${version} (this build reads versions ${OLDEST_READ_VERSION} to ${BM25_SNAPSHOT_VERSION}); rebuild the index from the store`,
    );
  }
  const r = new Reader(buf, 12, buf.length);

  const head = r.section(Tag.Head);
  const k1 = head.f64();
  const b = head.f64();
  const totalLength = head.f64();
  const analyzer = {
    removeStopWords: head.u32() === 1,
    stem: head.u32() === 1,
    maxTokenLength: head.u32(),
    stemCacheSize: head.u32(),
  };

  const ids = r.section(Tag.Ids);
  const cap = ids.u32();
  const chunkIds: (string | undefined)[] = [];
  for (let i = 0; i < cap; i++) chunkIds.push(ids.string());
  const freeIds = ids.u32s();

  const docLen = r.section(Tag.Docs).u32s();

  const termsSec = r.section(Tag.Terms);
  const termCount = termsSec.u32();
  const terms: string[] = [];
  for (let i = 0; i < termCount; i++) {
    const t = termsSec.string();
    if (t === undefined) throw new SnapshotFormatError('BM25 snapshot: missing term string');
    terms.push(t);
  }
  const df = termsSec.u32s();
  const maxTf = termsSec.u16s();
  const minDl = termsSec.u32s();

  const post = r.section(Tag.Postings);
  const postingOffsets = post.u32s();
  const postingDocs = post.u32s();
  const postingTfs = post.u16s();

  let tokenOffsets: Uint32Array;
  let tokenCodes: Uint8Array;
  if (version === 2) {
    const fwd = r.section(Tag.Forward);
    const fwdOffsets = fwd.u32s();
    const fwdTerms = fwd.u32s();
    const seq = r.section(Tag.Sequences);
    const seqOffsets = seq.u32s();
    const seqTerms = seq.u32s();
    const shaped =
      fwdOffsets.length === cap + 1 && fwdOffsets[cap] === fwdTerms.length && seqOffsets.length === cap + 1 && seqOffsets[cap] === seqTerms.length &&
      fwdTerms.every((t) => t < terms.length) && seqTerms.every((t) => t < terms.length);
    if (!shaped) throw new SnapshotFormatError('BM25 snapshot: section sizes disagree');
    ({ tokenOffsets, tokenCodes } = tokensFromV2(fwdOffsets, fwdTerms, seqOffsets, seqTerms, terms.length));
  } else {
    const tokens = r.section(Tag.Tokens);
    tokenOffsets = tokens.u32s();
    tokenCodes = tokens.u8s();
  }
  r.section(Tag.End);

  const T = terms.length;
  const consistent =
    docLen.length === cap && df.length === T && maxTf.length === T && minDl.length === T &&
    postingOffsets.length === T + 1 && postingOffsets[T] === postingDocs.length &&
    postingTfs.length === postingDocs.length && tokenOffsets.length === cap + 1 && tokenOffsets[cap] === tokenCodes.length;
  if (!consistent) throw new SnapshotFormatError('BM25 snapshot: section sizes disagree');
  return {
    k1, b, analyzer, chunkIds, freeIds, docLen, terms, df, maxTf, minDl,
    postingOffsets, postingDocs, postingTfs, tokenOffsets, tokenCodes, totalLength,
  };
}

/** Loads an index from a snapshot; throws {@link SnapshotFormatError} on unknown versions or corruption. */
export function loadBm25Snapshot(buf: Buffer, options: Partial<Bm25Options> = {}): Bm25Index {
  return Bm25Index.fromState(decodeBm25Snapshot(buf), options);
}
