/**
 * The per-user rollups (issue 15): `searches_per_user`, `messages_per_user` and
 * `recommendations_per_user` divide the records that have a user by their distinct users, per
 * bucket and over the range. A distinct count does not add up across hours, so the rollups keep
 * the set itself: per (dataset, UTC hour or day, source, type, method) the records with a user and
 * the exact set of those users (./user-set.ts), each user a small integer, its ordinal in the
 * dataset (`analytics_users`, assigned at first sight). A report unions the sets of its rows
 * (store/reports/user-rollup.ts).
 *
 * - source: `search` (type and method: `search_type`, `search_method`), `rag` (type: `rag_type`)
 *   or `recommendation` (type: `recommendation_type`); records have method ''.
 * - Each record counts in the row of its own (type, method) and in the row ({@link ANY}, ANY) of
 *   its source, so a report without a type or method filter reads one row per period, whose
 *   `users` column is already the count.
 *
 * Both stores keep them in the transaction that inserts or deletes the records (SQLite's single
 * writer; PostgreSQL under the rollup advisory lock, store/postgres/rollup-reads.ts), so each row
 * always holds exactly its key's records and users, and a key with no record with a user has no
 * row. An insert merges its users into the stored set. A delete (retention purge) cannot take a
 * user out of a set without knowing whether the user has other records there, so it rebuilds what
 * it touched: an hour from its remaining raw records (at most an hour's), a day from its hours'
 * sets.
 */
import { DAY_MS, HOUR_MS, periodStart, type PeriodTable } from './search-rollup-batch.js';
import { addToDense, decodeUserSet, encodeUserSet, unionSorted } from './user-set.js';

/** The records whose users the rollups count. */
export type UserSource = 'search' | 'rag' | 'recommendation';

/** A record table: its source, and the columns that are its rows' type and method. */
export interface UserSourceTable {
  readonly source: UserSource;
  readonly table: 'search_queries' | 'rag_queries' | 'recommendation_queries';
  readonly typeColumn: 'search_type' | 'rag_type' | 'recommendation_type';
  /** Null: the records have no method (rows keep ''). */
  readonly methodColumn: 'search_method' | null;
}

/** The three record tables. */
export const USER_SOURCES: readonly UserSourceTable[] = [
  { source: 'search', table: 'search_queries', typeColumn: 'search_type', methodColumn: 'search_method' },
  { source: 'rag', table: 'rag_queries', typeColumn: 'rag_type', methodColumn: null },
  { source: 'recommendation', table: 'recommendation_queries', typeColumn: 'recommendation_type', methodColumn: null },
];

/** The table of `source`. */
export const userSourceTable = (source: UserSource): UserSourceTable => USER_SOURCES.find((s) => s.source === source)!;

/** The type and method of the rows counting every record of a source. No search type, method or record type is '*' (they are enums). */
export const ANY = '*';

/** One per-user rollup table. */
export type UserRollupTable = PeriodTable<'user_rollup_hourly' | 'user_rollup_daily'>;
/** The hourly per-user rollup. */
export const USER_HOURLY: UserRollupTable = { table: 'user_rollup_hourly', column: 'hour', periodMs: HOUR_MS };
/** The daily per-user rollup. */
export const USER_DAILY: UserRollupTable = { table: 'user_rollup_daily', column: 'day', periodMs: DAY_MS };
/** Both, hourly first: a delete rebuilds the days from the hours. */
export const USER_ROLLUP_TABLES: readonly UserRollupTable[] = [USER_HOURLY, USER_DAILY];

/** The user ordinals of each dataset: `(dataset_id, user_id) -> ordinal`, ordinals from 0 in order of first sight. */
export const USER_ORDINALS = 'analytics_users';

/** A record inserted or deleted, as the per-user rollups see it. */
export interface UserRecord {
  readonly datasetId: string;
  readonly createdAt: number;
  readonly source: UserSource;
  readonly type: string;
  /** '' for records without one. */
  readonly method: string;
  readonly userId: string | null;
}

/** The key of a per-user rollup row. */
export interface UserRollupKey {
  readonly datasetId: string;
  readonly start: number;
  readonly source: UserSource;
  readonly type: string;
  readonly method: string;
}

/** What a batch of inserted records adds to one row: its records with a user, and those users. */
export interface UserDelta extends UserRollupKey {
  records: number;
  readonly users: Set<string>;
}

/** A row's stored value. */
export interface StoredUsers {
  readonly records: number;
  readonly users: number;
  readonly members: Uint8Array;
}

/** A row's value to write. */
export interface UserRollupValue {
  readonly records: number;
  readonly users: number;
  readonly members: Uint8Array;
}

