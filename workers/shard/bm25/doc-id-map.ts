/**
 * Maps external chunk ids to dense u32 internal ids and back, with deferred id reuse.
 *
 * Memory layout: chunk ids are UUIDs in practice (core/domain/ids.ts mints v7 UUIDs), so a
 * canonical lowercase UUID is kept as its 128 bits, four u32 per internal id in one array (16
 * bytes instead of 36 arena bytes and 8 of offsets). Any other id keeps its code units in a byte
 * arena (1 byte each when every unit is below 256, else 2, little-endian), the id's four words
 * then holding its arena offset and length. A kind byte per id tells them apart. The reverse
 * lookup is an open-addressing table of internal ids (linear probing, backward-shift deletion),
 * hashed over the UUID's words or the string's code units. ~30 bytes a UUID at 1M, growth room
 * included, against 59 with every id in the arena (bench/README.md). A chunk id is a string again
 * only when asked for ({@link DocIdMap.chunkIdOf}: a page of hits, snapshots). Released ids'
 * arena bytes are garbage until the arena is rewritten.
 */
import { grownTight } from './grow.js';
import { TYPED_ARRAY_OVERHEAD } from './memory-report.js';

/** `kind` of an id that maps no chunk id (free or tombstoned). */
const NONE = 0;
/** `kind` of an id whose chunk id is a canonical lowercase UUID, kept as 4 words. */
const UUID = 1;
/** `kind` of an id whose chunk id is in the arena (word 0: offset, word 1: units). */
const TEXT = 2;
/** Bit of word 1 of a {@link TEXT} id marking an id stored as 2-byte code units. */
const WIDE = 0x80000000;
/** Length of a canonical UUID: 8-4-4-4-12 hex digits. */
const UUID_CHARS = 36;
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

/** Nibble of a lowercase hex digit's code unit, or -1 (uppercase digits do not round-trip). */
const NIBBLE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < 16; i++) t['0123456789abcdef'.charCodeAt(i)] = i;
  return t;
})();
/** Code unit of each nibble's lowercase hex digit. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * Writes a canonical lowercase UUID's 128 bits into `out` (digit order: word 0 holds the first 8
 * digits, most significant first, so comparing words in order compares the strings); false for
 * any other string.
 */
function parseUuid(s: string, out: Uint32Array): boolean {
  if (s.length !== UUID_CHARS) return false;
  if (s.charCodeAt(8) !== 45 || s.charCodeAt(13) !== 45 || s.charCodeAt(18) !== 45 || s.charCodeAt(23) !== 45) return false;
  let w = 0;
  let digits = 0;
  for (let i = 0; i < UUID_CHARS; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const c = s.charCodeAt(i);
    const v = c < 128 ? NIBBLE[c]! : -1;
    if (v < 0) return false;
    w = (w << 4) | v;
    if (++digits % 8 === 0) out[(digits >>> 3) - 1] = w >>> 0;
  }
  return true;
}

