/**
 * Per-shard filterable fields, indexed by the shard's internal ids: columns for numbers, time and
 * location (NaN = absent), inverted indexes for tags, groups, links and tracking ids
 * (keyed-postings.ts), and the metadata for `metadata.<key>` conditions (a scan, as the spec
 * warns). Nothing is allocated for a field no document of the shard has.
 *
 * Metadata arrives as the store's JSON text and is kept as that one string until something reads
 * it ({@link FieldStore.metadata}), then parsed once and kept parsed: a dataset never filtered or
 * sorted by metadata holds a string a chunk, not an object graph (a 200,000-row product import
 * spent ~12% of the core's CPU parsing, sending and collecting those objects).
 */
import type { ShardDoc } from '../protocol.js';
import { KeyedPostings } from './keyed-postings.js';

/** A column of no values: every id reads NaN (see {@link FieldStore.value}). */
const EMPTY_COLUMN = new Float64Array(0);

/** `a` with room for index `n`, new slots NaN. */
function growF64(a: Float64Array, n: number): Float64Array {
  if (n < a.length) return a;
  const next = new Float64Array(Math.max(n + 1, a.length * 2, 64));
  next.fill(Number.NaN);
  next.set(a);
  return next;
}

/** `a` with `value` at `id`: a column is allocated with its first value (NaN needs none). */
function put(a: Float64Array, id: number, value: number | null): Float64Array {
  if (value === null) {
    if (id < a.length) a[id] = Number.NaN;
    return a;
  }
  const next = growF64(a, id);
  next[id] = value;
  return next;
}

/** The filterable fields of one shard. */
export class FieldStore {
  /** Upper bound (exclusive) of ids ever set. */
  capacity = 0;
  alive = new Uint8Array(64);
  /** The same liveness as a bitset's words, kept current so filters need not rebuild it per query. */
  aliveWords = new Uint32Array(2);
  /**
   * Columns by internal id, NaN where a document has no value; each is allocated with the
   * shard's first value of its field (read them through {@link value}: an id past a column's end
   * has none). A dataset without prices or locations pays nothing for them (32 MiB at 1M chunks).
   */
  numValue: Float64Array = EMPTY_COLUMN;
  /** Epoch milliseconds. */
  timeStamp: Float64Array = EMPTY_COLUMN;
  lat: Float64Array = EMPTY_COLUMN;
  lon: Float64Array = EMPTY_COLUMN;
  /** Parsed metadata by internal id (undefined: none, or not parsed yet); allocated with its first value. */
  private meta: unknown[] | null = null;
  /** Metadata still as JSON text by internal id (undefined: none, or parsed into {@link meta}). */
  private metaJson: (string | undefined)[] | null = null;
  readonly tags = new KeyedPostings();
  readonly groups = new KeyedPostings();
  /** A chunk has at most one link: the inverted index answers both ways. */
  readonly links = new KeyedPostings();
  /** Tracking ids are unique within a dataset; a shard applying a change log may briefly hold one twice. */
  readonly trackingIds = new KeyedPostings();
  /** Live documents. */
  size = 0;

  /** The value of `column` at `id`, NaN when the document has none. */
  static value(column: Float64Array, id: number): number {
    return id < column.length ? column[id]! : Number.NaN;
  }

  /** The parsed metadata kept at `id` (undefined: none, or not parsed yet). */
  private parsedAt(id: number): unknown {
    return this.meta !== null && id < this.meta.length ? this.meta[id] : undefined;
  }

  /** The metadata text kept at `id` (undefined: none, or parsed already). */
  private jsonAt(id: number): string | undefined {
    return this.metaJson !== null && id < this.metaJson.length ? this.metaJson[id] : undefined;
  }

  /** The metadata of the document at `id` (null when it has none), parsed at its first read. */
  metadata(id: number): unknown {
    const parsed = this.parsedAt(id);
    if (parsed !== undefined) return parsed;
    const json = this.jsonAt(id);
    if (json === undefined) return null;
    const value = JSON.parse(json) as unknown;
    (this.meta ??= [])[id] = value;
    this.metaJson![id] = undefined;
    return value;
  }

