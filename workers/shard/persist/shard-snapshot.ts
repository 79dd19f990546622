/**
 * A shard's snapshot: a versioned binary file holding the applied change-log sequence, the BM25
 * index (its own codec) and the filterable fields. Written to a temporary file, synced and
 * renamed, so a crash leaves either the old snapshot or the new one, never half of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Bm25Params, ShardDoc } from '../protocol.js';
import { Shard } from '../shard.js';
import { DenseSnapshotError, loadDenseSnapshot, saveDenseSnapshot } from '../dense/dense-snapshot.js';
import type { DenseIndex } from '../dense/dense-index.js';
import type { Bm25State } from '../bm25/bm25-index.js';
import { bm25StateParts, loadBm25Snapshot, SnapshotFormatError } from './bm25-snapshot.js';
import { withFields } from '../../../core/domain/with-fields.js';

/**
 * A chunk as the snapshot's JSON holds it: its fields and SPLADE vector. Snapshots before
 * 2026-11-30 also held its words (ids into the body's `words`) and were loaded by counting them
 * into the typo vocabulary; those are now ignored (see {@link decodeShard}).
 */
type SnapshotDoc = Omit<ShardDoc, 'text' | 'sparse'> & { words?: number[]; sparse?: { indices: number[]; values: number[] } };

/** Magic bytes of a shard snapshot. */
export const SHARD_SNAPSHOT_MAGIC = Buffer.from('QSHARD\0\0', 'latin1');
/**
 * Current format version (3 added the typo vocabulary, which is no longer written or read: a
 * version-3 file with or without it loads the same); older versions are rejected (the store
 * rebuilds the shard).
 */
export const SHARD_SNAPSHOT_VERSION = 3;

/**
 * What a snapshot needs of a shard, copied in one turn: the BM25 index's exported state (private
 * copies of its arrays) and the chunks' fields as fresh objects. Encoding it later, while the
 * shard changes, still gives the snapshot of this moment; and were a field object changed in
 * place meanwhile, a load replays the change log from `seq` anyway, which writes it again.
 */
interface CapturedShard {
  readonly state: Bm25State;
  readonly docs: SnapshotDoc[];
  /** Whether the shard's typo vocabulary was on: the loader's core fills it again (see decodeShard). */
  readonly typo: boolean;
  readonly seq: number;
  readonly denseFile: string | null;
}

function captureShard(shard: Shard, denseFile: string | null): CapturedShard {
  const state = shard.index.exportState();
  const docs: SnapshotDoc[] = [];
  for (let id = 0; id < shard.fields.capacity; id++) {
    const doc = shard.fields.doc(id, (i) => shard.index.chunkId(i));
    if (!doc) continue;
    const sparse = shard.sparse.get(id);
    // `doc` is a fresh object of the chunk's fields: completed in place rather than copied
    // twice (the copies were most of the capture's ~2.5 us a chunk).
    const entry = doc as SnapshotDoc;
    if (sparse) entry.sparse = { indices: Array.from(sparse.indices), values: Array.from(sparse.values) };
    docs.push(entry);
  }
  return { state, docs, typo: shard.vocabulary !== null, seq: shard.appliedSeq, denseFile };
}

/** Chunks whose fields are turned into JSON at a time: the fields are written a slice at a time, never whole in memory. */
const FIELDS_SLICE = 4096;

/**
 * Writes a captured shard to `handle`. Layout: magic, u32 version, f64 seq, u32 bm25 length,
 * bm25, u32 fields length, fields JSON (which also names the dense snapshot file written just
 * before, or null). The BM25 arrays go out as views of the captured state, and the fields JSON a
 * slice of chunks at a time (its length written last, in its place), so the commit holds no copy
 * of either; the thread serves other tasks while each write is in flight (an inline shard's
 * snapshot is written from the core's event loop).
 */
