/**
 * PostgreSQL's side of the record rollups (../record-rollup-batch.ts): answers and recommendations
 * inserted or deleted, ratings of answers replaced and user events naming a record, applied to the
 * four tables inside the transaction that wrote them.
 *
 * What a change is depends on what is stored (a record's rating, its flags, the events naming it),
 * so every writer reads that under the search rollups' advisory lock (./search-rollup.ts), taken
 * where the search rollups take it: after a transaction's own records were inserted (before a
 * retention purge deletes them), before ratings or user events are read and stored. Two writers racing on one record then
 * serialize, and whichever comes second sees the other's committed rows. The values themselves
 * are added by upserts in key order.
 */
import {
  linkCounts,
  MESSAGE_TOTALS,
  messageTotalDeltas,
  LINKED_NAMES_GROUP,
  LINKED_NAMES_SQL,
  linkedNameChanges,
  ratingCounts,
  RECORD_EVENT_ROLLUP_TABLES,
  RECORD_ROLLUP_TABLES,
  RECORD_SOURCES,
  RECORD_VALUE_COLUMNS,
  recordCounts,
  recordDeltas,
  recordEventDeltas,
  recordValues,
  noRecordChanges,
  type RecordChanges,
  type RecordKey,
  type RecordSource,
  type RolledRecord,
} from '../record-rollup-batch.js';
import { countedFlags, countedPositions, countedRating, eventLink, flagsAfter, type LinkFlags } from '../search-rollup-batch.js';
import { RAG_LINK } from '../event-rollup-batch.js';
import { pgTextKey } from '../text-keys.js';
import type { Tx } from './database.js';
import { addEventLinks } from './event-rollup.js';
import { flagRowsOf, groupedBy, lockRollups, ratingsOf, type FlagRow, type RatingRow } from './rollup-reads.js';

/** The value columns holding sums of reals; the others are counts. */
const RECORD_REAL_COLUMNS: ReadonlySet<string> = new Set(['rating_sum', 'position_sum']);

/** The columns of a record table a RETURNING clause gives {@link applyRecordRollup}, for `source`. */
export const recordReturning = (source: RecordSource): string =>
  `RETURNING id, dataset_id AS "datasetId", created_at AS "createdAt", ${source.subtypeColumn} AS subtype, user_id AS "userId"${source.kind === 'rag' ? ', user_message AS message' : ''}`;

type NameRow = { request_id: string; dataset_id: string; event_name: string; n: string };

/** The stored records of any source whose id is one of `ids`, by id. */
async function recordsNamed(tx: Tx, ids: readonly string[]): Promise<Map<string, { source: RecordSource; record: RecordKey }[]>> {
  const found: { id: string; source: RecordSource; record: RecordKey }[] = [];
  for (const source of RECORD_SOURCES) {
    const rows = await tx.all<{ id: string; datasetId: string; createdAt: string; subtype: string }>(
      `SELECT id, dataset_id AS "datasetId", created_at AS "createdAt", ${source.subtypeColumn} AS subtype FROM ${source.table} WHERE id = ANY($1::text[])`,
      [ids],
    );
    for (const r of rows) found.push({ id: r.id, source, record: { datasetId: r.datasetId, createdAt: Number(r.createdAt), kind: source.kind, subtype: r.subtype } });
  }
  return groupedBy(found, (f) => f.id);
}

/**
 * Applies records of `source` just inserted (`sign` 1) or deleted (-1) in `tx` (as RETURNING gave
 * them), with the ratings and linked events they have (an answer's also in the user event
 * rollups); takes the rollup lock first.
 */