  /** The metadata of the document at `id` as it is kept: its JSON text, or parsed once it was read. */
  private storedMetadata(id: number): { metadataJson: string } | { metadata: unknown } {
    const json = this.jsonAt(id);
    return json !== undefined ? { metadataJson: json } : { metadata: this.parsedAt(id) ?? null };
  }

  /** Bytes of the columns, tables and inverted indexes (V8 objects estimated; not the strings or the metadata itself). */
  memoryBytes(): number {
    const columns = this.numValue.byteLength + this.timeStamp.byteLength + this.lat.byteLength + this.lon.byteLength;
    const keyed = this.tags.bytes() + this.groups.bytes() + this.links.bytes() + this.trackingIds.bytes();
    return this.alive.byteLength + this.aliveWords.byteLength + columns + 8 * ((this.meta?.length ?? 0) + (this.metaJson?.length ?? 0)) + keyed;
  }

  /** Stores a document's fields under internal id `id` (replacing what was there). */
  set(id: number, doc: ShardDoc): void {
    this.clear(id);
    if (id >= this.alive.length) {
      const alive = new Uint8Array(Math.max(id + 1, this.alive.length * 2));
      alive.set(this.alive);
      this.alive = alive;
    }
    this.capacity = Math.max(this.capacity, id + 1);
    if (id >>> 5 >= this.aliveWords.length) {
      const words = new Uint32Array(Math.max((id >>> 5) + 1, this.aliveWords.length * 2));
      words.set(this.aliveWords);
      this.aliveWords = words;
    }
    this.aliveWords[id >>> 5]! |= 1 << (id & 31);
    this.alive[id] = 1;
    this.size++;
    this.numValue = put(this.numValue, id, doc.numValue ?? null);
    this.timeStamp = put(this.timeStamp, id, doc.timeStamp ?? null);
    this.lat = put(this.lat, id, doc.lat ?? null);
    this.lon = put(this.lon, id, doc.lon ?? null);
    if (doc.metadataJson != null) (this.metaJson ??= [])[id] = doc.metadataJson;
    else if (doc.metadata != null) (this.meta ??= [])[id] = doc.metadata;
    this.tags.set(id, doc.tagSet);
    this.groups.set(id, doc.groupIds);
    if (doc.link !== null) this.links.set(id, [doc.link]);
    if (doc.trackingId !== null) this.trackingIds.set(id, [doc.trackingId]);
  }

  /** Forgets the document at `id` (no-op when there is none). */
  clear(id: number): void {
    if (id >= this.capacity || this.alive[id] !== 1) return;
    this.alive[id] = 0;
    this.aliveWords[id >>> 5]! &= ~(1 << (id & 31));
    this.size--;
    this.tags.clear(id);
    this.groups.clear(id);
    this.links.clear(id);
    this.trackingIds.clear(id);
    for (const column of [this.numValue, this.timeStamp, this.lat, this.lon]) if (id < column.length) column[id] = Number.NaN;
    if (this.meta !== null && id < this.meta.length) this.meta[id] = undefined;
    if (this.metaJson !== null && id < this.metaJson.length) this.metaJson[id] = undefined;
  }

  /**
   * The stored document at `id` (for snapshots), or undefined when none is alive there. Its chunk
   * id is the BM25 index's (`chunkIdOf`, called only for a live document): the store keeps none
   * of its own, since the index holds every id compactly (a UUID in 16 bytes) and a second copy
   * as a string and a Map entry was ~100 bytes a chunk.
   */
  doc(id: number, chunkIdOf: (id: number) => string | undefined): Omit<ShardDoc, 'text'> | undefined {
    if (id >= this.capacity || this.alive[id] !== 1) return undefined;
    const nan = (column: Float64Array) => {
      const x = FieldStore.value(column, id);
      return Number.isNaN(x) ? null : x;
    };
    return {
      chunkId: chunkIdOf(id)!,
      trackingId: this.trackingIds.firstKey(id),
      link: this.links.firstKey(id),
      tagSet: this.tags.keysOf(id),
      numValue: nan(this.numValue),
      timeStamp: nan(this.timeStamp),
      lat: nan(this.lat),
      lon: nan(this.lon),
      groupIds: this.groups.keysOf(id),
      // In the form it is kept: a snapshot neither parses metadata nobody read nor turns parsed
      // metadata into text only to escape that text again (the load takes either).
      ...this.storedMetadata(id),
    };
  }
}
