/** Fixed-capacity bitset over dense internal doc ids; the currency of filters inside a shard. */

/** A set of u32 ids in `[0, capacity)`, stored as 32-bit words. Ids at or past capacity are never members. */
export class Bitset {
  /** Number of ids this set can hold (ids are `0 .. capacity - 1`). */
  readonly capacity: number;
  /** Backing words; bit `i & 31` of word `i >>> 5` is id `i`. Bits past capacity are always zero. */
  readonly words: Uint32Array;

  /** An empty set able to hold ids below `capacity`. */
  constructor(capacity: number, words?: Uint32Array) {
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > 0xffffffff) {
      throw new RangeError(`bitset capacity must be an integer in [0, 2^32), got ${capacity}`);
    }
    this.capacity = capacity;
    const n = (capacity + 31) >>> 5;
    if (words !== undefined && words.length !== n) {
      throw new RangeError(`bitset of capacity ${capacity} needs ${n} words, got ${words.length}`);
    }
    this.words = words ?? new Uint32Array(n);
  }

  /** A set holding every id in `[0, capacity)`. */
  static full(capacity: number): Bitset {
    const b = new Bitset(capacity);
    b.words.fill(0xffffffff);
    b.clearTail();
    return b;
  }

  /** A set holding exactly the given ids. */
  static of(capacity: number, ids: Iterable<number>): Bitset {
    const b = new Bitset(capacity);
    for (const id of ids) b.set(id);
    return b;
  }

  /** Adds `id`; throws if it is outside the capacity, since that is always a caller bug. */
  set(id: number): void {
    if (id < 0 || id >= this.capacity) throw new RangeError(`id ${id} outside bitset capacity ${this.capacity}`);
    this.words[id >>> 5]! |= 1 << (id & 31);
  }

  /** Removes `id` (no-op when outside the capacity). */
  unset(id: number): void {
    if (id < 0 || id >= this.capacity) return;
    this.words[id >>> 5]! &= ~(1 << (id & 31));
  }

  /** Whether `id` is a member; false for ids outside the capacity. */
  has(id: number): boolean {
    if (id >= this.capacity || id < 0) return false;
    return (this.words[id >>> 5]! & (1 << (id & 31))) !== 0;
  }

  /** In place: keep only ids also in `other` (ids past `other`'s capacity are dropped). */
  and(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    for (let i = 0; i < w.length; i++) w[i] = i < o.length ? w[i]! & o[i]! : 0;
    return this;
  }

  /** In place: add every id of `other` that fits in this capacity. */
  or(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    const n = Math.min(w.length, o.length);
    for (let i = 0; i < n; i++) w[i] = w[i]! | o[i]!;
    this.clearTail();
    return this;
  }

  /** In place: remove every id of `other` (and-not). */
  andNot(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    const n = Math.min(w.length, o.length);
    for (let i = 0; i < n; i++) w[i] = w[i]! & ~o[i]!;
    return this;
  }

  /** In place: complement within `[0, capacity)`. */
  not(): this {
    const w = this.words;
    for (let i = 0; i < w.length; i++) w[i] = ~w[i]!;
    this.clearTail();
    return this;
  }

  /** Number of members (popcount). */
  count(): number {
    let total = 0;
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let v = w[i]!;
      v = v - ((v >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      total += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return total;
  }

  /** Members in ascending order. */
  *[Symbol.iterator](): IterableIterator<number> {
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let v = w[i]!;
      while (v !== 0) {
        // Isolate the lowest set bit; clz32 gives its index without a per-bit loop.
        const low = v & -v;
        yield i * 32 + (31 - Math.clz32(low));
        v ^= low;
      }
    }
  }

  /** Calls `fn` for each member in ascending order (no iterator allocation on hot paths). */
  forEach(fn: (id: number) => void): void {
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let v = w[i]!;
      while (v !== 0) {
        const low = v & -v;
        fn(i * 32 + (31 - Math.clz32(low)));
        v ^= low;
      }
    }
  }

  /** An independent copy. */
  clone(): Bitset {
    return new Bitset(this.capacity, this.words.slice());
  }

  /** Keeps the invariant that bits past capacity are zero, so count and iteration stay exact. */
  private clearTail(): void {
    const rem = this.capacity & 31;
    if (rem !== 0) this.words[this.words.length - 1]! &= (1 << rem) - 1 >>> 0;
  }
}
