import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DenseIndex } from '../../workers/shard/dense/dense-index.js';
import type { DenseMetric } from '../../workers/shard/dense/dense-metric.js';
import { DENSE_SNAPSHOT_VERSION, DenseSnapshotError, loadDenseSnapshot, saveDenseSnapshot } from '../../workers/shard/dense/dense-snapshot.js';
import { Bitset } from '../../workers/shard/bm25/bitset.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dense-snapshot-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Deterministic xorshift PRNG. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296 - 0.5;
  };
}

/** An index with removals and a reused id, so the snapshot must carry holes and replacements. */
function build(metric: DenseMetric, n = 1500, dim = 24): { index: DenseIndex; queries: Float32Array[] } {
  const rnd = prng(11);
  const index = new DenseIndex({ dimension: dim, metric });
  for (let i = 0; i < n; i++) index.upsert(i, Float32Array.from({ length: dim }, rnd));
  for (let i = 0; i < n; i += 7) index.remove(i);
  for (let i = 0; i < n; i += 21) index.upsert(i, Float32Array.from({ length: dim }, rnd));
  index.upsert(n + 40, Float32Array.from({ length: dim }, rnd));
  const queries = Array.from({ length: 20 }, () => Float32Array.from({ length: dim }, rnd));
  return { index, queries };
}

/** Every search the caller can make on the snapshot's state: unfiltered (graph) and filtered (exact). */
function answers(index: DenseIndex, queries: Float32Array[]) {
  const allow = Bitset.of(2000, [1, 2, 3, 21, 42, 500, 1499, 1540]);
  return queries.flatMap((q) => [index.search(q, 10, null), index.search(q, 10, allow)]).map((h) => ({ ids: Array.from(h.ids), scores: Array.from(h.scores), path: h.path }));
}

describe('dense snapshot', () => {
  for (const metric of ['cos', 'ip', 'l2sq', 'l1'] as const) {
    it(`${metric}: a round trip answers every search identically and stays writable`, () => {
      const { index, queries } = build(metric);
      const file = path.join(dir, `rt-${metric}.dense`);
      saveDenseSnapshot(index, file);
      const loaded = loadDenseSnapshot(file);
      expect(loaded.size).toBe(index.size);
      // initialCapacity becomes the saved slot count; everything else is the saved configuration.
      expect({ ...loaded.config, initialCapacity: 0 }).toEqual({ ...index.config, initialCapacity: 0 });
      for (let id = 0; id < 1600; id++) expect(loaded.has(id)).toBe(index.has(id));
      expect(answers(loaded, queries)).toEqual(answers(index, queries));
      // Still a live index: replace, remove and reuse work after loading.
      loaded.remove(1);
      loaded.upsert(1, queries[0]!.slice());
      const top = loaded.search(queries[0]!, 1, null);
      expect(top.ids[0]).toBe(1);
      expect(loaded.has(0)).toBe(true);
      expect(loaded.remove(3)).toBe(true);
      expect(Array.from(loaded.search(queries[1]!, 2000, null).ids)).not.toContain(3);
    });
  }

  it('a second save replaces the first and deletes the old graph file', () => {
    const { index, queries } = build('cos', 300);
    const file = path.join(dir, 'gen.dense');
    saveDenseSnapshot(index, file);
    index.upsert(7, queries[0]!.slice());
    saveDenseSnapshot(index, file);
    const graphs = fs.readdirSync(dir).filter((f) => f.startsWith('gen.dense.g'));
    expect(graphs).toHaveLength(1);
    expect(fs.readdirSync(dir).some((f) => f.includes('.tmp-'))).toBe(false);
    expect(loadDenseSnapshot(file).search(queries[0]!, 1, null).ids[0]).toBe(7);
  });

  it('search-time overrides apply on load; the stored structure does not change', () => {
    const { index } = build('cos', 200);
    const file = path.join(dir, 'over.dense');
    saveDenseSnapshot(index, file);
    const loaded = loadDenseSnapshot(file, { expansionSearch: 200 });
    expect(loaded.config.expansionSearch).toBe(200);
    expect(loaded.config.connectivity).toBe(index.config.connectivity);
  });

  describe('unusable snapshots raise DenseSnapshotError with the problem', () => {
    const { index } = build('cos', 200);
    const file = path.join(dir, 'bad.dense');
    saveDenseSnapshot(index, file);
    const good = fs.readFileSync(file);
    const expectProblem = (bytes: Buffer | null, problem: string, target = file) => {
      const probe = path.join(dir, `probe-${problem}.dense`);
      if (bytes !== null) {
        fs.writeFileSync(probe, bytes);
        // The sidecar names its graph relative to its own directory; keep the graph beside it.
      }
      let caught: unknown;
      try {
        loadDenseSnapshot(bytes === null ? target : probe);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DenseSnapshotError);
      expect((caught as DenseSnapshotError).problem).toBe(problem);
    };

    it('missing file', () => expectProblem(null, 'missing', path.join(dir, 'nope.dense')));
    it('foreign file', () => expectProblem(Buffer.from('hello world, not a snapshot at all'), 'bad-magic'));
    it('other version', () => {
      const b = Buffer.from(good);
      b.writeUInt32LE(DENSE_SNAPSHOT_VERSION + 1, 8);
      expectProblem(b, 'unsupported-version');
    });
    it('flipped byte in the vectors', () => {
      const b = Buffer.from(good);
      b[b.length - 40]! ^= 0xff;
      expectProblem(b, 'corrupt');
    });
    it('truncated file', () => expectProblem(good.subarray(0, good.length - 100), 'corrupt'));
    it('graph file missing or damaged', () => {
      const graph = fs.readdirSync(dir).find((f) => f.startsWith('bad.dense.g'))!;
      const graphPath = path.join(dir, graph);
      const bytes = fs.readFileSync(graphPath);
      fs.writeFileSync(graphPath, bytes.subarray(0, bytes.length - 10));
      expectProblem(null, 'corrupt');
      fs.rmSync(graphPath);
      expectProblem(null, 'corrupt');
    });
  });
});