async function writeCaptured(handle: Pick<fs.promises.FileHandle, 'writev'>, c: CapturedShard): Promise<void> {
  const bm25 = bm25StateParts(c.state);
  const head = Buffer.alloc(SHARD_SNAPSHOT_MAGIC.length + 4 + 8 + 4);
  SHARD_SNAPSHOT_MAGIC.copy(head, 0);
  let o = SHARD_SNAPSHOT_MAGIC.length;
  head.writeUInt32LE(SHARD_SNAPSHOT_VERSION, o);
  head.writeDoubleLE(c.seq, (o += 4));
  head.writeUInt32LE(bm25.size, (o += 8));
  await writeParts(handle, [head, ...bm25.parts], head.length + bm25.size);
  const lengthAt = head.length + bm25.size;
  const fieldsAt = lengthAt + 4;
  let at = fieldsAt;
  const text = async (json: string): Promise<void> => {
    const bytes = Buffer.from(json, 'utf8');
    await writeParts(handle, [bytes], bytes.length, at);
    at += bytes.length;
  };
  // The bytes of JSON.stringify({ docs, denseFile, typo }), in pieces.
  await text('{"docs":[');
  for (let i = 0; i < c.docs.length; i += FIELDS_SLICE) {
    const slice = c.docs.slice(i, i + FIELDS_SLICE).map((d) => JSON.stringify(d)).join(',');
    await text(i === 0 ? slice : `,${slice}`);
  }
  await text(`],"denseFile":${JSON.stringify(c.denseFile)},"typo":${JSON.stringify(c.typo)}}`);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(at - fieldsAt, 0);
  await writeParts(handle, [length], 4, lengthAt);
}

/**
 * Writes `parts` in order into `handle` from byte `position` (a write may take fewer bytes than
 * given: the rest follows).
 */
export async function writeParts(handle: Pick<fs.promises.FileHandle, 'writev'>, parts: readonly Buffer[], size: number, position = 0): Promise<void> {
  let written = 0;
  let rest = parts.filter((p) => p.length > 0);
  while (written < size) {
    const { bytesWritten } = await handle.writev(rest, position + written);
    if (bytesWritten <= 0) throw new Error(`snapshot write made no progress at byte ${written} of ${size}`);
    written += bytesWritten;
    // Drop what went out; a part cut in the middle continues from where it was cut.
    let skip = bytesWritten;
    while (skip > 0 && rest.length > 0) {
      const first = rest[0]!;
      if (first.length <= skip) {
        skip -= first.length;
        rest = rest.slice(1);
      } else {
        rest = [first.subarray(skip), ...rest.slice(1)];
        skip = 0;
      }
    }
  }
}

/** Decodes a shard snapshot; throws {@link SnapshotFormatError} on anything unexpected. */
export function decodeShard(buf: Buffer, params: Bm25Params, dir?: string): Shard {
  const m = SHARD_SNAPSHOT_MAGIC.length;
  if (buf.length < m + 16 || !buf.subarray(0, m).equals(SHARD_SNAPSHOT_MAGIC)) throw new SnapshotFormatError('not a quarry shard snapshot');
  const version = buf.readUInt32LE(m);
  if (version !== SHARD_SNAPSHOT_VERSION) {
    throw new SnapshotFormatError(`shard snapshot version ${version} is not supported (this build reads ${SHARD_SNAPSHOT_VERSION})`);
  }
  const seq = buf.readDoubleLE(m + 4);
  const bm25Len = buf.readUInt32LE(m + 12);
  const bm25Start = m + 16;
  if (bm25Start + bm25Len + 4 > buf.length) throw new SnapshotFormatError('shard snapshot is truncated');
  const index = loadBm25Snapshot(buf.subarray(bm25Start, bm25Start + bm25Len), { k1: params.k1, b: params.b });
  const fieldsLen = buf.readUInt32LE(bm25Start + bm25Len);
  const fieldsStart = bm25Start + bm25Len + 4;
  if (fieldsStart + fieldsLen !== buf.length) throw new SnapshotFormatError('shard snapshot is truncated');
  const body = JSON.parse(buf.subarray(fieldsStart).toString('utf8')) as { docs: SnapshotDoc[]; denseFile: string | null; typo?: boolean };
  const docs = body.docs;
  let dense: DenseIndex | null = null;
  if (body.denseFile !== null) {
    if (dir === undefined) throw new SnapshotFormatError('shard snapshot names a dense file but no directory was given');
    try {
      dense = loadDenseSnapshot(path.join(dir, path.basename(body.denseFile)));
    } catch (err) {
      if (err instanceof DenseSnapshotError) throw new SnapshotFormatError(`dense snapshot unusable: ${err.message}`);
      throw err;
    }
  }
  const shard = new Shard(params, index, dense);
  // The typo vocabulary is not restored here: counting SciFact's 5,183 chunks' words into it took
  // 1.1-1.35 s in one piece (20x the rest of the load), on the core's event loop for an inline
  // shard and in a load every search of the dataset waits for. The core fills it again from the
  // store a slice at a time after the load (DatasetTypos.warm), as on the first typo query.
  shard.typoWanted = body.typo === true;
  for (const doc of docs) {
    const id = index.internalId(doc.chunkId);
    if (id === undefined) throw new SnapshotFormatError(`shard snapshot fields name chunk ${doc.chunkId} missing from its index`);
    const { words: _words, sparse: sv, ...fields } = doc;
    shard.fields.set(id, withFields(fields, { text: '' }));
    // SPLADE vectors travel as JSON arrays (exact for f32 values) beside the fields.
    if (sv && sv.indices.length > 0) shard.sparse.upsert(id, { indices: Uint32Array.from(sv.indices), values: Float32Array.from(sv.values) });
  }
  shard.appliedSeq = seq;
  return shard;
}

