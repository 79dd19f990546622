/** The embedded store: every repository over one SQLite file. */
import type { Store } from '../repository.js';
import { sqliteAnalytics } from './analytics.js';
import { processReportSql } from './report-process.js';
import { sqliteReportSql } from './reports.js';
import { sqliteUserEvents } from './user-events.js';
import { sqliteApiKeys } from './api-keys.js';
import { ChangeLogWriter, sqliteChangeLog } from './change-log.js';
import { sqliteChunks } from './chunks.js';
import { openDatabase, type Db } from './database.js';
import { WriteEpoch } from './epoch-cache.js';
import { sqliteDatasets } from './datasets.js';
import { sqliteExperiments } from './experiments.js';
import { sqliteFiles } from './files.js';
import { sqliteIndexReads } from './index-reads.js';
import { sqliteGroups } from './groups.js';
import { sqliteMessages } from './messages.js';
import { sqliteOrganizations } from './organizations.js';
import { sqlitePurger } from './purge.js';
import { sqliteUsers } from './users.js';
import { sqliteSparseVectors } from './sparse-vectors.js';
import { sqliteTopics } from './topics.js';
import { sqliteDatasetEvents, sqliteVectors } from './vectors.js';

/** Options of a store connection. */
export interface SqliteStoreOptions {
  /**
   * Bytes of recently read chunk records kept (store/sqlite/chunk-cache.ts); above 0 the
   * dataset, organization and API-key lookups are cached too (epoch-cache.ts). 0: no caches.
   * @defaultValue `0`
   */
  readonly readCacheBytes?: number;
  /**
   * Run the analytics reports' SQL in processes of their own at this nice value, each statement
   * stopped after `timeoutMs` (report-process.ts), so that a long report never holds the caller's
   * event loop; null runs them in line, without a deadline (reports.ts).
   * @defaultValue `null`
   */
  readonly reportProcesses?: { readonly nice: number; readonly timeoutMs: number } | null;
}

/** The SQLite store: a {@link Store} whose pinned reads a writer thread of this process can release. */
export interface SqliteStore extends Store {
  /** Forgets what {@link Store.pinReads} checked: a write of this process committed on another connection. */
  unpinReads(): void;
}

/** Opens the store in `dataDir` (creating and migrating it as needed). */
export function openSqliteStore(dataDir: string, options: SqliteStoreOptions = {}): SqliteStore {
  return sqliteStoreOn(openDatabase(dataDir), options);
}

/** Every repository over an open database (closing the store closes it). */
export function sqliteStoreOn(db: Db, options: SqliteStoreOptions = {}): SqliteStore {
  const log = new ChangeLogWriter(db);
  const cacheBytes = options.readCacheBytes ?? 0;
  const epoch = cacheBytes > 0 ? new WriteEpoch(db) : null;
  const ping = db.prepare('SELECT 1');
  const purger = sqlitePurger(db);
  const reportProcesses = options.reportProcesses && !db.memory ? processReportSql({ file: db.name, ...options.reportProcesses }) : null;
  return {
    organizations: sqliteOrganizations(db, purger, epoch),
    users: sqliteUsers(db),
    apiKeys: sqliteApiKeys(db, epoch),
    datasets: sqliteDatasets(db, log, purger, epoch),
    chunks: sqliteChunks(db, log, cacheBytes, epoch),
    groups: sqliteGroups(db, log),
    changeLog: sqliteChangeLog(db),
    vectors: sqliteVectors(db, log),
    sparseVectors: sqliteSparseVectors(db, log),
    events: sqliteDatasetEvents(db),
    analytics: sqliteAnalytics(db),
    topics: sqliteTopics(db),
    messages: sqliteMessages(db),
    files: sqliteFiles(db),
    userEvents: sqliteUserEvents(db),
    experiments: sqliteExperiments(db),
    reports: reportProcesses ?? sqliteReportSql(db),
    indexReads: sqliteIndexReads(db),
    async ping() {
      ping.get();
    },
    pinReads() {
      epoch?.pin();
    },
    unpinReads() {
      epoch?.unpin();
    },
    async close() {
      await reportProcesses?.close();
      if (db.open) db.close();
    },
  };
}
