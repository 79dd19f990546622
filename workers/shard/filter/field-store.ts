/**
 * Per-shard filterable fields, indexed by the shard's internal ids: columns for numbers, time and
 * location (NaN = absent), inverted indexes for tags, groups, links and tracking ids, and the
 * parsed metadata for `metadata.<key>` conditions (a scan, as the spec warns).
 */
import type { ShardDoc } from '../protocol.js';

/** Grows a Float64Array to hold index `n`, filling new slots with NaN. */
function growF64(a: Float64Array<ArrayBuffer>, n: number): Float64Array<ArrayBuffer> {
  if (n < a.length) return a;
  const next = new Float64Array(Math.max(n + 1, a.length * 2));
  next.fill(Number.NaN);
  next.set(a);
  return next;
}

/**
 * Bitset words of large posting sets, built on first use and dropped when the set changes, so a
 * filter on a common tag ORs ~capacity/32 words instead of setting one bit per member.
 */
const wordCache = new WeakMap<Set<number>, Uint32Array>();

/** Posting sets smaller than this are cheaper to walk than to cache as words. */
const CACHE_MIN_SIZE = 256;

/** The words of a posting set (cached), or undefined when the set is small enough to walk. */
export function postingWords(set: Set<number>): Uint32Array | undefined {
  if (set.size < CACHE_MIN_SIZE) return undefined;
  let words = wordCache.get(set);
  if (!words) {
    let max = 0;
    for (const id of set) if (id > max) max = id;
    words = new Uint32Array((max >>> 5) + 1);
    for (const id of set) words[id >>> 5]! |= 1 << (id & 31);
    wordCache.set(set, words);
  }
  return words;
}

/** Adds id to the posting set of key. */
function post(index: Map<string, Set<number>>, key: string, id: number): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(id);
  wordCache.delete(set);
}

/** Removes id from the posting set of key, dropping empty sets. */
function unpost(index: Map<string, Set<number>>, key: string, id: number): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(id);
  wordCache.delete(set);
  if (set.size === 0) index.delete(key);
}

/** The filterable fields of one shard. */
export class FieldStore {
  /** Upper bound (exclusive) of ids ever set. */
  capacity = 0;
  alive = new Uint8Array(64);
  /** The same liveness as a bitset's words, kept current so filters need not rebuild it per query. */
  aliveWords = new Uint32Array(2);
  numValue = new Float64Array(64).fill(Number.NaN);
  /** Epoch milliseconds. */
  timeStamp = new Float64Array(64).fill(Number.NaN);
  lat = new Float64Array(64).fill(Number.NaN);
  lon = new Float64Array(64).fill(Number.NaN);
  readonly link: (string | null)[] = [];
  readonly trackingId: (string | null)[] = [];
  readonly tags: (readonly string[] | null)[] = [];
  readonly groups: (readonly string[] | null)[] = [];
  readonly metadata: unknown[] = [];
  readonly tagIndex = new Map<string, Set<number>>();
  readonly groupIndex = new Map<string, Set<number>>();
  readonly linkIndex = new Map<string, Set<number>>();
  readonly trackingIndex = new Map<string, number>();
  /** Live documents. */
  size = 0;

  /** Stores a document's fields under internal id `id` (replacing what was there). */
  set(id: number, doc: ShardDoc): void {
    this.clear(id);
    if (id >= this.alive.length) {
      const alive = new Uint8Array(Math.max(id + 1, this.alive.length * 2));
      alive.set(this.alive);
      this.alive = alive;
    }
    this.numValue = growF64(this.numValue, id);
    this.timeStamp = growF64(this.timeStamp, id);
    this.lat = growF64(this.lat, id);
    this.lon = growF64(this.lon, id);
    this.capacity = Math.max(this.capacity, id + 1);
    if (id >>> 5 >= this.aliveWords.length) {
      const words = new Uint32Array(Math.max((id >>> 5) + 1, this.aliveWords.length * 2));
      words.set(this.aliveWords);
      this.aliveWords = words;
    }
    this.aliveWords[id >>> 5]! |= 1 << (id & 31);
    this.alive[id] = 1;
    this.size++;
    this.numValue[id] = doc.numValue ?? Number.NaN;
    this.timeStamp[id] = doc.timeStamp ?? Number.NaN;
    this.lat[id] = doc.lat ?? Number.NaN;
    this.lon[id] = doc.lon ?? Number.NaN;
    this.link[id] = doc.link;
    this.trackingId[id] = doc.trackingId;
    this.tags[id] = doc.tagSet.length > 0 ? [...doc.tagSet] : null;
    this.groups[id] = doc.groupIds.length > 0 ? [...doc.groupIds] : null;
    this.metadata[id] = doc.metadata ?? null;
    for (const t of doc.tagSet) post(this.tagIndex, t, id);
    for (const g of doc.groupIds) post(this.groupIndex, g, id);
    if (doc.link !== null) post(this.linkIndex, doc.link, id);
    if (doc.trackingId !== null) this.trackingIndex.set(doc.trackingId, id);
  }

  /** Forgets the document at `id` (no-op when there is none). */
  clear(id: number): void {
    if (id >= this.capacity || this.alive[id] !== 1) return;
    this.alive[id] = 0;
    this.aliveWords[id >>> 5]! &= ~(1 << (id & 31));
    this.size--;
    for (const t of this.tags[id] ?? []) unpost(this.tagIndex, t, id);
    for (const g of this.groups[id] ?? []) unpost(this.groupIndex, g, id);
    const link = this.link[id];
    if (link != null) unpost(this.linkIndex, link, id);
    const tid = this.trackingId[id];
    if (tid != null && this.trackingIndex.get(tid) === id) this.trackingIndex.delete(tid);
    this.numValue[id] = Number.NaN;
    this.timeStamp[id] = Number.NaN;
    this.lat[id] = Number.NaN;
    this.lon[id] = Number.NaN;
    this.link[id] = null;
    this.trackingId[id] = null;
    this.tags[id] = null;
    this.groups[id] = null;
    this.metadata[id] = null;
  }

  /**
   * The stored document at `id` (for snapshots), or undefined when none is alive there. Its chunk
   * id is the BM25 index's (`chunkIdOf`, called only for a live document): the store keeps none
   * of its own, since the index holds every id compactly (a UUID in 16 bytes) and a second copy
   * as a string and a Map entry was ~100 bytes a chunk.
   */
  doc(id: number, chunkIdOf: (id: number) => string | undefined): Omit<ShardDoc, 'text'> | undefined {
    if (id >= this.capacity || this.alive[id] !== 1) return undefined;
    const nan = (x: number) => (Number.isNaN(x) ? null : x);
    return {
      chunkId: chunkIdOf(id)!,
      trackingId: this.trackingId[id] ?? null,
      link: this.link[id] ?? null,
      tagSet: this.tags[id] ?? [],
      numValue: nan(this.numValue[id]!),
      timeStamp: nan(this.timeStamp[id]!),
      lat: nan(this.lat[id]!),
      lon: nan(this.lon[id]!),
      groupIds: this.groups[id] ?? [],
      metadata: this.metadata[id] ?? null,
    };
  }
}
