import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DenseIndex } from '../../workers/shard/dense/dense-index.js';
import { distanceMetricOf, parseDistanceMetric } from '../../core/domain/distance-metric.js';
import { denseMetricFor, higherIsBetter, passesScoreThreshold, type DenseMetric } from '../../workers/shard/dense/dense-metric.js';
import { Bitset } from '../../workers/shard/bm25/bitset.js';

// The dense index against an exact brute-force oracle: cosine (or the metric under test) in f64
// over the vectors the test stored, restricted to the filter. Exact-path answers must be identical;
// graph-path answers must have exactly min(k, allowed) results and recall@10 >= 0.95 on average.

/** Deterministic xorshift PRNG. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/** Standard normal from two uniforms. */
function gauss(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
}

/** n vectors around 40 random centres, so neighbourhoods are realistic rather than uniform noise. */
function clustered(n: number, dim: number, rnd: () => number): Float32Array {
  const centres = Array.from({ length: 40 }, () => Float64Array.from({ length: dim }, () => gauss(rnd)));
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = centres[Math.floor(rnd() * centres.length)]!;
    for (let j = 0; j < dim; j++) out[i * dim + j] = c[j]! + 0.6 * gauss(rnd);
  }
  return out;
}

/** The product score of two vectors under `metric`, in f64. */
function score(metric: DenseMetric, a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let l2 = 0;
  let l1 = 0;
  for (let j = 0; j < a.length; j++) {
    dot += a[j]! * b[j]!;
    na += a[j]! * a[j]!;
    nb += b[j]! * b[j]!;
    l2 += (a[j]! - b[j]!) ** 2;
    l1 += Math.abs(a[j]! - b[j]!);
  }
  if (metric === 'cos') return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
  if (metric === 'ip') return dot;
  return metric === 'l2sq' ? Math.sqrt(l2) : l1;
}

/** Exact top k over `vectors` (id -> vector) restricted to `allow`, best first, ties by id. */
function bruteForce(metric: DenseMetric, vectors: Map<number, Float32Array>, q: Float32Array, k: number, allow: Bitset | null) {
  const sign = higherIsBetter(metric) ? -1 : 1;
  const scored: Array<{ id: number; s: number }> = [];
  for (const [id, v] of vectors) if (allow === null || allow.has(id)) scored.push({ id, s: score(metric, q, v) });
  scored.sort((x, y) => sign * (x.s - y.s) || x.id - y.id);
  return scored.slice(0, k);
}

/** A random filter over [0, n) keeping each id with probability `p` (at least one id). */
function randomFilter(n: number, p: number, rnd: () => number): Bitset {
  const b = new Bitset(n);
  for (let i = 0; i < n; i++) if (rnd() < p) b.set(i);
  if (b.count() === 0) b.set(Math.floor(rnd() * n));
  return b;
}