/** A key as one string (NUL never occurs in ids, types or methods), for grouping and for one sort order. */
const keyText = (datasetId: string, start: number, source: string, type: string, method: string): string => `${datasetId}\u0000${start}\u0000${source}\u0000${type}\u0000${method}`;
const keyOf = (k: UserRollupKey): string => keyText(k.datasetId, k.start, k.source, k.type, k.method);

/** The keys of `table` that record `r` counts in: its own (type, method) and its source's (ANY, ANY). */
function keysOf(r: UserRecord, table: UserRollupTable): UserRollupKey[] {
  const start = periodStart(r.createdAt, table.periodMs);
  return [
    { datasetId: r.datasetId, start, source: r.source, type: r.type, method: r.method },
    { datasetId: r.datasetId, start, source: r.source, type: ANY, method: ANY },
  ];
}

/** What the records with a user among `rows` add to the rows of `table`, in key order (so concurrent writers lock rows in one order). */
export function userDeltas(rows: readonly UserRecord[], table: UserRollupTable): UserDelta[] {
  const byKey = new Map<string, UserDelta>();
  const add = (id: string, r: UserRecord, start: number, type: string, method: string): void => {
    let d = byKey.get(id);
    if (!d) byKey.set(id, (d = { datasetId: r.datasetId, start, source: r.source, type, method, records: 0, users: new Set() }));
    d.records++;
    d.users.add(r.userId!);
  };
  for (const r of rows) {
    if (r.userId === null) continue;
    const start = periodStart(r.createdAt, table.periodMs);
    add(keyText(r.datasetId, start, r.source, r.type, r.method), r, start, r.type, r.method);
    add(keyText(r.datasetId, start, r.source, ANY, ANY), r, start, ANY, ANY);
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The distinct user ids of the records with a user among `rows`, per dataset. */
export function usersByDataset(rows: readonly UserRecord[]): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.userId === null) continue;
    const users = by.get(r.datasetId) ?? by.set(r.datasetId, new Set()).get(r.datasetId)!;
    users.add(r.userId);
  }
  return by;
}

/** `stored` (none: a new row) with `records` more records and the users `ordinals` (any order, may repeat). */
export function mergedUsers(stored: StoredUsers | undefined, records: number, ordinals: readonly number[]): UserRollupValue {
  // A day's set of most of the dataset's users is a bitset: set the bits in place (most batches' users are in it already).
  const dense = stored && addToDense(stored.members, ordinals);
  if (dense) return { records: Number(stored.records) + records, users: Number(stored.users) + dense.added, members: dense.encoded };
  const added = [...new Set(ordinals)].sort((a, b) => a - b);
  const members = stored ? unionSorted(decodeUserSet(stored.members), added) : added;
  return { records: Number(stored?.records ?? 0) + records, users: members.length, members: encodeUserSet(members) };
}

/** A row rebuilt from its records' users (ordinals, any order, may repeat); null: no record with a user is left. */
export function rebuiltUsers(records: number, ordinals: readonly number[]): UserRollupValue | null {
  if (records <= 0) return null;
  const members = [...new Set(ordinals)].sort((a, b) => a - b);
  return { records, users: members.length, members: encodeUserSet(members) };
}

/** The union of stored sets (a day rebuilt from its hours). */
export function unionOf(sets: readonly Uint8Array[]): number[] {
  return sets.reduce<number[]>((all, s) => unionSorted(all, decodeUserSet(s)), []);
}

/**
 * The SQL condition (no placeholders but `?`, in order of the returned params) on a record `q` of
 * `src` that counts in the row of `key` of `table`: its dataset, period and, unless ANY, type and
 * method. The period is the integer division the rollups key by (for negative times too), with a
 * range around it for the (dataset_id, created_at) index.
 */
export function keyCondition(src: UserSourceTable, table: UserRollupTable, key: UserRollupKey): { sql: string; params: unknown[] } {
  const p = table.periodMs;
  const parts = ['q.dataset_id = ?', 'q.created_at > ?', 'q.created_at < ?', `(q.created_at / ${p}) * ${p} = ?`, 'q.user_id IS NOT NULL'];
  const params: unknown[] = [key.datasetId, key.start - p, key.start + p, key.start];
  if (key.type !== ANY) {
    parts.push(`q.${src.typeColumn} = ?`);
    params.push(key.type);
    if (src.methodColumn) {
      parts.push(`q.${src.methodColumn} = ?`);
      params.push(key.method);
    }
  }
  return { sql: parts.join(' AND '), params };
}

