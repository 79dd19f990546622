/**
 * Maps external chunk ids to dense u32 internal ids and back, with deferred id reuse.
 *
 * Memory layout: a `Map<string, number>` beside an array of strings cost ~93 bytes a chunk at 1M
 * UUIDs (a 56-byte string, 28 bytes of Map slot, 8 of array slot). Here the ids' code units live
 * in one byte arena (1 byte each when every unit is below 256, as UUIDs are; else 2, little-endian),
 * located by two u32 per internal id, and the reverse lookup is an open-addressing table of
 * internal ids (linear probing, backward-shift deletion) hashed over the code units: 59 bytes a
 * UUID at 1M, growth room included (bench/README.md). A chunk id is a string again only when asked for ({@link DocIdMap.chunkIdOf}: a page of
 * hits, snapshots). Released ids' bytes are garbage until the arena is rewritten.
 */
import { grown } from './grow.js';
import { TYPED_ARRAY_OVERHEAD } from './memory-report.js';

/** `start` of an id that maps no chunk id (free or tombstoned). */
const NONE = 0xffffffff;
/** Bit of `units` marking an id stored as 2-byte code units. */
const WIDE = 0x80000000;
/** Hash slot holding no id (slots hold id + 1). */
const EMPTY = 0;
/** The table doubles past this load (linear probing stays short below ~3/4). */
const MAX_LOAD = 0.7;

/** FNV-1a over a string's UTF-16 code units (the same hash as {@link DocIdMap.hashStored}). */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Whether a string has a code unit above 255 (then it is stored 2 bytes a unit). */
function isWide(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return true;
  return false;
}

/**
 * Chunk id <-> internal id. A released id is not reusable at once: postings may still hold it
 * (tombstone). The owner calls {@link DocIdMap.recycle} once nothing refers to it any more, and
 * only then does {@link DocIdMap.allocate} hand it out again.
 */
export class DocIdMap {
  /** Per internal id: byte offset of its code units in {@link arena}, or {@link NONE}. */
  private start = new Uint32Array(64);
  /** Per internal id: its number of code units, | {@link WIDE} when stored 2 bytes each. */
  private units = new Uint32Array(64);
  private arena: Buffer = Buffer.alloc(1024);
  private used = 0;
  private garbage = 0;
  /** Open addressing: internal id + 1, or {@link EMPTY}. */
  private slots = new Uint32Array(1024);
  private mask = 1023;
  private mapped = 0;
  private ids = 0;
  private readonly free: number[] = [];

  /** Number of internal ids ever handed out; every id is below this (size bitsets with it). */
  get capacity(): number {
    return this.ids;
  }

  /** Number of chunk ids currently mapped. */
  get size(): number {
    return this.mapped;
  }

  /** Internal id of a mapped chunk id, or undefined. */
  idOf(chunkId: string): number | undefined {
    const { slots, mask } = this;
    for (let s = hashString(chunkId) & mask; ; s = (s + 1) & mask) {
      const v = slots[s]!;
      if (v === EMPTY) return undefined;
      if (this.holds(v - 1, chunkId)) return v - 1;
    }
  }

  /** Whether internal id `id` maps exactly `chunkId`. */
  private holds(id: number, chunkId: string): boolean {
    const u = this.units[id]!;
    const n = u & ~WIDE;
    if (n !== chunkId.length) return false;
    const a = this.arena;
    const o = this.start[id]!;
    if ((u & WIDE) === 0) {
      for (let i = 0; i < n; i++) if (a[o + i] !== chunkId.charCodeAt(i)) return false;
    } else {
      for (let i = 0; i < n; i++) if ((a[o + 2 * i]! | (a[o + 2 * i + 1]! << 8)) !== chunkId.charCodeAt(i)) return false;
    }
    return true;
  }

  /** Chunk id of a live internal id, or undefined for free or tombstoned ids. */
  chunkIdOf(id: number): string | undefined {
    if (id >= this.ids) return undefined;
    const o = this.start[id]!;
    if (o === NONE) return undefined;
    const u = this.units[id]!;
    return (u & WIDE) === 0 ? this.arena.toString('latin1', o, o + u) : this.arena.toString('utf16le', o, o + 2 * (u & ~WIDE));
  }

