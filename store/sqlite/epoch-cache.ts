/**
 * Records that every request reads (its dataset, its organization), kept until the database
 * changes. Reading a dataset's row and parsing its server_configuration was ~40 us of each search
 * here, for a row that changes a few times in its life.
 *
 * The validity check is exact and costs one statement: SQLite's `data_version` changes whenever
 * another connection (another thread or process) commits, and `total_changes()` whenever this one
 * writes. Any write anywhere empties the cache, so it pays only while reads outnumber writes, and
 * it is never stale. Reads inside a transaction bypass it (a rolled-back write would be kept).
 */
import type { Db } from './database.js';

/** Most records kept per cache; past it the cache starts empty again. */
const MAX_ENTRIES = 10_000;

/** The database's write counter as this connection sees it. */
export class WriteEpoch {
  // Two statements: the pragma alone is ~1.8 us here, the table-valued pragma_data_version() ~3.8
  // us, and total_changes() reads no file (~0.1 us).
  private readonly version;
  private readonly changes;

  constructor(private readonly db: Db) {
    this.version = db.prepare('PRAGMA data_version').pluck();
    this.changes = db.prepare('SELECT total_changes()').pluck();
  }

  /** A value that differs after any committed write of another connection or any write of this one; null inside a transaction. */
  now(): string | null {
    if (this.db.inTransaction) return null;
    return `${this.version.get() as number}:${this.changes.get() as number}`;
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
