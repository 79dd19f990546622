/**
 * A multi-valued string field of a shard's documents (tags, group ids, links, tracking ids) as an
 * inverted index: each distinct value (a key) has the set of internal ids holding it, and each
 * document the list of its keys (to remove them when it changes).
 *
 * Laid out for memory, since a shard holds it for every chunk: at 1M chunks of 1-3 of 20 tags, the
 * field store with per-document string arrays and a JS `Set<number>` per tag took 244 MiB, with
 * this 9. A key's members are one id (a small integer, no allocation), a sorted `number[]`, or,
 * once they would take more bytes as a list than as one bit per id below the largest, a bitset's
 * words (which a filter ORs as they are). A document's keys are an entry of a `Uint32Array`
 * table: none, up to three small key ids packed in it, or an offset into an arena of key lists,
 * compacted as replaced lists accumulate.
 */
import type { Bitset } from '../bm25/bitset.js';
import { grown } from '../bm25/grow.js';

/** A key's members as a bitset: one bit per id, `size` of them set. */
interface MemberBits {
  words: Uint32Array;
  size: number;
}

/** One id, several in ascending order, or a bitset. */
type Members = number | number[] | MemberBits;

/** Lists at least this long may become bitsets (smaller ones are cheaper as lists whatever their ids). */
const BITS_MIN_SIZE = 64;

/** Arena words no longer referenced, past which (and past half the arena) the arena is compacted. */
const COMPACT_MIN_GARBAGE = 4096;

/**
 * A doc-table entry: no keys. The low two bits of any other entry say what the rest holds: 1, 2
 * or 3 key ids packed (one of up to 30 bits, two of 15, three of 10), or 0 an arena offset + 1.
 */
const NONE = 0;

/** The entry holding `keys` packed, or {@link NONE} when they do not fit (there are more, or larger ids). */
function pack(keys: readonly number[]): number {
  const n = keys.length;
  if (n === 1 && keys[0]! < 1 << 30) return ((keys[0]! << 2) | 1) >>> 0;
  if (n === 2 && keys[0]! < 1 << 15 && keys[1]! < 1 << 15) return ((keys[1]! << 17) | (keys[0]! << 2) | 2) >>> 0;
  if (n === 3 && keys[0]! < 1 << 10 && keys[1]! < 1 << 10 && keys[2]! < 1 << 10) return ((keys[2]! << 22) | (keys[1]! << 12) | (keys[0]! << 2) | 3) >>> 0;
  return NONE;
}

/** The first key id of a packed entry (low bits 1-3). */
function firstPacked(entry: number): number {
  const n = entry & 3;
  return n === 1 ? entry >>> 2 : n === 2 ? (entry >>> 2) & 0x7fff : (entry >>> 2) & 0x3ff;
}

/** Whether a list of `size` ids whose largest is `max` takes more bytes (8 per element) than a bitset over `[0, max]` (4 per 32 ids). */
const bitsPay = (size: number, max: number): boolean => size >= BITS_MIN_SIZE && size * 8 > ((max >>> 5) + 1) * 4;

/** Index of `id` in the ascending `list`, or the bitwise complement of where it would go. */
function search(list: readonly number[], id: number): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list[mid]!;
    if (v < id) lo = mid + 1;
    else if (v > id) hi = mid - 1;
    else return mid;
  }
  return ~lo;
}

/** The bitset of an ascending list. */
function toBits(list: readonly number[]): MemberBits {
  const words = new Uint32Array((list[list.length - 1]! >>> 5) + 1);
  for (const id of list) words[id >>> 5]! |= 1 << (id & 31);
  return { words, size: list.length };
}

/** Calls `fn` with the id of every set bit of `words`, ascending. */
function forEachBit(words: Uint32Array, fn: (id: number) => void): void {
  for (let i = 0; i < words.length; i++) {
    let word = words[i]!;
    while (word !== 0) {
      const low = word & -word;
      fn((i << 5) + 31 - Math.clz32(low));
      word ^= low;
    }
  }
}

/** The ascending list of a bitset's members. */
function toList(bits: MemberBits): number[] {
  const list: number[] = [];
  forEachBit(bits.words, (id) => list.push(id));
  return list;
}