  /**
   * Order of two live ids' chunk ids as JS compares strings (by UTF-16 code units): negative,
   * 0 or positive. Reads the arena in place: top-k heaps break score ties with it.
   */
  compare(x: number, y: number): number {
    const a = this.arena;
    const ux = this.units[x]!;
    const uy = this.units[y]!;
    const ox = this.start[x]!;
    const oy = this.start[y]!;
    const nx = ux & ~WIDE;
    const ny = uy & ~WIDE;
    const wx = (ux & WIDE) !== 0;
    const wy = (uy & WIDE) !== 0;
    const n = nx < ny ? nx : ny;
    for (let i = 0; i < n; i++) {
      const cx = wx ? a[ox + 2 * i]! | (a[ox + 2 * i + 1]! << 8) : a[ox + i]!;
      const cy = wy ? a[oy + 2 * i]! | (a[oy + 2 * i + 1]! << 8) : a[oy + i]!;
      if (cx !== cy) return cx - cy;
    }
    return nx - ny;
  }

  /** Maps a new chunk id; throws if it is already mapped (callers release first). */
  allocate(chunkId: string): number {
    if (this.mapped + 1 > (this.mask + 1) * MAX_LOAD) this.rehash((this.mask + 1) * 2);
    // One probe both checks that the id is new and finds its slot.
    const { slots, mask } = this;
    let s = hashString(chunkId) & mask;
    for (; slots[s] !== EMPTY; s = (s + 1) & mask) {
      if (this.holds(slots[s]! - 1, chunkId)) throw new Error(`chunk id already mapped: ${chunkId}`);
    }
    const id = this.free.length > 0 ? this.free.pop()! : this.ids;
    if (id > 0xfffffffe) throw new RangeError('shard holds more than 2^32 - 1 internal ids');
    if (id === this.ids) {
      this.ids++;
      if (id >= this.start.length) {
        const old = this.start.length;
        this.start = grown(this.start, id + 1);
        this.units = grown(this.units, id + 1);
        this.start.fill(NONE, old);
      }
    }
    this.store(id, chunkId);
    slots[s] = id + 1;
    this.mapped++;
    return id;
  }

  /** Writes `chunkId`'s code units at the arena's end as internal id `id`'s. */
  private store(id: number, chunkId: string): void {
    const n = chunkId.length;
    const wide = isWide(chunkId);
    const bytes = wide ? 2 * n : n;
    if (this.used + bytes > this.arena.length) this.reserve(bytes);
    this.start[id] = this.used;
    this.units[id] = wide ? (n | WIDE) >>> 0 : n;
    this.used += this.arena.write(chunkId, this.used, wide ? 'utf16le' : 'latin1');
  }

  /** Makes arena room for `bytes` more: rewritten without garbage when that is most of it, else grown. */
  private reserve(bytes: number): void {
    const live = this.used - this.garbage;
    const n = this.arena.length;
    // Rewritten in place (same size) while live ids fill at most half of it, else grown as the postings arena is.
    const size = live + bytes <= n / 2 ? n : Math.max(live + bytes, n < 1 << 16 ? 2 * n : n + (n >>> 2));
    const next = Buffer.alloc(size);
    let w = 0;
    for (let id = 0; id < this.ids; id++) {
      const o = this.start[id]!;
      if (o === NONE) continue;
      const u = this.units[id]!;
      const len = (u & WIDE) === 0 ? u : 2 * (u & ~WIDE);
      this.arena.copy(next, w, o, o + len);
      this.start[id] = w;
      w += len;
    }
    this.arena = next;
    this.used = w;
    this.garbage = 0;
  }

  /** Puts id in the first empty slot of its probe sequence. */
  private insert(id: number, hash: number): void {
    const { slots, mask } = this;
    let s = hash & mask;
    while (slots[s] !== EMPTY) s = (s + 1) & mask;
    slots[s] = id + 1;
  }

