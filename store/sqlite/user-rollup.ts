/**
 * SQLite's side of the per-user rollups (../user-rollup-batch.ts): records inserted or deleted,
 * applied to both tables inside the transaction that wrote them, and the migration's fill. SQLite's
 * single writer makes each ordinal assignment and each row's read-merge-write atomic.
 */
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import {
  fillBoundsSql,
  fillWalkSql,
  FILL_WINDOW_MS,
  keyCondition,
  mergedUsers,
  rebuiltUsers,
  unionOf,
  USER_DAILY,
  USER_HOURLY,
  USER_ORDINALS,
  USER_ROLLUP_TABLES,
  USER_SOURCES,
  userDeltas,
  usersByDataset,
  userSourceTable,
  UserOrdinals,
  UserRollupFill,
  type FilledUserRow,
  type StoredUsers,
  type UserRecord,
  type UserRollupKey,
  type UserRollupTable,
  type UserRollupValue,
} from '../user-rollup-batch.js';
// The type itself, not ./database.js's alias: the migrations import this file, and database.ts them.
type Db = Database.Database;

/** The per-user rollup writer of one connection; call each method inside the transaction that wrote the records. */
export interface SqliteUserRollup {
  /** Records just inserted (only those the insert added: a redelivered id is not one). */
  added(rows: readonly UserRecord[]): void;
  /** Records just deleted. */
  removed(rows: readonly UserRecord[]): void;
}

