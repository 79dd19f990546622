/**
 * Opens each store implementation for a contract test: the same calls must give the same answers
 * on SQLite and on PostgreSQL (`describe.each(STORE_KINDS)` with {@link openTestStore}).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Store } from '../../store/repository.js';
import { openPgStore } from '../../store/postgres/pg-store.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { migratedPgDatabase } from './pg.js';
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

/**
 * A SQLite file at the current schema, made once per test worker: a store opened on a copy finds
 * nothing to migrate (~15 ms, where migrating an empty one took ~60 ms; the stacks still migrate
 * theirs from nothing).
 */
let sqliteTemplate: Promise<string> | null = null;
function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-store-template-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    // Closing checkpoints the write-ahead log into the file: the file alone is the database.
    await openSqliteStore(dir).close();
    return path.join(dir, 'quarry.sqlite');
  })();
  return sqliteTemplate;
}

/** A fresh, empty store of the given kind, at the current schema. */
export async function openTestStore(kind: StoreKind): Promise<TestStore> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-store-'));
    fs.copyFileSync(await sqliteTemplateFile(), path.join(dir, 'quarry.sqlite'));
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
  const db = await migratedPgDatabase();
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

/** A step of {@link readInRolledBackTx}: SQL, or code per store (a migration's fill written in TypeScript). */
export type RolledBackStep = string | { readonly sqlite: (db: Database.Database) => void; readonly postgres: (client: pg.Client) => Promise<void> };

/**
 * Runs `statements` (then `fill`) in a transaction on a connection of its own, behind the store's
 * back, returns the rows of each of `reads` after them, and rolls everything back (e.g. what a
 * migration's backfill would compute from the rows stored now).
 */
export async function readInRolledBackTx(loc: StoreLocation, statements: readonly RolledBackStep[], reads: readonly string[]): Promise<Record<string, any>[][]> {
  if (loc.databaseUrl === null) {
    const db = new Database(path.join(loc.dataDir, 'quarry.sqlite'));
    try {
      db.exec('BEGIN');
      for (const s of statements) {
        if (typeof s === 'string') db.exec(s);
        else s.sqlite(db);
      }
      const out = reads.map((r) => db.prepare(r).all() as Record<string, any>[]);
      db.exec('ROLLBACK');
      return out;
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: loc.databaseUrl });
  await c.connect();
  try {
    await c.query('BEGIN');
    for (const s of statements) {
      if (typeof s === 'string') await c.query(s);
      else await s.postgres(c);
    }
    const out: Record<string, any>[][] = [];
    for (const r of reads) out.push((await c.query(r)).rows);
    await c.query('ROLLBACK');
    return out;
  } finally {
    await c.end();
  }
}