/** The columns of a `src` record a SELECT names for {@link UserRecord} but its source (aliases quoted: PostgreSQL folds them to lower case). */
export const userRecordColumns = (src: UserSourceTable): string =>
  `dataset_id AS "datasetId", created_at AS "createdAt", ${src.typeColumn} AS "type", ${src.methodColumn ?? "''"} AS "method", user_id AS "userId"`;

/** How much of a dataset's records a fill reads per statement. */
export const FILL_WINDOW_MS = DAY_MS;

/** Each dataset's first and last record time among `src`'s records with a user (`datasetId`, `lo`, `hi`), by dataset. */
export const fillBoundsSql = (src: UserSourceTable): string =>
  `SELECT dataset_id AS "datasetId", MIN(created_at) AS lo, MAX(created_at) AS hi FROM ${src.table} WHERE user_id IS NOT NULL GROUP BY dataset_id ORDER BY dataset_id`;

/** One window of a dataset's records with a user, in time order (params: dataset, from, to; placeholders `?`). */
export const fillWalkSql = (src: UserSourceTable): string =>
  `SELECT ${userRecordColumns(src)} FROM ${src.table} WHERE dataset_id = ? AND created_at >= ? AND created_at < ? AND user_id IS NOT NULL ORDER BY created_at`;

/** One row a fill has finished. */
export interface FilledUserRow {
  readonly table: UserRollupTable;
  readonly key: UserRollupKey;
  readonly value: UserRollupValue;
}

/**
 * The ordinals of each dataset's users while a fill walks the records: those already stored
 * (`known`, empty on a first fill) and new ones from the next free ordinal, in order of first sight.
 */
export class UserOrdinals {
  private readonly byDataset = new Map<string, { readonly ids: Map<string, number>; next: number }>();

  /** The ordinal of `userId` in `datasetId`, and whether it was just assigned (to store). */
  ordinalOf(datasetId: string, userId: string): { ordinal: number; assigned: boolean } {
    let users = this.byDataset.get(datasetId);
    if (!users) this.byDataset.set(datasetId, (users = { ids: new Map(), next: 0 }));
    const known = users.ids.get(userId);
    if (known !== undefined) return { ordinal: known, assigned: false };
    const ordinal = users.next++;
    users.ids.set(userId, ordinal);
    return { ordinal, assigned: true };
  }
}

/**
 * Builds the rows of both tables from records walked in (source, dataset, created_at) order, as a
 * migration fills them: a period's rows are finished when the walk leaves the period, so only one
 * hour's and one day's users are held at a time.
 */
export class UserRollupFill {
  private readonly open = USER_ROLLUP_TABLES.map((table) => ({ table, at: '', rows: new Map<string, { key: UserRollupKey; records: number; ordinals: number[] }>() }));

  /** Adds a record with a user (its ordinal); returns the rows of the periods it left behind. */
  push(r: UserRecord, ordinal: number): FilledUserRow[] {
    const done: FilledUserRow[] = [];
    for (const o of this.open) {
      const at = `${r.source}\u0000${r.datasetId}\u0000${periodStart(r.createdAt, o.table.periodMs)}`;
      if (at !== o.at) {
        done.push(...this.close(o));
        o.at = at;
      }
      for (const key of keysOf(r, o.table)) {
        const id = keyOf(key);
        const row = o.rows.get(id) ?? o.rows.set(id, { key, records: 0, ordinals: [] }).get(id)!;
        row.records++;
        row.ordinals.push(ordinal);
      }
    }
    return done;
  }

  /** The rows still open, once the walk is over. */
  finish(): FilledUserRow[] {
    return this.open.flatMap((o) => this.close(o));
  }

  private close(o: (typeof this.open)[number]): FilledUserRow[] {
    const done = [...o.rows.values()].map((row) => ({ table: o.table, key: row.key, value: rebuiltUsers(row.records, row.ordinals)! }));
    o.rows.clear();
    return done;
  }
}

/** Searches as the per-user rollups see them (`userId` from the row, absent: none). */
export const searchUsers = (rows: readonly { datasetId: string; createdAt: number; searchType: string; searchMethod: string; userId?: string | null }[]): UserRecord[] =>
  rows.map((r) => ({ datasetId: r.datasetId, createdAt: Number(r.createdAt), source: 'search', type: r.searchType, method: r.searchMethod, userId: r.userId ?? null }));

/** Answers or recommendations (`source`) as the per-user rollups see them. */
export const recordUsers = (source: 'rag' | 'recommendation', rows: readonly { datasetId: string; createdAt: number; subtype: string; userId?: string | null }[]): UserRecord[] =>
  rows.map((r) => ({ datasetId: r.datasetId, createdAt: Number(r.createdAt), source, type: r.subtype, method: '', userId: r.userId ?? null }));