export async function applyRecordRollup(tx: Tx, source: RecordSource, rows: readonly Omit<RolledRecord, 'kind'>[], sign: 1 | -1): Promise<void> {
  if (rows.length === 0) return;
  await lockRollups(tx);
  const ids = rows.map((r) => r.id);
  const ratings = source.ratingKind === null ? new Map<string, RatingRow>() : await ratingsOf(tx, ids);
  const flags = await flagRowsOf(tx, ids);
  const names = groupedBy(await tx.all<NameRow>(`${LINKED_NAMES_SQL} WHERE request_id = ANY($1::text[]) ${LINKED_NAMES_GROUP}`, [ids]), (r) => r.request_id);
  const changes = noRecordChanges();
  for (const row of rows) {
    const record: RecordKey = { datasetId: row.datasetId, createdAt: Number(row.createdAt), kind: source.kind, subtype: row.subtype };
    const rating = source.ratingKind === null ? null : countedRating(ratings.get(row.id), record.datasetId, source.ratingKind);
    const linked = flags.get(row.id) ?? [];
    changes.records.push({ record, counts: recordCounts(rating, countedFlags(linked, record.datasetId), countedPositions(linked, record.datasetId), sign) });
    changes.events.push(...linkedNameChanges(names.get(row.id) ?? [], record, sign));
  }
  await applyRecordChanges(tx, changes);
  if (source.kind === RAG_LINK.kind) await addEventLinks(tx, RAG_LINK, rows, sign);
  const totals = messageTotalDeltas(
    rows.map((r) => ({ ...r, kind: source.kind })),
    sign,
  );
  if (totals.length === 0) return;
  const keys = [totals.map((d) => d.datasetId), totals.map((d) => d.message)];
  await tx.run(
    `INSERT INTO ${MESSAGE_TOTALS} AS t (dataset_id, user_message, answers) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ON CONFLICT (dataset_id, ${pgTextKey('user_message')}) DO UPDATE SET answers = t.answers + excluded.answers`,
    [...keys, totals.map((d) => d.answers)],
  );
  if (sign < 0) {
    await tx.run(
      `DELETE FROM ${MESSAGE_TOTALS} t USING unnest($1::text[], $2::text[]) AS k(dataset_id, user_message)
       WHERE t.dataset_id = k.dataset_id AND ${pgTextKey('t.user_message')} = ${pgTextKey('k.user_message')} AND t.answers <= 0`,
      keys,
    );
  }
}

/**
 * What storing `ratings` changes for the answers they rate, given the ratings stored before
 * (`before`, read under the lock, as the records are here).
 */
export async function ratingRecordChanges(
  tx: Tx,
  ratings: readonly { queryId: string; kind: string; datasetId: string; rating: number }[],
  before: Map<string, RatingRow>,
): Promise<RecordChanges> {
  const named = await recordsNamed(
    tx,
    ratings.map((r) => r.queryId),
  );
  const changes = noRecordChanges();
  for (const r of ratings) {
    for (const { source, record } of named.get(r.queryId) ?? []) {
      if (source.ratingKind === null) continue;
      const was = countedRating(before.get(r.queryId), record.datasetId, source.ratingKind);
      const is = countedRating(r, record.datasetId, source.ratingKind);
      if (was !== is) changes.records.push({ record, counts: ratingCounts(was, is) });
    }
  }
  return changes;
}

/** A user event as the record rollups see it, with its id as stored. */
export interface NamedStoredEvent {
  readonly id: string;
  readonly datasetId: string;
  readonly eventType: string;
  readonly eventName: string;
  readonly isConversion: boolean | null | undefined;
  readonly requestId: string | null | undefined;
  /** A click's position as stored. */
  readonly position: number | null;
}

/** What the record rollups need read before a batch of user events is stored (under the lock). */
export interface EventRecordState {
  readonly records: Map<string, { source: RecordSource; record: RecordKey }[]>;
  readonly flags: Map<string, FlagRow[]>;
}

/** Reads the records named by `events` and their flags; call under the lock, before storing them. */
export async function eventRecordState(tx: Tx, events: readonly NamedStoredEvent[]): Promise<EventRecordState> {
  const ids = [...new Set(events.flatMap((e) => (typeof e.requestId === 'string' ? [e.requestId] : [])))];
  if (ids.length === 0) return { records: new Map(), flags: new Map() };
  const records = await recordsNamed(tx, ids);
  const named = ids.filter((id) => records.has(id));
  return { records, flags: named.length === 0 ? new Map() : await flagRowsOf(tx, named) };
}

