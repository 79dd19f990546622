/**
 * Records that every request reads (its dataset, its organization), kept until the database
 * changes. Reading a dataset's row and parsing its server_configuration was ~40 us of each search
 * here, for a row that changes a few times in its life.
 *
 * The validity check is exact and costs one statement: SQLite's `data_version` changes whenever
 * another connection (another thread or process) commits, and `total_changes()` whenever this one
 * writes. A request pins the first (see {@link WriteEpoch.pin}): one read per request, not four. Any write anywhere empties the cache, so it pays only while reads outnumber writes, and
 * it is never stale. Reads inside a transaction bypass it (a rolled-back write would be kept).
 */
import type { Db } from './database.js';

/** Most records kept per cache; past it the cache starts empty again. */
const MAX_ENTRIES = 10_000;

/** The database's write counter as this connection sees it. */
export class WriteEpoch {
  // Two statements: the pragma alone is ~1.8 us here (up to ~10 us in a busy process: it takes a
  // WAL read lock), the table-valued pragma_data_version() ~3.8 us, and total_changes() reads no
  // file (~0.1 us).
  private readonly version;
  private readonly changes;
  /** data_version as read by {@link pin}, until the end of this event-loop turn; null: read it. */
  private pinned: number | null = null;
  private unpinScheduled = false;

  constructor(private readonly db: Db) {
    this.version = db.prepare('PRAGMA data_version').pluck();
    this.changes = db.prepare('SELECT total_changes()').pluck();
  }

  /** A value that differs after any committed write of another connection or any write of this one; null inside a transaction. */
  now(): string | null {
    if (this.db.inTransaction) return null;
    return `${this.pinned ?? (this.version.get() as number)}:${this.changes.get() as number}`;
  }

  /**
   * Reads other connections' write counter now and lets every check until the end of this turn
   * of the event loop use it. Call it where a request from outside arrives: all that request's
   * reads in this turn then see every commit made before it arrived (a client can only send a
   * request after learning of a commit, so the commits it may expect precede its arrival), and
   * a later turn reads the counter again. This connection's own writes are seen at once (the
   * counter of those is read on every check), and the writer thread's through {@link unpin}.
   */
  pin(): void {
    if (this.db.inTransaction) return;
    this.pinned = this.version.get() as number;
    if (!this.unpinScheduled) {
      this.unpinScheduled = true;
      setImmediate(() => {
        this.pinned = null;
        this.unpinScheduled = false;
      }).unref();
    }
  }

  /** Forgets the pinned counter: a write of this process committed on another connection (the writer thread). */
  unpin(): void {
    this.pinned = null;
  }
}

/** Records by key, valid for one {@link WriteEpoch} value. */
export class EpochCache<T> {
  private readonly records = new Map<string, T | undefined>();
  private epoch: string | null = null;

  constructor(private readonly writes: WriteEpoch) {}

  /** The record of `key`: from memory when nothing was written since it was loaded, else `load()`. */
  get(key: string, load: () => T | undefined): T | undefined {
    const now = this.writes.now();
    if (now === null) return load();
    if (now !== this.epoch) {
      this.records.clear();
      this.epoch = now;
    }
    if (this.records.has(key)) return this.records.get(key);
    const record = load();
    if (this.records.size >= MAX_ENTRIES) this.records.clear();
    this.records.set(key, record);
    return record;
  }
}
