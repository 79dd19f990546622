/**
 * Opens each store implementation for a contract test: the same calls must give the same answers
 * on SQLite and on PostgreSQL (`describe.each(STORE_KINDS)` with {@link openTestStore}).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Store } from '../../store/repository.js';
import { openPgStore } from '../../store/postgres/pg-store.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { freshPgDatabase } from './pg.js';
import type { StoreLocation } from './store-snapshot.js';

/** The store implementations. */
export const STORE_KINDS = ['sqlite', 'postgres'] as const;
/** One of {@link STORE_KINDS}. */
export type StoreKind = (typeof STORE_KINDS)[number];

/** A store of a test's own, and its removal. */
export interface TestStore {
  readonly store: Store;
  /** Where it keeps its rows, for reading them behind its back (store-snapshot.ts). */
  readonly loc: StoreLocation;
  /** Closes the store and removes its data (directory or database). */
  dispose(): Promise<void>;
}

/** A fresh, empty store of the given kind. */
export async function openTestStore(kind: StoreKind): Promise<TestStore> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-store-'));
    const store = openSqliteStore(dir);
    return {
      store,
      loc: { dataDir: dir, databaseUrl: null },
      async dispose() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await freshPgDatabase();
  const store = await openPgStore(db.url, { poolSize: 4 });
  return {
    store,
    loc: { dataDir: '', databaseUrl: db.url },
    async dispose() {
      await store.close();
      await db.drop();
    },
  };
}