/** The inverted index of one multi-valued string field (see the module comment). */
export class KeyedPostings {
  /** Key id of each distinct value held by a live document. */
  private readonly keyIds = new Map<string, number>();
  /** Value of each key id (undefined: a free id). */
  private readonly names: (string | undefined)[] = [];
  /** Members of each key id. */
  private readonly members: (Members | undefined)[] = [];
  /** Key ids free for reuse (their values left every document). */
  private readonly freeKeys: number[] = [];
  /** Per internal id: {@link NONE}, its key ids packed, or where its key list starts in {@link arena} (see {@link pack}). */
  private docs = new Uint32Array(0);
  /** Key lists of documents with more than one key: a count, then the key ids. */
  private arena = new Uint32Array(0);
  private arenaEnd = 0;
  /** Arena words of lists no document points at any more. */
  private garbage = 0;

  /** Number of distinct keys held. */
  get keyCount(): number {
    return this.keyIds.size;
  }

  /** Gives document `id` the keys `keys` (in order, repeats kept as given); it must hold none (see {@link clear}). */
  set(id: number, keys: readonly string[]): void {
    if (keys.length === 0) return;
    if (id >= this.docs.length) this.docs = grown(this.docs, id + 1);
    const ks = keys.map((key) => {
      const k = this.keyOf(key);
      this.add(k, id);
      return k;
    });
    const packed = pack(ks);
    if (packed !== NONE) {
      this.docs[id] = packed;
      return;
    }
    if (this.arenaEnd + ks.length + 1 > this.arena.length) {
      this.compactIfWorth();
      this.arena = grown(this.arena, this.arenaEnd + ks.length + 1);
    }
    const at = this.arenaEnd;
    this.arena[at] = ks.length;
    this.arena.set(ks, at + 1);
    this.arenaEnd = at + ks.length + 1;
    this.docs[id] = ((at + 1) << 2) >>> 0;
  }

  /** Removes document `id`'s keys (no-op when it has none). */
  clear(id: number): void {
    const keys = this.keyIdsOf(id);
    if (keys.length === 0) return;
    if ((this.docs[id]! & 3) === 0) this.garbage += keys.length + 1;
    this.docs[id] = NONE;
    for (const k of keys) this.remove(k, id);
  }

  /** Document `id`'s keys, in the order given to {@link set}; empty when it has none. */
  keysOf(id: number): string[] {
    return this.keyIdsOf(id).map((k) => this.names[k]!);
  }

  /** Document `id`'s first key, or null when it has none (a single-valued field's value, without an array). */
  firstKey(id: number): string | null {
    const entry = id < this.docs.length ? this.docs[id]! : NONE;
    if (entry === NONE) return null;
    // An arena entry's list starts after its count, at the offset + 1 the entry holds.
    return this.names[entry & 3 ? firstPacked(entry) : this.arena[entry >>> 2]!]!;
  }

  /** The key ids of document `id`'s entry, in order. */
  private keyIdsOf(id: number): number[] {
    const entry = id < this.docs.length ? this.docs[id]! : NONE;
    switch (entry & 3) {
      case 1:
        return [entry >>> 2];
      case 2:
        return [(entry >>> 2) & 0x7fff, entry >>> 17];
      case 3:
        return [(entry >>> 2) & 0x3ff, (entry >>> 12) & 0x3ff, entry >>> 22];
      default: {
        if (entry === NONE) return [];
        const at = (entry >>> 2) - 1;
        return Array.from(this.arena.subarray(at + 1, at + 1 + this.arena[at]!));
      }
    }
  }

  /** Every distinct key held. */
  keys(): IterableIterator<string> {
    return this.keyIds.keys();
  }

  /** Whether document `id` holds `key`. */
  has(key: string, id: number): boolean {
    const m = this.membersOf(key);
    if (m === undefined) return false;
    if (typeof m === 'number') return m === id;
    if (Array.isArray(m)) return search(m, id) >= 0;
    return id >>> 5 < m.words.length && (m.words[id >>> 5]! & (1 << (id & 31))) !== 0;
  }

  /** Calls `fn` with every document holding `key`, ascending. */
  forEach(key: string, fn: (id: number) => void): void {
    const m = this.membersOf(key);
    if (m === undefined) return;
    if (typeof m === 'number') fn(m);
    else if (Array.isArray(m)) for (const id of m) fn(id);
    else forEachBit(m.words, fn);
  }