describe('DenseIndex against brute force', () => {
  const N = 3000;
  const DIM = 48;
  const K = 10;
  const rnd = prng(7);
  const data = clustered(N, DIM, rnd);
  const stored = new Map<number, Float32Array>();
  const index = new DenseIndex({ dimension: DIM, metric: 'cos' });
  // Half one at a time (the shard's path), half in bulk (the rebuild path).
  for (let i = 0; i < N / 2; i++) index.upsert(i, data.subarray(i * DIM, (i + 1) * DIM).slice());
  index.upsertMany(Uint32Array.from({ length: N / 2 }, (_, i) => N / 2 + i), data.slice((N / 2) * DIM));
  for (let i = 0; i < N; i++) stored.set(i, data.subarray(i * DIM, (i + 1) * DIM));
  const queries = Array.from({ length: 30 }, () => {
    const base = Math.floor(rnd() * N);
    return Float32Array.from({ length: DIM }, (_, j) => data[base * DIM + j]! + 0.5 * gauss(rnd));
  });

  const selectivities = [0.001, 0.003, 0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1];
  const paths = new Set<string>();
  for (const sel of [...selectivities, null]) {
    it(`filter selectivity ${sel === null ? 'none' : `${sel * 100}%`}: min(k, allowed) results, exact path identical, graph recall >= 0.95`, () => {
      let recallSum = 0;
      let graphQueries = 0;
      for (const q of queries) {
        const allow = sel === null ? null : randomFilter(N, sel, rnd);
        const allowed = allow === null ? N : allow.count();
        const got = index.search(q, K, allow);
        const want = bruteForce('cos', stored, q, K, allow);
        paths.add(got.path);
        expect(got.ids.length).toBe(Math.min(K, allowed));
        for (let i = 0; i < got.ids.length; i++) {
          const id = got.ids[i]!;
          if (allow !== null) expect(allow.has(id)).toBe(true);
          // Every returned score is the exact score of that id, on either path.
          expect(Math.abs(got.scores[i]! - score('cos', q, stored.get(id)!))).toBeLessThan(1e-6);
          if (i > 0) expect(got.scores[i]!).toBeLessThanOrEqual(got.scores[i - 1]!);
        }
        if (got.path === 'exact') {
          expect(Array.from(got.ids)).toEqual(want.map((w) => w.id));
          want.forEach((w, i) => expect(Math.abs(got.scores[i]! - w.s)).toBeLessThan(1e-6));
        } else {
          graphQueries++;
          const truth = new Set(want.map((w) => w.id));
          let hit = 0;
          for (const id of got.ids) if (truth.has(id)) hit++;
          recallSum += hit / want.length;
        }
      }
      if (process.env.DENSE_TEST_VERBOSE) console.log(`sel ${sel}: graph queries ${graphQueries}/${queries.length}, recall ${graphQueries ? (recallSum / graphQueries).toFixed(3) : "-"}`);
      if (graphQueries > 0) expect(recallSum / graphQueries).toBeGreaterThanOrEqual(0.95);
    });
  }

  it('exercised both the exact and the graph path', () => {
    expect([...paths].sort()).toEqual(['exact', 'graph']);
  });

  it('an adversarial filter (only the ids farthest from the query) still returns min(k, allowed)', () => {
    // No exact thresholds, so the oversample / retry / exact-fallback chain of the graph path runs.
    const forced = new DenseIndex({ dimension: DIM, metric: 'cos', exactMaxCount: 0, exactMaxFraction: 0 });
    forced.upsertMany(Uint32Array.from({ length: N }, (_, i) => i), data);
    for (const q of queries.slice(0, 5)) {
      const far = bruteForce('cos', stored, Float32Array.from(q, (x) => -x), 400, null);
      const allow = Bitset.of(N, far.map((f) => f.id));
      const got = forced.search(q, K, allow);
      const want = bruteForce('cos', stored, q, K, allow);
      expect(got.ids.length).toBe(K);
      expect(Array.from(got.ids)).toEqual(want.map((w) => w.id));
    }
  });

  it('k larger than the allowed set returns every allowed id', () => {
    const allow = Bitset.of(N, [5, 17, 2999]);
    const got = index.search(queries[0]!, 50, allow);
    expect(Array.from(got.ids).sort((a, b) => a - b)).toEqual([5, 17, 2999]);
    expect(index.search(queries[0]!, 10, new Bitset(N)).ids.length).toBe(0);
    expect(index.search(queries[0]!, 0, null).ids.length).toBe(0);
  });

  it('a filter wider than the index capacity and ids without vectors are handled', () => {
    const allow = Bitset.full(N + 5000);
    const got = index.search(queries[1]!, K, allow);
    expect(got.ids.length).toBe(K);
    expect(Math.max(...got.ids)).toBeLessThan(N);
  });
});

