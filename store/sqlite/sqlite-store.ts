/** The embedded store: every repository over one SQLite file. */
import type { Store } from '../repository.js';
import { sqliteAnalytics } from './analytics.js';
import { sqliteApiKeys } from './api-keys.js';
import { ChangeLogWriter, sqliteChangeLog } from './change-log.js';
import { sqliteChunks } from './chunks.js';
import { openDatabase, type Db } from './database.js';
import { sqliteDatasets } from './datasets.js';
import { sqliteGroups } from './groups.js';
import { sqliteOrganizations } from './organizations.js';
import { sqlitePurger } from './purge.js';
import { sqliteUsers } from './users.js';
import { sqliteSparseVectors } from './sparse-vectors.js';
import { sqliteDatasetEvents, sqliteVectors } from './vectors.js';

/** Opens the store in `dataDir` (creating and migrating it as needed). */
export function openSqliteStore(dataDir: string): Store {
  return sqliteStoreOn(openDatabase(dataDir));
}

/** Every repository over an open database (closing the store closes it). */
export function sqliteStoreOn(db: Db): Store {
  const log = new ChangeLogWriter(db);
  const ping = db.prepare('SELECT 1');
  const purger = sqlitePurger(db);
  return {
    organizations: sqliteOrganizations(db, purger),
    users: sqliteUsers(db),
    apiKeys: sqliteApiKeys(db),
    datasets: sqliteDatasets(db, log, purger),
    chunks: sqliteChunks(db, log),
    groups: sqliteGroups(db, log),
    changeLog: sqliteChangeLog(db),
    vectors: sqliteVectors(db, log),
    sparseVectors: sqliteSparseVectors(db, log),
    events: sqliteDatasetEvents(db),
    analytics: sqliteAnalytics(db),
    async ping() {
      ping.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
