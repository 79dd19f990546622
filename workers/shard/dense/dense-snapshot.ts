/**
 * Snapshot of a {@link DenseIndex} as two files: the usearch graph (`<file>.g<generation>.usearch`,
 * written by usearch `save`) and a sidecar at `<file>` holding the configuration, the live set and
 * the f32 vectors, which names the graph generation it belongs to. The sidecar is written last
 * with tmp + fsync + rename, so it is the commit point: a crash leaves either the old pair or the
 * new pair, never a sidecar pointing at a half-written graph.
 *
 * Sidecar layout (little-endian): magic `QRYDENS\0`, u32 version, u32 header length, header JSON,
 * zero padding to 4 bytes, live bitset words (u32), the live vectors in ascending id order
 * (f32 x dimension each), then a u32 CRC-32 of everything before it.
 */
import fs from 'node:fs';
import { endianness } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { DenseIndex, type DenseIndexConfig, type DenseIndexOptions } from './dense-index.js';

/** First 8 bytes of every dense sidecar. */
export const DENSE_SNAPSHOT_MAGIC = Buffer.from('QRYDENS\0', 'latin1');
/** The format version this code writes and the only one it reads. */
export const DENSE_SNAPSHOT_VERSION = 1;

/** Why a snapshot could not be used. */
export type DenseSnapshotProblem = 'missing' | 'bad-magic' | 'unsupported-version' | 'corrupt';

/** Thrown when a snapshot cannot be loaded; the caller rebuilds the index from the store. */
export class DenseSnapshotError extends Error {
  /** The kind of problem, for the caller's log line and metrics (never branch on the message). */
  readonly problem: DenseSnapshotProblem;

  /** An error of kind `problem`. */
  constructor(problem: DenseSnapshotProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DenseSnapshotError';
    this.problem = problem;
  }
}

interface SidecarHeader {
  config: DenseIndexConfig;
  live: number;
  slots: number;
  graphFile: string | null;
  graphBytes: number;
}

/** Options a loaded index may change: search-time settings only, never the stored structure. */
export type DenseLoadOverrides = Partial<Pick<DenseIndexOptions, 'expansionSearch' | 'exactMaxCount' | 'exactMaxFraction'>>;

let generationCounter = 0;

/** Saves `index` to `file` (plus its graph file beside it) atomically; removes older graph files. */
export function saveDenseSnapshot(index: DenseIndex, file: string): void {
  assertLittleEndian();
  const dir = path.dirname(file);
  const base = path.basename(file);
  fs.mkdirSync(dir, { recursive: true });
  let graphFile: string | null = null;
  let graphBytes = 0;
  if (index.graph !== null) {
    const generation = `${Date.now().toString(36)}${process.pid.toString(36)}${(generationCounter++).toString(36)}`;
    graphFile = `${base}.g${generation}.usearch`;
    const graphPath = path.join(dir, graphFile);
    index.graph.save(graphPath);
    fsyncFile(graphPath);
    graphBytes = fs.statSync(graphPath).size;
  }
  const slab = index.slab;
  const header: SidecarHeader = { config: index.config, live: slab.size, slots: slab.capacity, graphFile, graphBytes };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const headLen = align4(16 + json.length);
  const liveBytes = slab.live.byteLength;
  const vecBytes = slab.size * index.dimension * 4;
  const buf = Buffer.alloc(headLen + liveBytes + vecBytes + 4);
  DENSE_SNAPSHOT_MAGIC.copy(buf, 0);
  buf.writeUInt32LE(DENSE_SNAPSHOT_VERSION, 8);
  buf.writeUInt32LE(json.length, 12);
  json.copy(buf, 16);
  Buffer.from(slab.live.buffer, slab.live.byteOffset, liveBytes).copy(buf, headLen);
  // Only live rows are written: dead rows are garbage and ids are dense, so this is compact.
  const vectors = new Float32Array(buf.buffer, buf.byteOffset + headLen + liveBytes, slab.size * index.dimension);
  const dim = index.dimension;
  let row = 0;
  forEachLive(slab.live, (id) => {
    vectors.set(slab.data.subarray(id * dim, id * dim + dim), row * dim);
    row++;
  });
  buf.writeUInt32LE(crc32(buf.subarray(0, buf.length - 4)), buf.length - 4);
  writeAtomically(file, buf);
  removeStaleGraphs(dir, base, graphFile);
}

/**
 * Loads a snapshot written by {@link saveDenseSnapshot}. Throws {@link DenseSnapshotError} when it
 * is missing, foreign, of another version or damaged, so the caller can rebuild instead.
 */