/** Hash of a UUID's four words (they are random or time-ordered: mixed so that nearby ones spread). */
function hashUuid(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15) ^ b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 13) ^ c, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16) ^ d, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
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
  /** Per internal id: {@link NONE}, {@link UUID} or {@link TEXT}. */
  private kind = new Uint8Array(64);
  /** Per internal id, 4 words: a UUID's bits, or a {@link TEXT} id's arena offset and units (| {@link WIDE}). */
  private words = new Uint32Array(4 * 64);
  private arena: Buffer = Buffer.alloc(0);
  private used = 0;
  private garbage = 0;
  /** Open addressing: internal id + 1, or {@link EMPTY}. */
  private slots = new Uint32Array(1024);
  private mask = 1023;
  private mapped = 0;
  private ids = 0;
  private readonly free: number[] = [];
  /** Scratch: the parsed UUID being looked up. */
  private readonly key = new Uint32Array(4);
  /** Scratch: a UUID's 36 code units, decoded as one flat string. */
  private readonly text = Buffer.alloc(UUID_CHARS);

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
    const s = this.find(chunkId);
    return s < 0 ? undefined : this.slots[s]! - 1;
  }

  /** Slot of a mapped chunk id, or -1 - the empty slot where it would go. */
  private find(chunkId: string): number {
    const { slots, mask, key } = this;
    if (parseUuid(chunkId, key)) {
      const { kind, words } = this;
      const a = key[0]!;
      const b = key[1]!;
      const c = key[2]!;
      const d = key[3]!;
      for (let s = hashUuid(a, b, c, d) & mask; ; s = (s + 1) & mask) {
        const v = slots[s]!;
        if (v === EMPTY) return -1 - s;
        const id = v - 1;
        const o = 4 * id;
        if (kind[id] === UUID && words[o] === a && words[o + 1] === b && words[o + 2] === c && words[o + 3] === d) return s;
      }
    }
    for (let s = hashString(chunkId) & mask; ; s = (s + 1) & mask) {
      const v = slots[s]!;
      if (v === EMPTY) return -1 - s;
      if (this.holds(v - 1, chunkId)) return s;
    }
  }

  /** Whether internal id `id` is a {@link TEXT} id mapping exactly `chunkId`. */
  private holds(id: number, chunkId: string): boolean {
    if (this.kind[id] !== TEXT) return false;
    const u = this.words[4 * id + 1]!;
    const n = u & ~WIDE;
    if (n !== chunkId.length) return false;
    const a = this.arena;
    const o = this.words[4 * id]!;
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
    const k = this.kind[id];
    if (k === UUID) return this.uuidString(id);
    if (k !== TEXT) return undefined;
    const o = this.words[4 * id]!;
    const u = this.words[4 * id + 1]!;
    return (u & WIDE) === 0 ? this.arena.toString('latin1', o, o + u) : this.arena.toString('utf16le', o, o + 2 * (u & ~WIDE));
  }

  /** A {@link UUID} id's chunk id: its digits written to scratch, then one flat string. */
  private uuidString(id: number): string {
    const t = this.text;
    const words = this.words;
    let p = 0;
    for (let k = 0; k < 4; k++) {
      const w = words[4 * id + k]!;
      for (let sh = 28; sh >= 0; sh -= 4) {
        if (p === 8 || p === 13 || p === 18 || p === 23) t[p++] = 45;
        t[p++] = HEX[(w >>> sh) & 15]!;
      }
    }
    return t.toString('latin1', 0, UUID_CHARS);
  }

  /**
   * Order of two live ids' chunk ids as JS compares strings (by UTF-16 code units): negative,
   * 0 or positive. Reads the words or the arena in place: top-k heaps break score ties with it.
   */
  compare(x: number, y: number): number {
    const kx = this.kind[x];
    const ky = this.kind[y];
    if (kx === UUID && ky === UUID) {
      // Canonical UUIDs have their hyphens at the same places and digits order as their values.
      const w = this.words;
      let ox = 4 * x;
      let oy = 4 * y;
      for (let k = 0; k < 4; k++, ox++, oy++) if (w[ox] !== w[oy]) return w[ox]! < w[oy]! ? -1 : 1;
      return 0;
    }
    if (kx === TEXT && ky === TEXT) return this.compareText(x, y);
    // A UUID against another string: rare (a dataset mixing id shapes), so through strings.
    const a = this.chunkIdOf(x)!;
    const b = this.chunkIdOf(y)!;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** {@link compare} of two {@link TEXT} ids, in the arena. */
  private compareText(x: number, y: number): number {
    const a = this.arena;
    const ux = this.words[4 * x + 1]!;
    const uy = this.words[4 * y + 1]!;
    const ox = this.words[4 * x]!;
    const oy = this.words[4 * y]!;
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
    const s = this.find(chunkId);
    if (s >= 0) throw new Error(`chunk id already mapped: ${chunkId}`);
    const id = this.free.length > 0 ? this.free.pop()! : this.ids;
    if (id > 0xfffffffe) throw new RangeError('shard holds more than 2^32 - 1 internal ids');
    if (id === this.ids) {
      this.ids++;
      if (id >= this.kind.length) {
        this.kind = grownTight(this.kind, id + 1);
        const words = new Uint32Array(4 * this.kind.length);
        words.set(this.words);
        this.words = words;
      }
    }
    this.store(id, chunkId);
    this.slots[-1 - s] = id + 1;
    this.mapped++;
    return id;
  }

  /** Keeps `chunkId` as internal id `id`'s: its bits when a UUID, else its code units at the arena's end. */
  private store(id: number, chunkId: string): void {
    const o = 4 * id;
    if (parseUuid(chunkId, this.key)) {
      this.words.set(this.key, o);
      this.kind[id] = UUID;
      return;
    }
    const n = chunkId.length;
    const wide = isWide(chunkId);
    const bytes = wide ? 2 * n : n;
    if (this.used + bytes > this.arena.length) this.reserve(bytes);
    this.kind[id] = TEXT;
    this.words[o] = this.used;
    this.words[o + 1] = wide ? (n | WIDE) >>> 0 : n;
    this.used += this.arena.write(chunkId, this.used, wide ? 'utf16le' : 'latin1');
  }

  /** Makes arena room for `bytes` more: rewritten without garbage when that is most of it, else grown. */
  private reserve(bytes: number): void {
    const live = this.used - this.garbage;
    const n = this.arena.length;
    // Rewritten in place (same size) while live ids fill at most half of it, else grown as the postings arena is.
    this.rewrite(live + bytes <= n / 2 ? n : Math.max(live + bytes, n < 1024 ? 1024 : n < 1 << 16 ? 2 * n : n + (n >>> 2)));
  }

  /** Copies the live ids' code units into a new arena of `size` bytes, without garbage. */
  private rewrite(size: number): void {
    const next = Buffer.alloc(size);
    let w = 0;
    for (let id = 0; id < this.ids; id++) {
      if (this.kind[id] !== TEXT) continue;
      const o = this.words[4 * id]!;
      const u = this.words[4 * id + 1]!;
      const len = (u & WIDE) === 0 ? u : 2 * (u & ~WIDE);
      this.arena.copy(next, w, o, o + len);
      this.words[4 * id] = w;
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
    for (let id = 0; id < this.ids; id++) if (this.kind[id] !== NONE) this.insert(id, this.hashStored(id));
  }

  /** Hash of a mapped id's chunk id ({@link hashUuid} or {@link hashString}), read from where it is kept. */
  private hashStored(id: number): number {
    const w = this.words;
    const o = 4 * id;
    if (this.kind[id] === UUID) return hashUuid(w[o]!, w[o + 1]!, w[o + 2]!, w[o + 3]!);
    const a = this.arena;
    const start = w[o]!;
    const u = w[o + 1]!;
    const n = u & ~WIDE;
    let h = 0x811c9dc5;
    if ((u & WIDE) === 0) for (let i = 0; i < n; i++) h = Math.imul(h ^ a[start + i]!, 0x01000193);
    else for (let i = 0; i < n; i++) h = Math.imul(h ^ (a[start + 2 * i]! | (a[start + 2 * i + 1]! << 8)), 0x01000193);
    return h >>> 0;
  }

  /** Unmaps a chunk id and returns its internal id (tombstoned until recycled), or undefined. */
  release(chunkId: string): number | undefined {
    const s = this.find(chunkId);
    if (s < 0) return undefined;
    const { slots, mask } = this;
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
    if (this.kind[id] === TEXT) {
      const u = this.words[4 * id + 1]!;
      this.garbage += (u & WIDE) === 0 ? u : 2 * (u & ~WIDE);
    }
    this.kind[id] = NONE;
    this.mapped--;
    return id;
  }

  /** Bytes of the arena (garbage and unused end included), the per-id tables, the hash table and the free list. */
  memoryBytes(): number {
    return this.arena.length + this.kind.byteLength + this.words.byteLength + this.slots.byteLength + 4 * TYPED_ARRAY_OVERHEAD + 8 * this.free.length;
  }

  /** Cuts the per-id tables to the ids handed out and rewrites the arena without garbage (as {@link restore} lays them out). */
  compactStorage(): void {
    const n = Math.max(64, this.ids);
    if (this.kind.length > n) {
      this.kind = this.kind.slice(0, n);
      this.words = this.words.slice(0, 4 * n);
    }
    const live = this.used - this.garbage;
    if (this.arena.length > live) this.rewrite(live);
  }

  /** Makes tombstoned ids allocatable again; only call when no structure refers to them. */
  recycle(ids: Iterable<number>): void {
    for (const id of ids) {
      if (this.kind[id] !== NONE) throw new Error(`cannot recycle live id ${id}`);
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
    map.kind = new Uint8Array(Math.max(64, n));
    map.words = new Uint32Array(4 * map.kind.length);
    map.ids = n;
    let slots = 1024;
    let live = 0;
    let bytes = 0;
    for (const c of chunkIds) {
      if (c === undefined) continue;
      live++;
      if (!parseUuid(c, map.key)) bytes += isWide(c) ? 2 * c.length : c.length;
    }
    while (live > slots * MAX_LOAD) slots *= 2;
    map.slots = new Uint32Array(slots);
    map.mask = slots - 1;
    map.arena = Buffer.alloc(bytes);
    for (let id = 0; id < n; id++) {
      const c = chunkIds[id];
      if (c === undefined) continue;
      map.store(id, c);
      map.insert(id, map.hashStored(id));
    }
    map.mapped = live;
    for (let i = 0; i < free.length; i++) map.free.push(free[i]!);
    map.free.sort((a, b) => b - a);
    return map;
  }
}
