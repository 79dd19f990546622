/** A sparse vector (SPLADE): ascending unique indexes with their weights. */
export interface SparseVector {
  readonly indices: Uint32Array;
  readonly values: Float32Array;
}

/** Dot product of two sparse vectors (both with ascending indexes). */
export function sparseDot(a: SparseVector, b: SparseVector): number {
  let i = 0;
  let j = 0;
  let sum = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const x = a.indices[i]!;
    const y = b.indices[j]!;
    if (x === y) sum += a.values[i++]! * b.values[j++]!;
    else if (x < y) i++;
    else j++;
  }
  return sum;
}
