/**
 * PostgreSQL's side of the per-user rollups (../user-rollup-batch.ts): records inserted or deleted,
 * applied to both tables inside the transaction that wrote them, and the migration's fill.
 *
 * Ordinals are drawn from the dataset's highest and each row is read, merged and written back, so
 * these writers must not interleave: they run under the rollup advisory lock, which the search and
 * record rollup writers of the same transactions already hold (./rollup-reads.ts; taken here too,
 * re-entrantly, so the order of the calls does not matter).
 */
import { numberPlaceholders } from '../reports/report-sql.js';
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
import type { Sql, Tx } from './database.js';
import { lockRollups } from './rollup-reads.js';

const KEY_COLUMNS = (t: UserRollupTable): string => `dataset_id, ${t.column}, source, type, method`;
const KEY_ARRAYS = '$1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]';
const keyArrays = (keys: readonly UserRollupKey[]): unknown[][] => [
  keys.map((k) => k.datasetId),
  keys.map((k) => k.start),
  keys.map((k) => k.source),
  keys.map((k) => k.type),
  keys.map((k) => k.method),
];
const keyOf = (k: UserRollupKey): string => JSON.stringify([k.datasetId, Number(k.start), k.source, k.type, k.method]);

/** Writes each row of `table` (a null value deletes it), two statements whatever the count. */
async function writeRows(sql: Sql, table: UserRollupTable, rows: readonly { key: UserRollupKey; value: UserRollupValue | null }[]): Promise<void> {
  const put = rows.filter((r) => r.value !== null);
  const drop = rows.filter((r) => r.value === null).map((r) => r.key);
  if (put.length > 0) {
    await sql.run(
      `INSERT INTO ${table.table} (${KEY_COLUMNS(table)}, records, users, members)
       SELECT * FROM unnest(${KEY_ARRAYS}, $6::bigint[], $7::bigint[], $8::bytea[])
       ON CONFLICT (${KEY_COLUMNS(table)}) DO UPDATE SET records = excluded.records, users = excluded.users, members = excluded.members`,
      [
        ...keyArrays(put.map((r) => r.key)),
        put.map((r) => r.value!.records),
        put.map((r) => r.value!.users),
        put.map((r) => Buffer.from(r.value!.members.buffer, r.value!.members.byteOffset, r.value!.members.byteLength)),
      ],
    );
  }
  if (drop.length > 0) {
    await sql.run(`DELETE FROM ${table.table} t USING unnest(${KEY_ARRAYS}) AS k(${KEY_COLUMNS(table)}) WHERE (${KEY_COLUMNS(table).replace(/(\w+)/g, 't.$1')}) = (${KEY_COLUMNS(table).replace(/(\w+)/g, 'k.$1')})`, keyArrays(drop));
  }
}

/** The ordinal of each user of `records` per dataset, assigning the missing ones (under the lock). */
async function ordinalsOf(tx: Tx, records: readonly UserRecord[]): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const [datasetId, users] of usersByDataset(records)) {
    const ids = [...users];
    const known = await tx.all<{ user_id: string; ordinal: number }>(`SELECT user_id, ordinal FROM ${USER_ORDINALS} WHERE dataset_id = $1 AND user_id = ANY($2::text[])`, [datasetId, ids]);
    const of = new Map(known.map((r) => [r.user_id, Number(r.ordinal)]));
    const missing = ids.filter((u) => !of.has(u));
    if (missing.length > 0) {
      const next = Number((await tx.get<{ next: number }>(`SELECT COALESCE(MAX(ordinal) + 1, 0) AS next FROM ${USER_ORDINALS} WHERE dataset_id = $1`, [datasetId]))!.next);
      missing.forEach((u, i) => of.set(u, next + i));
      await tx.run(`INSERT INTO ${USER_ORDINALS} (dataset_id, user_id, ordinal) SELECT $1, * FROM unnest($2::text[], $3::bigint[])`, [datasetId, missing, missing.map((u) => of.get(u)!)]);
    }
    out.set(datasetId, of);
  }
  return out;
}

