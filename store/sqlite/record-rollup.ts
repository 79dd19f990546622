/**
 * SQLite's side of the record rollups (../record-rollup-batch.ts): answers and recommendations
 * inserted or deleted, ratings of answers replaced and user events naming a record, applied to the
 * four tables inside the transaction that wrote them. SQLite's single writer makes each read of
 * what is stored, and the upserts after it, atomic.
 */
import type { QueryRating } from '../../core/domain/user-events.js';
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
import {
  countedFlags,
  countedPositions,
  countedRating,
  eventLink,
  LINK_FLAGS_SQL,
  type ClickPositions,
  type LinkFlags,
  type LinkingEvent,
} from '../search-rollup-batch.js';
import { RAG_LINK } from '../event-rollup-batch.js';
import type { Db } from './database.js';
import { sqliteEventLinks } from './event-rollup.js';

/** A user event as the record rollups see it. */
export interface NamedEvent extends LinkingEvent {
  readonly eventName: string;
}

/** The record rollup writer of one connection; call each method inside the transaction that wrote the rows. */
export interface SqliteRecordRollup {
  /** Records of `source` just inserted (`sign` 1) or deleted (-1), with the rating and linked events they have (an answer's also in the user event rollups). */
  records(source: RecordSource, rows: readonly RolledRecord[], sign: 1 | -1): void;
  /** Adds to `into` what storing `rating` changes, read before it is stored. */
  ratingChange(rating: QueryRating, into: RecordChanges): void;
  /** What storing user event `e` changes, read before it is stored (to apply only if it is); undefined: nothing. */
  eventChange(e: NamedEvent): RecordChanges | undefined;
  /** Applies gathered changes. */
  apply(changes: RecordChanges): void;
}

