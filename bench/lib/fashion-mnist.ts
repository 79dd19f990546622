/**
 * Fashion-MNIST (Debian dataset-fashion-mnist) for ANN benchmarks: pinned IDX3 loading, exact
 * Euclidean top-10 ground truth over the first `n` train images, and tie-aware recall@10.
 * Same definitions as bench/ann-fashion-mnist.ts (which keeps its own copy).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { exactSearch, MetricKind } from 'usearch';

/** Where Debian's dataset-fashion-mnist installs the files. */
export const FMNIST_DIR = '/usr/share/datasets/fashion-mnist';
/** Neighbours per query in the ground truth and in recall. */
export const GT_K = 10;
// Pinned so a different upstream file cannot silently change the numbers.
const SHA256: Record<string, string> = {
  'train-images-idx3-ubyte.gz': 'b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7',
  't10k-images-idx3-ubyte.gz': 'cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa',
};
// Candidates proposed per query by usearch's f32 brute force before the exact integer re-rank.
const CANDIDATES = 100;

/** An IDX3 ubyte image file: image count, pixels per image and the raw bytes. */
export interface IdxImages {
  n: number;
  dim: number;
  bytes: Uint8Array;
}

/** Reads a gzipped IDX3 ubyte file from {@link FMNIST_DIR}, checking its pinned sha256. */
export function readIdx(file: 'train-images-idx3-ubyte.gz' | 't10k-images-idx3-ubyte.gz'): IdxImages {
  const full = path.join(FMNIST_DIR, file);
  if (!fs.existsSync(full)) throw new Error(`${full} missing: apt-get install -y dataset-fashion-mnist`);
  const gz = fs.readFileSync(full);
  const digest = createHash('sha256').update(gz).digest('hex');
  if (digest !== SHA256[file]) throw new Error(`${file}: sha256 ${digest} is not the pinned ${SHA256[file]}`);
  const buf = gunzipSync(gz);
  if (buf.readUInt32BE(0) !== 0x803) throw new Error(`${file}: not an IDX3 ubyte file`);
  const n = buf.readUInt32BE(4);
  const dim = buf.readUInt32BE(8) * buf.readUInt32BE(12);
  return { n, dim, bytes: new Uint8Array(buf.buffer, buf.byteOffset + 16, n * dim) };
}

/** Exact squared L2 between two byte vectors (integer arithmetic: no rounding at all). */
export function l2sqBytes(a: Uint8Array, ai: number, b: Uint8Array, bi: number, dim: number): number {
  let s = 0;
  for (let j = 0; j < dim; j++) {
    const d = a[ai + j]! - b[bi + j]!;
    s += d * d;
  }
  return s;
}

/** Exact top-10 per query: row ids and Euclidean distances, `nq * GT_K` each. */
export interface GroundTruth {
  ids: Uint32Array;
  dist: Float64Array;
  cached: boolean;
}

/**
 * Exact top-10 of each query among the first `n` rows of `base`: usearch's f32 brute force
 * proposes 100 candidates, re-ranked with exact integer distances (ties by id). Cached in `cacheDir`
 * keyed by n and the query count.
 */
export function exactGroundTruth(base: Uint8Array, queries: Uint8Array, n: number, nq: number, dim: number, cacheDir: string): GroundTruth {
  fs.mkdirSync(cacheDir, { recursive: true });
  const cache = path.join(cacheDir, `gt-l2-n${n}-q${nq}.bin`);
  const ids = new Uint32Array(nq * GT_K);
  const dist = new Float64Array(nq * GT_K);
  if (fs.existsSync(cache)) {
    const b = fs.readFileSync(cache);
    new Uint8Array(ids.buffer).set(b.subarray(0, ids.byteLength));
    new Uint8Array(dist.buffer).set(b.subarray(ids.byteLength, ids.byteLength + dist.byteLength));
    return { ids, dist, cached: true };
  }
  const baseF = Float32Array.from(base.subarray(0, n * dim));
  for (let from = 0; from < nq; from += 100) {
    const to = Math.min(nq, from + 100);
    const m = exactSearch(baseF, Float32Array.from(queries.subarray(from * dim, to * dim)), dim, CANDIDATES, MetricKind.L2sq, 0);
    for (let q = from; q < to; q++) {
      const cand: Array<{ id: number; d: number }> = [];
      for (let c = 0; c < CANDIDATES; c++) {
        const id = Number(m.keys[(q - from) * CANDIDATES + c]!);
        if (id < n) cand.push({ id, d: l2sqBytes(queries, q * dim, base, id * dim, dim) });
      }
      cand.sort((x, y) => x.d - y.d || x.id - y.id);
      for (let r = 0; r < GT_K; r++) {
        ids[q * GT_K + r] = cand[r]!.id;
        dist[q * GT_K + r] = Math.sqrt(cand[r]!.d);
      }
    }
  }
  fs.writeFileSync(cache, Buffer.concat([Buffer.from(ids.buffer), Buffer.from(dist.buffer)]));
  return { ids, dist, cached: false };
}

/**
 * Tie-aware recall@10 (as ann-benchmarks): a returned row counts when its exact distance is within
 * the true 10th distance. `results` holds GT_K row ids per query, 0xffffffff for a missing one.
 */
export function recallAt10(results: Uint32Array, base: Uint8Array, queries: Uint8Array, gt: GroundTruth, nq: number, dim: number): number {
  let hits = 0;
  for (let q = 0; q < nq; q++) {
    const kth = gt.dist[q * GT_K + GT_K - 1]!;
    for (let r = 0; r < GT_K; r++) {
      const id = results[q * GT_K + r]!;
      if (id === 0xffffffff) continue;
      if (Math.sqrt(l2sqBytes(queries, q * dim, base, id * dim, dim)) <= kth + 1e-9) hits++;
    }
  }
  return hits / (nq * GT_K);
}
