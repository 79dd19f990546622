/** Opens the SQLite file with the pragmas the store relies on and brings its schema up to date. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

/** A better-sqlite3 handle. */
export type Db = Database.Database;

/** Opens (creating if needed) `<dataDir>/quarry.sqlite` in WAL mode and migrates it. */
export function openDatabase(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, 'quarry.sqlite'));
  // WAL lets the core and the job workers read while the facade writes; synchronous=FULL makes
  // every acknowledged commit survive a power cut, not only a process crash.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

/**
 * Runs the migrations that have not run yet, each in its own transaction. The version is read
 * inside the (immediate, so write-locked) transaction: the core, the facade and the job workers
 * open the same file at the same moment on a fresh data dir, and a version read before taking
 * the lock would make the second process re-run a migration that the first has just applied.
 */
export function migrate(db: Db): void {
  const step = db.transaction((): boolean => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`store schema version ${version} is newer than this build knows (${MIGRATIONS.length})`);
    }
    if (version === MIGRATIONS.length) return false;
    const migration = MIGRATIONS[version]!;
    if (typeof migration === 'string') db.exec(migration);
    else migration(db);
    db.pragma(`user_version = ${version + 1}`);
    return true;
  });
  const deadline = Date.now() + START_BUSY_MS;
  for (;;) {
    let more: boolean;
    try {
      more = step.immediate();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      // No one else is serving yet: this process only waits for its turn, a blocking wait is fine.
      Atomics.wait(pause, 0, 0, BUSY_RETRY_MS);
      continue;
    }
    // One migration per transaction, until none is left.
    if (!more) return;
  }
}

/**
 * How long a process opening the store retries a migration transaction that SQLite refused as
 * busy. Processes opening a fresh data dir together were refused at once, their 5 s busy timeout
 * not waited, when signals kept interrupting them: under \`node --cpu-prof\` (its sampling signal),
 * 3 of 60 processes, three at a time, failed their first BEGIN IMMEDIATE ~30 ms in with "database
 * is locked" (17 of 75 at a 200 us sampling interval); a moment later the lock is free.
 */
const START_BUSY_MS = 30_000;
/** Wait between two tries. */
const BUSY_RETRY_MS = 10;
/** What the wait blocks on (nothing ever wakes it: it times out). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** SQLITE_BUSY or one of its extended codes. */
function isBusy(err: unknown): boolean {
  return err instanceof Database.SqliteError && err.code.startsWith('SQLITE_BUSY');
}