  /** A table of `size` slots holding every mapped id. */
  private rehash(size: number): void {
    this.slots = new Uint32Array(size);
    this.mask = size - 1;
    for (let id = 0; id < this.ids; id++) if (this.start[id] !== NONE) this.insert(id, this.hashStored(id));
  }

  /** {@link hashString} of a mapped id's chunk id, read from the arena. */
  private hashStored(id: number): number {
    const a = this.arena;
    const o = this.start[id]!;
    const u = this.units[id]!;
    const n = u & ~WIDE;
    let h = 0x811c9dc5;
    if ((u & WIDE) === 0) for (let i = 0; i < n; i++) h = Math.imul(h ^ a[o + i]!, 0x01000193);
    else for (let i = 0; i < n; i++) h = Math.imul(h ^ (a[o + 2 * i]! | (a[o + 2 * i + 1]! << 8)), 0x01000193);
    return h >>> 0;
  }

  /** Unmaps a chunk id and returns its internal id (tombstoned until recycled), or undefined. */
  release(chunkId: string): number | undefined {
    const { slots, mask } = this;
    let s = hashString(chunkId) & mask;
    for (; ; s = (s + 1) & mask) {
      const v = slots[s]!;
      if (v === EMPTY) return undefined;
      if (this.holds(v - 1, chunkId)) break;
    }
    const id = slots[s]! - 1;
    // Backward-shift deletion: later entries of the probe run move up so that no lookup stops early.
    for (let hole = s, j = (s + 1) & mask; ; j = (j + 1) & mask) {
      const v = slots[j]!;
      if (v === EMPTY) {
        slots[hole] = EMPTY;
        break;
      }
      const home = this.hashStored(v - 1) & mask;
      // v may fill the hole only if its home is not cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        slots[hole] = v;
        hole = j;
      }
    }
    const u = this.units[id]!;
    this.garbage += (u & WIDE) === 0 ? u : 2 * (u & ~WIDE);
    this.start[id] = NONE;
    this.mapped--;
    return id;
  }

  /** Bytes of the arena (garbage and unused end included), the per-id tables, the hash table and the free list. */
  memoryBytes(): number {
    return this.arena.length + this.start.byteLength + this.units.byteLength + this.slots.byteLength + 3 * TYPED_ARRAY_OVERHEAD + 8 * this.free.length;
  }

  /** Makes tombstoned ids allocatable again; only call when no structure refers to them. */
  recycle(ids: Iterable<number>): void {
    for (const id of ids) {
      if (this.start[id] !== NONE) throw new Error(`cannot recycle live id ${id}`);
      this.free.push(id);
    }
    // Hand out low ids first so that the id space (and bitsets over it) stays dense.
    this.free.sort((a, b) => b - a);
  }

  /** Ids ready for reuse (for snapshots). */
  freeIds(): Uint32Array {
    return Uint32Array.from(this.free);
  }

  /** Rebuilds a map from a snapshot: `chunkIds[id]` (undefined = free) and the free list. */
  static restore(chunkIds: readonly (string | undefined)[], free: ArrayLike<number>): DocIdMap {
    const map = new DocIdMap();
    const n = chunkIds.length;
    map.start = new Uint32Array(Math.max(64, n)).fill(NONE);
    map.units = new Uint32Array(Math.max(64, n));
    map.ids = n;
    let slots = 1024;
    let live = 0;
    let bytes = 0;
    for (const c of chunkIds) {
      if (c === undefined) continue;
      live++;
      bytes += isWide(c) ? 2 * c.length : c.length;
    }
    while (live > slots * MAX_LOAD) slots *= 2;
    map.slots = new Uint32Array(slots);
    map.mask = slots - 1;
    map.arena = Buffer.alloc(Math.max(1024, bytes));
    for (let id = 0; id < n; id++) {
      const c = chunkIds[id];
      if (c === undefined) continue;
      map.store(id, c);
      map.insert(id, hashString(c));
    }
    map.mapped = live;
    for (let i = 0; i < free.length; i++) map.free.push(free[i]!);
    map.free.sort((a, b) => b - a);
    return map;
  }
}
