/** Bounded min-heap of the best k (id, key) pairs for exact dense scans; buffers are reused. */

/**
 * Keeps the k entries with the highest key; equal keys rank the smaller id first so results are
 * deterministic. The root is the current worst entry, so rejecting a candidate is one comparison,
 * which matters because an exact scan offers every allowed vector.
 */
export class DenseTopK {
  private ids: Uint32Array;
  private keys: Float64Array;
  private k = 0;
  private n = 0;

  /** A heap with room for `initialCapacity` entries; it grows on a larger {@link reset}. */
  constructor(initialCapacity = 16) {
    this.ids = new Uint32Array(initialCapacity);
    this.keys = new Float64Array(initialCapacity);
  }

  /** Empties the heap and sets how many entries to keep. */
  reset(k: number): void {
    if (k > this.ids.length) {
      this.ids = new Uint32Array(k);
      this.keys = new Float64Array(k);
    }
    this.k = k;
    this.n = 0;
  }

  /** Entries held. */
  get length(): number {
    return this.n;
  }

  /** Key of the worst kept entry once k are held, else -Infinity (anything is admitted). */
  get floor(): number {
    return this.n >= this.k && this.k > 0 ? this.keys[0]! : -Infinity;
  }

  /** Offers a candidate. */
  push(id: number, key: number): void {
    const ids = this.ids;
    const keys = this.keys;
    if (this.n < this.k) {
      let i = this.n++;
      // Sift up while the new entry is worse than its parent (min-heap on "goodness").
      while (i > 0) {
        const p = (i - 1) >> 1;
        const pk = keys[p]!;
        if (!(key < pk || (key === pk && id > ids[p]!))) break;
        ids[i] = ids[p]!;
        keys[i] = pk;
        i = p;
      }
      ids[i] = id;
      keys[i] = key;
      return;
    }
    if (this.k === 0) return;
    const rk = keys[0]!;
    if (key < rk || (key === rk && id > ids[0]!)) return;
    // Replace the root and sift down: the child that is worse moves up.
    const n = this.n;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let c = l;
      const r = l + 1;
      if (r < n && (keys[r]! < keys[l]! || (keys[r] === keys[l] && ids[r]! > ids[l]!))) c = r;
      const ck = keys[c]!;
      if (!(ck < key || (ck === key && ids[c]! > id))) break;
      ids[i] = ids[c]!;
      keys[i] = ck;
      i = c;
    }
    ids[i] = id;
    keys[i] = key;
  }

  /** Drains best first into `outIds`/`outKeys` (length >= {@link length}); returns the count. */
  drainInto(outIds: Uint32Array, outKeys: Float64Array): number {
    const count = this.n;
    // Popping the root yields the worst remaining entry, so fill from the back.
    for (let pos = count - 1; pos >= 0; pos--) {
      outIds[pos] = this.ids[0]!;
      outKeys[pos] = this.keys[0]!;
      const lastId = this.ids[--this.n]!;
      const lastKey = this.keys[this.n]!;
      if (this.n === 0) break;
      const n = this.n;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        let c = l;
        const r = l + 1;
        if (r < n && (this.keys[r]! < this.keys[l]! || (this.keys[r] === this.keys[l] && this.ids[r]! > this.ids[l]!))) c = r;
        const ck = this.keys[c]!;
        if (!(ck < lastKey || (ck === lastKey && this.ids[c]! > lastId))) break;
        this.ids[i] = this.ids[c]!;
        this.keys[i] = ck;
        i = c;
      }
      this.ids[i] = lastId;
      this.keys[i] = lastKey;
    }
    this.n = 0;
    return count;
  }
}