describe('DenseIndex updates', () => {
  const unit = (...xs: number[]) => Float32Array.from(xs);

  it('upsert replaces the vector of an id', () => {
    const idx = new DenseIndex({ dimension: 3, metric: 'cos' });
    idx.upsert(1, unit(1, 0, 0));
    idx.upsert(2, unit(0, 1, 0));
    idx.upsert(1, unit(0, 0, 1));
    expect(idx.size).toBe(2);
    expect(idx.graph!.size()).toBe(2);
    const hit = idx.search(unit(0, 0, 1), 2, null);
    expect(Array.from(hit.ids)).toEqual([1, 2]);
    expect(hit.scores[0]).toBeCloseTo(1, 12);
    expect(idx.scoreOf(1, unit(1, 0, 0))).toBeCloseTo(0, 12);
  });

  it('remove hides the id at once; removing twice is a no-op', () => {
    const idx = new DenseIndex({ dimension: 2, metric: 'l2sq' });
    idx.upsert(0, unit(0, 0));
    idx.upsert(9, unit(1, 1));
    expect(idx.remove(0)).toBe(true);
    expect(idx.remove(0)).toBe(false);
    expect(idx.has(0)).toBe(false);
    expect(idx.size).toBe(1);
    expect(Array.from(idx.search(unit(0, 0), 5, null).ids)).toEqual([9]);
  });

  it('an id reused after remove carries only its new vector', () => {
    const idx = new DenseIndex({ dimension: 2, metric: 'ip' });
    idx.upsert(4, unit(1, 0));
    idx.remove(4);
    idx.upsert(4, unit(0, 3));
    const hit = idx.search(unit(0, 1), 1, null);
    expect(Array.from(hit.ids)).toEqual([4]);
    expect(hit.scores[0]).toBeCloseTo(3, 12);
  });

  it('rejects wrong dimensions, non-finite components and non-u32 ids', () => {
    const idx = new DenseIndex({ dimension: 2, metric: 'cos' });
    expect(() => idx.upsert(0, unit(1, 2, 3))).toThrow(RangeError);
    expect(() => idx.upsert(0, unit(1, Number.NaN))).toThrow(RangeError);
    expect(() => idx.upsert(-1, unit(1, 2))).toThrow(RangeError);
    expect(() => idx.search(unit(1), 1, null)).toThrow(RangeError);
    expect(idx.size).toBe(0);
  });

  it('random upsert/remove/reuse sequences match a model (both paths)', () => {
    const DIM = 6;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), id: fc.integer({ min: 0, max: 63 }), v: fc.array(fc.integer({ min: -8, max: 8 }), { minLength: DIM, maxLength: DIM }) }),
      fc.record({ kind: fc.constant('del' as const), id: fc.integer({ min: 0, max: 63 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: -8, max: 8 }), { minLength: DIM, maxLength: DIM }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (ops, qv, k, seed) => {
          const exactIdx = new DenseIndex({ dimension: DIM, metric: 'l2sq', initialCapacity: 8 });
          // expansionSearch 1 and no exact thresholds push small searches onto the graph path.
          const graphIdx = new DenseIndex({ dimension: DIM, metric: 'l2sq', expansionSearch: 1, exactMaxCount: 0, exactMaxFraction: 0 });
          const model = new Map<number, Float32Array>();
          for (const o of ops) {
            if (o.kind === 'put') {
              const v = Float32Array.from(o.v);
              exactIdx.upsert(o.id, v);
              graphIdx.upsert(o.id, v);
              model.set(o.id, v);
            } else {
              expect(exactIdx.remove(o.id)).toBe(model.has(o.id));
              graphIdx.remove(o.id);
              model.delete(o.id);
            }
          }
          expect(exactIdx.size).toBe(model.size);
          expect(graphIdx.size).toBe(model.size);
          const q = Float32Array.from(qv);
          const allow = randomFilter(64, 0.5, prng(seed));
          for (const filter of [null, allow]) {
            const want = bruteForce('l2sq', model, q, k, filter);
            const a = exactIdx.search(q, k, filter);
            expect(a.path).toBe('exact');
            // Integer data ties often; compare scores in rank order, and ids as sets per score.
            expect(Array.from(a.scores)).toEqual(want.map((w) => w.s));
            expect(Array.from(a.ids)).toEqual(want.map((w) => w.id));
            const b = graphIdx.search(q, k, filter);
            expect(b.ids.length).toBe(want.length);
            for (let i = 0; i < b.ids.length; i++) {
              const id = b.ids[i]!;
              expect(model.has(id)).toBe(true);
              if (filter !== null) expect(filter.has(id)).toBe(true);
              expect(b.scores[i]).toBeCloseTo(score('l2sq', q, model.get(id)!), 9);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('metrics and score direction', () => {
  const vs = [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(2, 0)];
  const q = Float32Array.of(1, 0);
  const cases: Array<[DenseMetric, number[], number[]]> = [
    ['cos', [0, 2, 1], [1, 1, 0]],
    ['ip', [2, 0, 1], [2, 1, 0]],
    ['l2sq', [0, 2, 1], [0, 1, Math.SQRT2]],
    ['l1', [0, 2, 1], [0, 1, 2]],
  ];
  for (const [metric, ids, scores] of cases) {
    it(`${metric}: best first with ${higherIsBetter(metric) ? 'descending similarity' : 'ascending distance'}`, () => {
      const idx = new DenseIndex({ dimension: 2, metric });
      vs.forEach((v, i) => idx.upsert(i, v));
      const hit = idx.search(q, 3, null);
      expect(Array.from(hit.ids)).toEqual(ids);
      scores.forEach((s, i) => expect(hit.scores[i]).toBeCloseTo(s, 12));
      expect(idx.graph === null).toBe(metric === 'l1');
    });
  }

  it('maps DISTANCE_METRIC names and rejects unknown ones', () => {
    expect(denseMetricFor('cosine')).toBe('cos');
    expect(denseMetricFor('dot')).toBe('ip');
    expect(denseMetricFor('euclidean')).toBe('l2sq');
    expect(denseMetricFor(distanceMetricOf('euclid'))).toBe('l2sq');
    expect(denseMetricFor('manhattan')).toBe('l1');
    expect(() => distanceMetricOf('hamming')).toThrow(/DISTANCE_METRIC must be cosine, dot, euclidean or manhattan, got 'hamming'/);
    expect(parseDistanceMetric('hamming')).toBeNull();
    expect(parseDistanceMetric(7)).toBeNull();
  });

  it('score_threshold follows the spec: cosine drops below, distances and dot drop above, 0 is off', () => {
    expect(passesScoreThreshold('cos', 0.4, 0.5)).toBe(false);
    expect(passesScoreThreshold('cos', 0.6, 0.5)).toBe(true);
    expect(passesScoreThreshold('l2sq', 0.6, 0.5)).toBe(false);
    expect(passesScoreThreshold('l1', 0.4, 0.5)).toBe(true);
    expect(passesScoreThreshold('ip', 0.6, 0.5)).toBe(false);
    expect(passesScoreThreshold('cos', -1, 0)).toBe(true);
    expect(passesScoreThreshold('l2sq', 99, undefined)).toBe(true);
  });
});