/** File of shard `shard` under `dir`. */
export const shardFile = (dir: string, shard: number): string => path.join(dir, `shard-${shard}.bin`);

/** A shard's snapshot captured (and its dense file written), ready to be encoded and written by {@link commitShardSnapshot}. */
export interface PreparedSnapshot {
  readonly dir: string;
  readonly shardNo: number;
  /** What is written; its `seq` is the sequence the snapshot records. */
  readonly captured: CapturedShard;
}

/** Temporary files of this process get distinct names: two writes of one file may overlap (an inline shard and its threaded successor). */
let tmpCounter = 0;
const tmpName = (file: string): string => `${file}.tmp-${process.pid}-${threadId}-${tmpCounter++}`;

/**
 * Captures a shard's snapshot (see {@link CapturedShard}), after writing its dense index (if any)
 * into a file named after the sequence: the main file, renamed last, names it, so a crash in
 * between leaves the previous main file pointing at the previous dense file.
 */
export function prepareShardSnapshot(dir: string, shardNo: number, shard: Shard): PreparedSnapshot {
  fs.mkdirSync(dir, { recursive: true });
  let denseFile: string | null = null;
  if (shard.dense && shard.dense.size > 0) {
    denseFile = `shard-${shardNo}-${shard.appliedSeq}-${Date.now()}.dense`;
    saveDenseSnapshot(shard.dense, path.join(dir, denseFile));
  }
  return { dir, shardNo, captured: captureShard(shard, denseFile) };
}

/** Deletes the dense files of this shard older than the one `p` names (unreachable once `p` is committed). */
function removeStaleDense(p: PreparedSnapshot): void {
  for (const name of fs.readdirSync(p.dir)) {
    if (name.startsWith(`shard-${p.shardNo}-`) && name.includes('.dense') && (p.captured.denseFile === null || !name.startsWith(p.captured.denseFile))) {
      fs.rmSync(path.join(p.dir, name), { force: true });
    }
  }
}

/**
 * Writes a prepared snapshot atomically (temp file written in parts, fsync, rename, fsync of the
 * directory), the writes and the syncs on libuv's threads: the thread that captured it serves
 * other tasks meanwhile (for an
 * inline shard that is the core's event loop, where every request waited out the encoding, the
 * write and its fsync: 60-120 ms for SciFact's 10.9 MB here).
 */
export async function commitShardSnapshot(p: PreparedSnapshot): Promise<void> {
  const file = shardFile(p.dir, p.shardNo);
  const tmp = tmpName(file);
  const handle = await fs.promises.open(tmp, 'w');
  try {
    await writeCaptured(handle, p.captured);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.promises.rename(tmp, file);
  const dir = await fs.promises.open(p.dir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  removeStaleDense(p);
}

/** A temporary snapshot file this old was left by a write that never finished (a crash): nothing renames it any more. */
export const STALE_TMP_MS = 10 * 60_000;

/**
 * Deletes temporary files of shard `shardNo`'s snapshots under `dir` older than
 * {@link STALE_TMP_MS}: a process killed between write and rename leaves one, and each has a name
 * of its own. Younger ones may belong to a write in flight (an inline shard and its threaded
 * successor share the directory) and are left alone.
 */
export function removeStaleTemps(dir: string, shardNo: number, now = Date.now()): void {
  const prefix = `shard-${shardNo}.bin.tmp-`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const file = path.join(dir, name);
    try {
      if (now - fs.statSync(file).mtimeMs > STALE_TMP_MS) fs.rmSync(file, { force: true });
    } catch {
      // Renamed or removed meanwhile.
    }
  }
}

/** Reads a snapshot, or returns undefined when there is none or it cannot be used. */
export function readShardSnapshot(dir: string, shardNo: number, params: Bm25Params): Shard | undefined {
  const file = shardFile(dir, shardNo);
  if (!fs.existsSync(file)) return undefined;
  try {
    return decodeShard(fs.readFileSync(file), params, dir);
  } catch (err) {
    if (err instanceof SnapshotFormatError || err instanceof SyntaxError) return undefined;
    throw err;
  }
}
