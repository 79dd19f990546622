/**
 * Recently read chunk records of one connection, so that a search page does not read its rows
 * again (10 rows were ~170 us of a ~0.8 ms SciFact search here, most of it SQLite building the
 * row's strings).
 *
 * Exact, not eventually consistent: every write that changes a chunk's record appends to the
 * change log in the same transaction (store/sqlite/chunks.ts, datasets.ts, groups.ts; the vector
 * bookkeeping columns vectors.ts sets are not part of the record), so before each use the cache
 * reads the log's head and evicts every chunk written since it last looked, whichever connection
 * or process wrote it (looking only when SQLite's write counters moved, see epoch-cache.ts). A
 * read that starts after a write answered sees that write.
 */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import type { Db } from './database.js';
import type { WriteEpoch } from './epoch-cache.js';

/** Evicting more than this many logged writes at once costs more than starting empty. */
const MAX_EVICT = 10_000;

/** Rough memory of a record: its strings (UTF-16) and a fixed part for the rest. */
function sizeOf(c: ChunkRecord): number {
  return 512 + 2 * ((c.chunkHtml?.length ?? 0) + (c.semanticContent?.length ?? 0) + (c.fulltextContent?.length ?? 0) + (c.link?.length ?? 0));
}

/** A cached record, its size, and whether it was read since eviction last passed it. */
interface Entry {
  readonly record: ChunkRecord;
  readonly bytes: number;
  referenced: boolean;
}

/**
 * A byte-bounded cache of chunk records, validated against the change log, evicting by second
 * chance (CLOCK): a hit only marks its entry, and eviction, from the oldest entry on, moves a
 * marked entry to the end unmarked and drops the first unmarked one.
 *
 * Why not a Map-ordered LRU: moving every hit to the end (delete, then set) leaves a deleted slot
 * in the Map's table each time, and V8 rebuilds the table when they fill it: a new ~115 KB
 * table every 100-200 SciFact searches, which lives long enough to be promoted, ~20% of what
 * each young-generation collection of the HTTP process promoted (`--trace-gc-nvp`, 2026-11-29).
 * While the records fit, a hit now allocates nothing.
 */
export class ChunkCache {
  /** Insertion order, oldest first: where eviction looks. */
  private readonly records = new Map<string, Entry>();
  private bytes = 0;
  /** The change-log head the cache is valid for. */
  private seenSeq: number;
  /** The database's write counter at the last look at the log: unchanged, nothing was written. */
  private seenEpoch: string | null = null;
  private readonly head;
  private readonly written;

  constructor(
    db: Db,
    /** Largest total size of the cached records (see {@link sizeOf}). */
    private readonly maxBytes: number,
    private readonly epoch: WriteEpoch,
  ) {
    this.head = db.prepare('SELECT COALESCE(MAX(seq), 0) FROM change_log').pluck();
    this.written = db.prepare('SELECT chunk_id FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?').pluck();
    this.seenSeq = this.head.get() as number;
  }

  /** Drops what was written since the last call (call before every batch of lookups). */
  sync(): void {
    const epoch = this.epoch.now();
    if (epoch !== null && epoch === this.seenEpoch) return;
    this.seenEpoch = epoch;
    const head = this.head.get() as number;
    if (head === this.seenSeq) return;
    // The head only goes back when a purge removed the newest entries: start over to be safe.
    const ids = head > this.seenSeq ? (this.written.all(this.seenSeq, MAX_EVICT + 1) as string[]) : null;
    if (ids === null || ids.length > MAX_EVICT) this.clear();
    else for (const id of ids) this.evict(id);
    this.seenSeq = head;
  }

  /** The cached record of `id` in `datasetId`, if any. */
  get(datasetId: string, id: string): ChunkRecord | undefined {
    const entry = this.records.get(id);
    if (!entry || entry.record.datasetId !== datasetId) return undefined;
    entry.referenced = true;
    return entry.record;
  }

  /** Remembers a record just read from the store. */
  set(record: ChunkRecord): void {
    const bytes = sizeOf(record);
    if (bytes > this.maxBytes / 16) return;
    this.evict(record.id);
    this.records.set(record.id, { record, bytes, referenced: false });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes && this.records.size > 0) this.evictOne();
  }

  /** Drops the oldest entry not read since eviction last passed it, moving read ones to the end. */
  private evictOne(): void {
    // Ends: a pass clears every mark it meets, so the second pass finds an unmarked entry.
    for (const [id, entry] of this.records) {
      if (entry.referenced) {
        entry.referenced = false;
        this.records.delete(id);
        this.records.set(id, entry);
        continue;
      }
      this.evict(id);
      return;
    }
  }

  private evict(id: string): void {
    const entry = this.records.get(id);
    if (!entry) return;
    this.records.delete(id);
    this.bytes -= entry.bytes;
  }

  private clear(): void {
    this.records.clear();
    this.bytes = 0;
  }
}