/** What the stored events (`stored`: their ids; an id repeated in the batch counts once, its first event) change. */
export function eventRecordChanges(events: readonly NamedStoredEvent[], stored: ReadonlySet<string>, state: EventRecordState): RecordChanges {
  const changes = noRecordChanges();
  const flags = new Map<string, LinkFlags>();
  const seen = new Set<string>();
  for (const e of events) {
    if (!stored.has(e.id) || seen.has(e.id)) continue;
    seen.add(e.id);
    if (typeof e.requestId !== 'string') continue;
    for (const { source, record } of state.records.get(e.requestId) ?? []) {
      if (record.datasetId !== e.datasetId) continue;
      changes.events.push({ record, eventName: e.eventName, events: 1 });
      const key = `${source.kind}\u0000${e.requestId}`;
      const was = flags.get(key) ?? countedFlags(state.flags.get(e.requestId) ?? [], record.datasetId);
      const link = eventLink(was, e);
      flags.set(key, flagsAfter(was, link));
      if (link) changes.records.push({ record, counts: linkCounts(link) });
    }
  }
  return changes;
}

/** Adds `changes` to the four tables (keys in order) and deletes the rows left without a record. */
export async function applyRecordChanges(tx: Tx, changes: RecordChanges): Promise<void> {
  for (const t of RECORD_ROLLUP_TABLES) {
    const deltas = recordDeltas(changes.records, t);
    if (deltas.length === 0) continue;
    const keys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.start), deltas.map((d) => d.kind), deltas.map((d) => d.subtype)];
    const values = deltas.map((d) => recordValues(d.counts));
    await tx.run(
      `INSERT INTO ${t.table} AS r (dataset_id, ${t.column}, kind, subtype, ${RECORD_VALUE_COLUMNS.join(', ')})
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], ${RECORD_VALUE_COLUMNS.map((c, i) => `$${i + 5}::${RECORD_REAL_COLUMNS.has(c) ? 'float8' : 'bigint'}[]`).join(', ')})
       ON CONFLICT (dataset_id, ${t.column}, kind, subtype) DO UPDATE SET ${RECORD_VALUE_COLUMNS.map((v) => `${v} = r.${v} + excluded.${v}`).join(', ')}`,
      [...keys, ...RECORD_VALUE_COLUMNS.map((_, i) => values.map((v) => v[i]))],
    );
    if (deltas.some((d) => d.counts.records < 0)) {
      await tx.run(
        `DELETE FROM ${t.table} r USING unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS k(dataset_id, start, kind, subtype)
         WHERE r.dataset_id = k.dataset_id AND r.${t.column} = k.start AND r.kind = k.kind AND r.subtype = k.subtype AND r.records <= 0`,
        keys,
      );
    }
  }
  for (const t of RECORD_EVENT_ROLLUP_TABLES) {
    const deltas = recordEventDeltas(changes.events, t);
    if (deltas.length === 0) continue;
    const keys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.start), deltas.map((d) => d.kind), deltas.map((d) => d.subtype), deltas.map((d) => d.eventName)];
    await tx.run(
      `INSERT INTO ${t.table} AS r (dataset_id, ${t.column}, kind, subtype, event_name, events)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[])
       ON CONFLICT (dataset_id, ${t.column}, kind, subtype, event_name) DO UPDATE SET events = r.events + excluded.events`,
      [...keys, deltas.map((d) => d.events)],
    );
    if (deltas.some((d) => d.events < 0)) {
      await tx.run(
        `DELETE FROM ${t.table} r USING unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS k(dataset_id, start, kind, subtype, event_name)
         WHERE r.dataset_id = k.dataset_id AND r.${t.column} = k.start AND r.kind = k.kind AND r.subtype = k.subtype AND r.event_name = k.event_name AND r.events <= 0`,
        keys,
      );
    }
  }
}