  /** Adds to `out` every document holding `key` below `out`'s capacity. */
  orInto(key: string, out: Bitset): void {
    const m = this.membersOf(key);
    if (m === undefined) return;
    const capacity = out.capacity;
    if (typeof m === 'number') {
      if (m < capacity) out.set(m);
    } else if (Array.isArray(m)) {
      for (const id of m) if (id < capacity) out.set(id);
    } else {
      const target = out.words;
      const words = m.words;
      const n = Math.min(words.length, target.length);
      for (let i = 0; i < n; i++) target[i] = target[i]! | words[i]!;
      // Bits at or past capacity in the last shared word are not members of `out`.
      if (n === target.length && capacity & 31 && n > 0) target[n - 1]! &= (1 << (capacity & 31)) - 1;
    }
  }

  /** Bytes held by the tables, the arena, the key lists and bitsets, and the key map (estimated; not the key strings). */
  bytes(): number {
    let b = this.docs.byteLength + this.arena.byteLength + 8 * (this.names.length + this.members.length + this.freeKeys.length) + 48 * this.keyIds.size;
    for (const m of this.members) {
      if (m === undefined || typeof m === 'number') continue;
      b += Array.isArray(m) ? 8 * m.length + 32 : m.words.byteLength + 96;
    }
    return b;
  }

  private membersOf(key: string): Members | undefined {
    const k = this.keyIds.get(key);
    return k === undefined ? undefined : this.members[k];
  }

  /** The key id of `key`, a new one when no document holds it yet. */
  private keyOf(key: string): number {
    let k = this.keyIds.get(key);
    if (k === undefined) {
      k = this.freeKeys.pop() ?? this.names.length;
      this.keyIds.set(key, k);
      this.names[k] = key;
      this.members[k] = undefined;
    }
    return k;
  }

  /** Adds `id` to key `k`'s members (no-op when there: a document may repeat a value). */
  private add(k: number, id: number): void {
    const m = this.members[k];
    if (m === undefined) {
      this.members[k] = id;
    } else if (typeof m === 'number') {
      if (m !== id) this.members[k] = m < id ? [m, id] : [id, m];
    } else if (Array.isArray(m)) {
      // Internal ids mostly grow, so the common insert is an append.
      if (id > m[m.length - 1]!) m.push(id);
      else {
        const at = search(m, id);
        if (at >= 0) return;
        m.splice(~at, 0, id);
      }
      if (bitsPay(m.length, m[m.length - 1]!)) this.members[k] = toBits(m);
    } else {
      const w = id >>> 5;
      if (w >= m.words.length) m.words = grown(m.words, w + 1);
      const bit = 1 << (id & 31);
      if ((m.words[w]! & bit) === 0) {
        m.words[w]! |= bit;
        m.size++;
      }
    }
  }

  /** Removes `id` from key `k`'s members, freeing the key when none are left. */
  private remove(k: number, id: number): void {
    const m = this.members[k];
    if (m === undefined) return;
    if (typeof m === 'number') {
      if (m === id) this.freeKey(k);
      return;
    }
    if (Array.isArray(m)) {
      const at = search(m, id);
      if (at < 0) return;
      m.splice(at, 1);
      if (m.length === 1) this.members[k] = m[0]!;
      return;
    }
    const w = id >>> 5;
    const bit = 1 << (id & 31);
    if (w >= m.words.length || (m.words[w]! & bit) === 0) return;
    m.words[w]! &= ~bit;
    m.size--;
    if (m.size === 0) this.freeKey(k);
    // Back to a list at a quarter of the size where it became bits (half a member per word), so
    // a set at the edge does not flip at every change.
    else if (m.size * 8 < m.words.length) this.members[k] = toList(m);
  }

  private freeKey(k: number): void {
    this.keyIds.delete(this.names[k]!);
    this.names[k] = undefined;
    this.members[k] = undefined;
    this.freeKeys.push(k);
  }

  /** Rewrites the arena with only the lists documents point at, when most of it is garbage. */
  private compactIfWorth(): void {
    if (this.garbage < COMPACT_MIN_GARBAGE || this.garbage * 2 < this.arenaEnd) return;
    const next = new Uint32Array(Math.max(8, this.arenaEnd - this.garbage));
    let end = 0;
    for (let id = 0; id < this.docs.length; id++) {
      const entry = this.docs[id]!;
      if (entry === NONE || entry & 3) continue;
      const at = (entry >>> 2) - 1;
      const n = this.arena[at]! + 1;
      next.set(this.arena.subarray(at, at + n), end);
      this.docs[id] = ((end + 1) << 2) >>> 0;
      end += n;
    }
    this.arena = next;
    this.arenaEnd = end;
    this.garbage = 0;
  }
}