/** The record rollup writer of `db`. */
export function sqliteRecordRollup(db: Db): SqliteRecordRollup {
  const values = RECORD_VALUE_COLUMNS.join(', ');
  const records = RECORD_ROLLUP_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, kind, subtype, ${values}) VALUES (?, ?, ?, ?, ${RECORD_VALUE_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (dataset_id, ${t.column}, kind, subtype) DO UPDATE SET ${RECORD_VALUE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
    ),
    dropEmpty: db.prepare(`DELETE FROM ${t.table} WHERE dataset_id = ? AND ${t.column} = ? AND kind = ? AND subtype = ? AND records <= 0`),
  }));
  const events = RECORD_EVENT_ROLLUP_TABLES.map((t) => ({
    t,
    add: db.prepare(
      `INSERT INTO ${t.table} (dataset_id, ${t.column}, kind, subtype, event_name, events) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (dataset_id, ${t.column}, kind, subtype, event_name) DO UPDATE SET events = events + excluded.events`,
    ),
    dropEmpty: db.prepare(`DELETE FROM ${t.table} WHERE dataset_id = ? AND ${t.column} = ? AND kind = ? AND subtype = ? AND event_name = ? AND events <= 0`),
  }));
  const addTotal = db.prepare(
    `INSERT INTO ${MESSAGE_TOTALS} (dataset_id, user_message, answers) VALUES (?, ?, ?)
     ON CONFLICT (dataset_id, user_message) DO UPDATE SET answers = answers + excluded.answers`,
  );
  const dropEmptyTotal = db.prepare(`DELETE FROM ${MESSAGE_TOTALS} WHERE dataset_id = ? AND user_message = ? AND answers <= 0`);
  const ratingOf = db.prepare('SELECT kind, dataset_id AS datasetId, rating FROM query_ratings WHERE query_id = ?');
  // By the user_events_request index; a record without events (most of them) is one probe.
  const flagsOf = db.prepare(`${LINK_FLAGS_SQL} WHERE request_id = ? GROUP BY request_id, dataset_id`);
  const namesOf = db.prepare(`${LINKED_NAMES_SQL} WHERE request_id = ? ${LINKED_NAMES_GROUP}`);
  const eventLinks = sqliteEventLinks(db);
  const recordOf = new Map(
    RECORD_SOURCES.map((s) => [s, db.prepare(`SELECT dataset_id AS datasetId, created_at AS createdAt, ${s.subtypeColumn} AS subtype FROM ${s.table} WHERE id = ?`)]),
  );

  type RatingRow = { kind: string; datasetId: string; rating: number };
  type FlagRow = { dataset_id: string; clicked: number; converted: number; positioned: number; position_sum: number | null };
  type NameRow = { dataset_id: string; event_name: string; n: number };
  const linked = (id: string, datasetId: string): { flags: LinkFlags; positions: ClickPositions } => {
    const rows = flagsOf.all(id) as FlagRow[];
    return { flags: countedFlags(rows, datasetId), positions: countedPositions(rows, datasetId) };
  };
  const rating = (source: RecordSource, id: string, datasetId: string): number | null =>
    source.ratingKind === null ? null : countedRating(ratingOf.get(id) as RatingRow | undefined, datasetId, source.ratingKind);
  /** The stored records named `id`, each with its source. */
  const recordsNamed = (id: string): { source: RecordSource; record: RecordKey }[] =>
    RECORD_SOURCES.flatMap((source) => {
      const row = recordOf.get(source)!.get(id) as Omit<RecordKey, 'kind'> | undefined;
      return row ? [{ source, record: { ...row, kind: source.kind } }] : [];
    });

  const apply = (changes: RecordChanges): void => {
    for (const { t, add, dropEmpty } of records) {
      for (const d of recordDeltas(changes.records, t)) {
        add.run(d.datasetId, d.start, d.kind, d.subtype, ...recordValues(d.counts));
        if (d.counts.records < 0) dropEmpty.run(d.datasetId, d.start, d.kind, d.subtype);
      }
    }
    for (const { t, add, dropEmpty } of events) {
      for (const d of recordEventDeltas(changes.events, t)) {
        add.run(d.datasetId, d.start, d.kind, d.subtype, d.eventName, d.events);
        if (d.events < 0) dropEmpty.run(d.datasetId, d.start, d.kind, d.subtype, d.eventName);
      }
    }
  };

  return {
    records(source, rows, sign) {
      if (rows.length === 0) return;
      const changes = noRecordChanges();
      for (const r of rows) {
        const { flags, positions } = linked(r.id, r.datasetId);
        changes.records.push({ record: r, counts: recordCounts(rating(source, r.id, r.datasetId), flags, positions, sign) });
        changes.events.push(...linkedNameChanges(namesOf.all(r.id) as NameRow[], r, sign));
      }
      apply(changes);
      if (source.kind === RAG_LINK.kind) eventLinks(RAG_LINK, rows, sign);
      for (const d of messageTotalDeltas(rows, sign)) {
        addTotal.run(d.datasetId, d.message, d.answers);
        if (sign < 0) dropEmptyTotal.run(d.datasetId, d.message);
      }
    },
    ratingChange(r, into) {
      for (const { source, record } of recordsNamed(r.queryId)) {
        if (source.ratingKind === null) continue;
        const before = countedRating(ratingOf.get(r.queryId) as RatingRow | undefined, record.datasetId, source.ratingKind);
        const after = countedRating(r, record.datasetId, source.ratingKind);
        if (before !== after) into.records.push({ record, counts: ratingCounts(before, after) });
      }
    },
    eventChange(e) {
      if (typeof e.requestId !== 'string') return undefined;
      let into: RecordChanges | undefined;
      for (const { record } of recordsNamed(e.requestId)) {
        into ??= noRecordChanges();
        if (record.datasetId !== e.datasetId) continue;
        into.events.push({ record, eventName: e.eventName, events: 1 });
        const link = eventLink(linked(e.requestId, e.datasetId).flags, e);
        if (link) into.records.push({ record, counts: linkCounts(link) });
      }
      return into;
    },
    apply,
  };
}