/** Applies records just inserted by `tx` (only those the insert added) to the per-user rollups. */
export async function addUserRollup(tx: Tx, records: readonly UserRecord[]): Promise<void> {
  if (!records.some((r) => r.userId !== null)) return;
  await lockRollups(tx);
  const of = await ordinalsOf(tx, records);
  for (const t of USER_ROLLUP_TABLES) {
    const deltas = userDeltas(records, t);
    const stored = await tx.all<StoredUsers & { dataset_id: string; start: number; source: string; type: string; method: string }>(
      `SELECT r.dataset_id, r.${t.column} AS start, r.source, r.type, r.method, r.records, r.users, r.members FROM ${t.table} r
       JOIN unnest(${KEY_ARRAYS}) AS k(${KEY_COLUMNS(t)}) ON (${KEY_COLUMNS(t).replace(/(\w+)/g, 'r.$1')}) = (${KEY_COLUMNS(t).replace(/(\w+)/g, 'k.$1')})`,
      keyArrays(deltas),
    );
    const byKey = new Map(stored.map((s) => [keyOf({ datasetId: s.dataset_id, start: s.start, source: s.source as UserRecord['source'], type: s.type, method: s.method }), s]));
    await writeRows(
      tx,
      t,
      deltas.map((d) => ({ key: d, value: mergedUsers(byKey.get(keyOf(d)), d.records, [...d.users].map((u) => of.get(d.datasetId)!.get(u)!)) })),
    );
  }
}

/** Applies records just deleted by `tx` to the per-user rollups: the hours they touched rebuilt from their remaining records, then the days from their hours. */
export async function removeUserRollup(tx: Tx, records: readonly UserRecord[]): Promise<void> {
  if (!records.some((r) => r.userId !== null)) return;
  await lockRollups(tx);
  const hours: { key: UserRollupKey; value: UserRollupValue | null }[] = [];
  for (const key of userDeltas(records, USER_HOURLY)) {
    const src = userSourceTable(key.source);
    const { sql, params } = keyCondition(src, USER_HOURLY, key);
    const found = await tx.all<{ ordinal: number }>(
      numberPlaceholders(`SELECT d.ordinal FROM ${src.table} q JOIN ${USER_ORDINALS} d ON d.dataset_id = q.dataset_id AND d.user_id = q.user_id WHERE ${sql}`),
      params,
    );
    hours.push({ key, value: rebuiltUsers(found.length, found.map((f) => Number(f.ordinal))) });
  }
  await writeRows(tx, USER_HOURLY, hours);
  const days: { key: UserRollupKey; value: UserRollupValue | null }[] = [];
  const d = USER_DAILY.periodMs;
  for (const key of userDeltas(records, USER_DAILY)) {
    const of = await tx.all<StoredUsers>(
      `SELECT records, users, members FROM ${USER_HOURLY.table} WHERE dataset_id = $1 AND source = $2 AND type = $3 AND method = $4
         AND hour > $5 AND hour < $6 AND (hour / ${d}) * ${d} = $7`,
      [key.datasetId, key.source, key.type, key.method, key.start - d, key.start + d, key.start],
    );
    days.push({ key, value: rebuiltUsers(of.reduce((sum, h) => sum + Number(h.records), 0), unionOf(of.map((h) => h.members))) });
  }
  await writeRows(tx, USER_DAILY, days);
}

/**
 * Fills the per-user rollups and the user ordinals from the records already stored (the migration
 * that adds them): each source's records with a user walked once by dataset and time, a day at a
 * time, as SQLite's fill does.
 */
export async function fillUserRollups(sql: Sql): Promise<void> {
  const ordinals = new UserOrdinals();
  for (const src of USER_SOURCES) {
    const fill = new UserRollupFill();
    const walk = numberPlaceholders(fillWalkSql(src));
    for (const { datasetId, lo, hi } of await sql.all<{ datasetId: string; lo: number; hi: number }>(fillBoundsSql(src))) {
      for (let at = Number(lo); at <= Number(hi); at += FILL_WINDOW_MS) {
        const done: FilledUserRow[] = [];
        const assigned: { user: string; ordinal: number }[] = [];
        for (const r of await sql.all<Omit<UserRecord, 'source'>>(walk, [datasetId, at, at + FILL_WINDOW_MS])) {
          const o = ordinals.ordinalOf(r.datasetId, r.userId!);
          if (o.assigned) assigned.push({ user: r.userId!, ordinal: o.ordinal });
          done.push(...fill.push({ ...r, createdAt: Number(r.createdAt), source: src.source }, o.ordinal));
        }
        await storeFilled(sql, datasetId, assigned, done);
      }
    }
    await storeFilled(sql, '', [], fill.finish());
  }
}

/** Stores what one window of a fill assigned and finished. */
async function storeFilled(sql: Sql, datasetId: string, assigned: readonly { user: string; ordinal: number }[], done: readonly FilledUserRow[]): Promise<void> {
  if (assigned.length > 0) {
    await sql.run(`INSERT INTO ${USER_ORDINALS} (dataset_id, user_id, ordinal) SELECT $1, * FROM unnest($2::text[], $3::bigint[])`, [
      datasetId,
      assigned.map((a) => a.user),
      assigned.map((a) => a.ordinal),
    ]);
  }
  for (const t of USER_ROLLUP_TABLES) await writeRows(sql, t, done.filter((r) => r.table === t));
}