/** The statements that read and write one table's rows. */
function rowStatements(db: Db, t: UserRollupTable) {
  const key = `dataset_id = ? AND ${t.column} = ? AND source = ? AND type = ? AND method = ?`;
  return {
    get: db.prepare(`SELECT records, users, members FROM ${t.table} WHERE ${key}`),
    put: db.prepare(`INSERT OR REPLACE INTO ${t.table} (dataset_id, ${t.column}, source, type, method, records, users, members) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    drop: db.prepare(`DELETE FROM ${t.table} WHERE ${key}`),
  };
}

const keyParams = (k: UserRollupKey): unknown[] => [k.datasetId, k.start, k.source, k.type, k.method];

/** Writes `value` as the row of `key` (null: deletes it). */
function write(statements: ReturnType<typeof rowStatements>, key: UserRollupKey, value: UserRollupValue | null): void {
  if (value) statements.put.run(...keyParams(key), value.records, value.users, value.members);
  else statements.drop.run(...keyParams(key));
}

/** The per-user rollup writer of `db`. */
export function sqliteUserRollup(db: Db): SqliteUserRollup {
  // One statement for a batch's users, not one per user.
  const ordinalsOf = db.prepare(`SELECT user_id AS user, ordinal FROM ${USER_ORDINALS} WHERE dataset_id = ? AND user_id IN (SELECT value FROM json_each(?))`);
  const nextOrdinal = db.prepare(`SELECT COALESCE(MAX(ordinal) + 1, 0) FROM ${USER_ORDINALS} WHERE dataset_id = ?`).pluck();
  const addOrdinal = db.prepare(`INSERT INTO ${USER_ORDINALS} (dataset_id, user_id, ordinal) VALUES (?, ?, ?)`);
  const rows = new Map(USER_ROLLUP_TABLES.map((t) => [t, rowStatements(db, t)]));
  // A day rebuilt from its hours: the hours whose records fall in the day (integer division, as the keys).
  const hoursOfDay = db.prepare(
    `SELECT records, users, members FROM ${USER_HOURLY.table} WHERE dataset_id = ? AND source = ? AND type = ? AND method = ?
       AND hour > ? AND hour < ? AND (hour / ${USER_DAILY.periodMs}) * ${USER_DAILY.periodMs} = ?`,
  );
  // The users of an hour's records, by the shape of its condition (source, ANY or not).
  const rawOrdinals = new Map<string, Statement>();

  /** The ordinal of each user of `records`, assigning the missing ones. */
  const ordinals = (records: readonly UserRecord[]): Map<string, Map<string, number>> => {
    const out = new Map<string, Map<string, number>>();
    for (const [datasetId, users] of usersByDataset(records)) {
      const known = ordinalsOf.all(datasetId, JSON.stringify([...users])) as { user: string; ordinal: number }[];
      const of = new Map(known.map((k) => [k.user, k.ordinal]));
      let next: number | undefined;
      for (const user of users) {
        let ordinal = of.get(user);
        if (ordinal === undefined) {
          ordinal = next ??= nextOrdinal.get(datasetId) as number;
          next++;
          addOrdinal.run(datasetId, user, ordinal);
        }
        of.set(user, ordinal);
      }
      out.set(datasetId, of);
    }
    return out;
  };

  /** An hour's row as its remaining records give it. */
  const hourFromRecords = (key: UserRollupKey): UserRollupValue | null => {
    const { sql, params } = keyCondition(userSourceTable(key.source), USER_HOURLY, key);
    const src = userSourceTable(key.source);
    const text = `SELECT d.ordinal FROM ${src.table} q JOIN ${USER_ORDINALS} d ON d.dataset_id = q.dataset_id AND d.user_id = q.user_id WHERE ${sql}`;
    const statement = rawOrdinals.get(text) ?? rawOrdinals.set(text, db.prepare(text).pluck()).get(text)!;
    const found = statement.all(...params) as number[];
    return rebuiltUsers(found.length, found);
  };

  /** A day's row as its hours give it. */
  const dayFromHours = (key: UserRollupKey): UserRollupValue | null => {
    const hours = hoursOfDay.all(key.datasetId, key.source, key.type, key.method, key.start - USER_DAILY.periodMs, key.start + USER_DAILY.periodMs, key.start) as StoredUsers[];
    const records = hours.reduce((sum, h) => sum + Number(h.records), 0);
    return rebuiltUsers(records, unionOf(hours.map((h) => h.members)));
  };

  return {
    added(records) {
      const of = ordinals(records);
      for (const [t, s] of rows) {
        for (const d of userDeltas(records, t)) {
          const users = [...d.users].map((u) => of.get(d.datasetId)!.get(u)!);
          write(s, d, mergedUsers(s.get.get(...keyParams(d)) as StoredUsers | undefined, d.records, users));
        }
      }
    },
    removed(records) {
      // Hours first: the days are rebuilt from them.
      for (const d of userDeltas(records, USER_HOURLY)) write(rows.get(USER_HOURLY)!, d, hourFromRecords(d));
      for (const d of userDeltas(records, USER_DAILY)) write(rows.get(USER_DAILY)!, d, dayFromHours(d));
    },
  };
}

/**
 * Fills the per-user rollups and the user ordinals from the records already stored (the
 * migration that adds them): each source's records with a user walked once by dataset and time,
 * a day at a time (better-sqlite3 runs no other statement while an iterator is open).
 */
export function fillUserRollups(db: Db): void {
  const ordinals = new UserOrdinals();
  const addOrdinal = db.prepare(`INSERT INTO ${USER_ORDINALS} (dataset_id, user_id, ordinal) VALUES (?, ?, ?)`);
  const rows = new Map(USER_ROLLUP_TABLES.map((t) => [t, rowStatements(db, t)]));
  const put = (done: readonly FilledUserRow[]): void => {
    for (const r of done) write(rows.get(r.table)!, r.key, r.value);
  };
  for (const src of USER_SOURCES) {
    const fill = new UserRollupFill();
    const walk = db.prepare(fillWalkSql(src));
    for (const { datasetId, lo, hi } of db.prepare(fillBoundsSql(src)).all() as { datasetId: string; lo: number; hi: number }[]) {
      for (let at = Number(lo); at <= Number(hi); at += FILL_WINDOW_MS) {
        for (const r of walk.all(datasetId, at, at + FILL_WINDOW_MS) as Omit<UserRecord, 'source'>[]) {
          const { ordinal, assigned } = ordinals.ordinalOf(r.datasetId, r.userId!);
          if (assigned) addOrdinal.run(r.datasetId, r.userId, ordinal);
          put(fill.push({ ...r, source: src.source }, ordinal));
        }
      }
    }
    put(fill.finish());
  }
}
