/** Maps external chunk ids to dense u32 internal ids and back, with deferred id reuse. */
import { ownString } from './analyzer.js';
import { arrayBytes, mapBytes, stringBytes } from './memory-report.js';

/**
 * Chunk id <-> internal id. A released id is not reusable at once: postings may still hold it
 * (tombstone). The owner calls {@link DocIdMap.recycle} once nothing refers to it any more, and
 * only then does {@link DocIdMap.allocate} hand it out again.
 */
export class DocIdMap {
  private readonly byChunk = new Map<string, number>();
  private readonly byId: (string | undefined)[] = [];
  private readonly free: number[] = [];

  /** Number of internal ids ever handed out; every id is below this (size bitsets with it). */
  get capacity(): number {
    return this.byId.length;
  }

  /** Number of chunk ids currently mapped. */
  get size(): number {
    return this.byChunk.size;
  }

  /** Internal id of a mapped chunk id, or undefined. */
  idOf(chunkId: string): number | undefined {
    return this.byChunk.get(chunkId);
  }

  /** Chunk id of a live internal id, or undefined for free or tombstoned ids. */
  chunkIdOf(id: number): string | undefined {
    return this.byId[id];
  }

  /** Maps a new chunk id; throws if it is already mapped (callers release first). */
  allocate(chunkId: string): number {
    if (this.byChunk.has(chunkId)) throw new Error(`chunk id already mapped: ${chunkId}`);
    const id = this.free.length > 0 ? this.free.pop()! : this.byId.length;
    if (id > 0xfffffffe) throw new RangeError('shard holds more than 2^32 - 1 internal ids');
    // Kept for the chunk's lifetime: a flat copy, since a caller's string may be a slice of a
    // request body or a tree of concatenated parts (~500 bytes for a UUID built by a template).
    const own = ownString(chunkId);
    if (id === this.byId.length) this.byId.push(own);
    else this.byId[id] = own;
    this.byChunk.set(own, id);
    return id;
  }

  /** Unmaps a chunk id and returns its internal id (tombstoned until recycled), or undefined. */
  release(chunkId: string): number | undefined {
    const id = this.byChunk.get(chunkId);
    if (id === undefined) return undefined;
    this.byChunk.delete(chunkId);
    this.byId[id] = undefined;
    return id;
  }

  /** Estimated bytes of the chunk-id strings, the map to ids, the id -> string array and the free list. */
  memoryBytes(): number {
    let strings = 0;
    for (const c of this.byChunk.keys()) strings += stringBytes(c);
    return strings + mapBytes(this.byChunk.size) + arrayBytes(this.byId.length) + arrayBytes(this.free.length);
  }

  /** Makes tombstoned ids allocatable again; only call when no structure refers to them. */
  recycle(ids: Iterable<number>): void {
    for (const id of ids) {
      if (this.byId[id] !== undefined) throw new Error(`cannot recycle live id ${id}`);
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
    for (let id = 0; id < chunkIds.length; id++) {
      const c = chunkIds[id];
      map.byId.push(c);
      if (c !== undefined) map.byChunk.set(c, id);
    }
    for (let i = 0; i < free.length; i++) map.free.push(free[i]!);
    map.free.sort((a, b) => b - a);
    return map;
  }
}
