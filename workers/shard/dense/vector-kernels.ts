/**
 * Exact vector kernels over a Float32Array slab. The query is a Float64Array and sums are kept in
 * doubles, so exact scores match an f64 brute force to ~1e-12 whatever the dimension. Four partial
 * sums break the add dependency chain, which is what lets V8 keep several multiply-adds in flight.
 */

/** Dot product of `q` with the vector at `base` in `slab`. */
export function dotAt(q: Float64Array, slab: Float32Array, base: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < dim; j += 4) {
    const b = base + j;
    s0 += q[j]! * slab[b]!;
    s1 += q[j + 1]! * slab[b + 1]!;
    s2 += q[j + 2]! * slab[b + 2]!;
    s3 += q[j + 3]! * slab[b + 3]!;
  }
  for (; j < dim; j++) s0 += q[j]! * slab[base + j]!;
  return s0 + s1 + s2 + s3;
}

/** Squared Euclidean distance between `q` and the vector at `base`. */
export function l2sqAt(q: Float64Array, slab: Float32Array, base: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < dim; j += 4) {
    const b = base + j;
    const d0 = q[j]! - slab[b]!;
    const d1 = q[j + 1]! - slab[b + 1]!;
    const d2 = q[j + 2]! - slab[b + 2]!;
    const d3 = q[j + 3]! - slab[b + 3]!;
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; j < dim; j++) {
    const d = q[j]! - slab[base + j]!;
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/** Manhattan (L1) distance between `q` and the vector at `base`. */
export function l1At(q: Float64Array, slab: Float32Array, base: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let j = 0;
  for (; j + 1 < dim; j += 2) {
    s0 += Math.abs(q[j]! - slab[base + j]!);
    s1 += Math.abs(q[j + 1]! - slab[base + j + 1]!);
  }
  if (j < dim) s0 += Math.abs(q[j]! - slab[base + j]!);
  return s0 + s1;
}

/** Euclidean norm of a plain vector, in doubles. */
export function normOf(v: Float32Array | Float64Array, from = 0, dim = v.length): number {
  let s = 0;
  for (let j = 0; j < dim; j++) {
    const x = v[from + j]!;
    s += x * x;
  }
  return Math.sqrt(s);
}