export function loadDenseSnapshot(file: string, overrides: DenseLoadOverrides = {}): DenseIndex {
  assertLittleEndian();
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (err) {
    throw new DenseSnapshotError('missing', `dense snapshot ${file} cannot be read`, { cause: err });
  }
  if (buf.length < 20 || !buf.subarray(0, 8).equals(DENSE_SNAPSHOT_MAGIC)) {
    throw new DenseSnapshotError('bad-magic', `${file} is not a dense snapshot (bad magic bytes)`);
  }
  const version = buf.readUInt32LE(8);
  if (version !== DENSE_SNAPSHOT_VERSION) {
    throw new DenseSnapshotError('unsupported-version', `dense snapshot ${file} has version ${version}, this build reads ${DENSE_SNAPSHOT_VERSION}`);
  }
  if (crc32(buf.subarray(0, buf.length - 4)) !== buf.readUInt32LE(buf.length - 4)) {
    throw new DenseSnapshotError('corrupt', `dense snapshot ${file} fails its checksum`);
  }
  const header = parseHeader(buf, file);
  const { config } = header;
  const dim = config.dimension;
  const headLen = align4(16 + buf.readUInt32LE(12));
  const words = (header.slots + 31) >>> 5;
  if (buf.length !== headLen + words * 4 + header.live * dim * 4 + 4) {
    throw new DenseSnapshotError('corrupt', `dense snapshot ${file} has the wrong length for its header`);
  }
  // Copy out of the file buffer so typed arrays are aligned whatever the JSON length was.
  const live = new Uint32Array(words);
  new Uint8Array(live.buffer).set(buf.subarray(headLen, headLen + words * 4));
  const vecStart = headLen + words * 4;
  const vectors = new Float32Array(header.live * dim);
  new Uint8Array(vectors.buffer).set(buf.subarray(vecStart, vecStart + vectors.byteLength));

  const index = new DenseIndex(Object.assign({}, config, stripUndefined(overrides), { initialCapacity: header.slots }));
  const ids = new Uint32Array(header.live);
  let row = 0;
  forEachLive(live, (id) => {
    if (row < ids.length) ids[row] = id;
    row++;
  });
  if (row !== header.live) throw new DenseSnapshotError('corrupt', `dense snapshot ${file}: live set has ${row} ids, header says ${header.live}`);
  for (let i = 0; i < ids.length; i++) index.slab.put(ids[i]!, vectors, i * dim);

  if (index.graph !== null) {
    if (header.graphFile === null) throw new DenseSnapshotError('corrupt', `dense snapshot ${file} names no graph file`);
    const graphPath = path.join(path.dirname(file), header.graphFile);
    let size = -1;
    try {
      size = fs.statSync(graphPath).size;
    } catch {
      // Reported below with the expected size.
    }
    if (size !== header.graphBytes) {
      throw new DenseSnapshotError('corrupt', `dense graph ${graphPath} is ${size} bytes, the sidecar expects ${header.graphBytes}`);
    }
    try {
      index.graph.load(graphPath);
    } catch (err) {
      throw new DenseSnapshotError('corrupt', `dense graph ${graphPath} cannot be loaded`, { cause: err });
    }
    if (index.graph.size() !== header.live) {
      throw new DenseSnapshotError('corrupt', `dense graph holds ${index.graph.size()} vectors, the sidecar ${header.live}`);
    }
    if (ids.length > 0) {
      const present = index.graph.contains(BigUint64Array.from(ids, (id) => BigInt(id)));
      if (Array.isArray(present) ? present.some((p) => !p) : !present) {
        throw new DenseSnapshotError('corrupt', `dense graph ${graphPath} does not hold the sidecar's ids`);
      }
    }
  }
  return index;
}

/** Validates the JSON header; anything unexpected is corruption (the version already matched). */
function parseHeader(buf: Buffer, file: string): SidecarHeader {
  const len = buf.readUInt32LE(12);
  if (16 + len > buf.length - 4) throw new DenseSnapshotError('corrupt', `dense snapshot ${file}: header overruns the file`);
  let h: SidecarHeader;
  try {
    h = JSON.parse(buf.subarray(16, 16 + len).toString('utf8')) as SidecarHeader;
  } catch (err) {
    throw new DenseSnapshotError('corrupt', `dense snapshot ${file}: header is not JSON`, { cause: err });
  }
  const c = h?.config;
  const ok =
    c !== undefined &&
    Number.isInteger(c.dimension) &&
    c.dimension > 0 &&
    ['cos', 'ip', 'l2sq', 'l1'].includes(c.metric) &&
    Number.isInteger(h.live) &&
    Number.isInteger(h.slots) &&
    h.live >= 0 &&
    h.slots >= h.live &&
    Number.isInteger(h.graphBytes) &&
    (h.graphFile === null || (typeof h.graphFile === 'string' && !h.graphFile.includes('/') && !h.graphFile.includes('\\')));
  if (!ok) throw new DenseSnapshotError('corrupt', `dense snapshot ${file}: header fields are invalid`);
  return h;
}

/** Calls `fn` for each set bit, ascending. */
function forEachLive(words: Uint32Array, fn: (id: number) => void): void {
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    while (v !== 0) {
      const low = v & -v;
      fn(i * 32 + (31 - Math.clz32(low)));
      v ^= low;
    }
  }
}

/** tmp + fsync + rename + fsync of the directory, so the new file is durable before it is visible. */
function writeAtomically(file: string, data: Buffer): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncFile(path.dirname(file));
}

/** fsync of a file or directory written by someone else (usearch `save` does not sync). */
function fsyncFile(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Deletes graph files of earlier generations of this snapshot (after the new sidecar committed). */
function removeStaleGraphs(dir: string, base: string, keep: string | null): void {
  const prefix = `${base}.g`;
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(prefix) && name.endsWith('.usearch') && name !== keep) fs.rmSync(path.join(dir, name), { force: true });
  }
}

const align4 = (n: number): number => (n + 3) & ~3;

/** The format stores typed arrays as they sit in memory, which is little-endian on every target. */
function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('dense snapshots need a little-endian machine');
}

/** Drops undefined members so they do not override stored values in a spread. */
function stripUndefined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) if (value !== undefined) out[key] = value;
  return out as T;
}
