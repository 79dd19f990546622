/**
 * PostgreSQL's side of the user event rollups (../event-rollup-batch.ts): a batch's stored events
 * added to both tables inside the transaction that stored them, each with the links it has to a
 * stored search or answer, one upsert per table, keys in sorted order; and the links of stored
 * events to searches or answers just stored or deleted, in the transaction that wrote those.
 *
 * A link is counted by whichever of the event and its record is stored second, so the two writers
 * must not miss each other: both read under the rollup lock (./rollup-reads.ts), the records'
 * writers after their rows are written (./search-rollup.ts, ./record-rollup.ts) and a user events
 * batch naming a request before it stores its events (insertEventsWithRollup); whichever takes the
 * lock second sees the other's committed rows. The upserts need no lock: they only add. Rows are
 * locked hourly table first, keys in sorted order, by every writer (batches naming no request hold
 * no advisory lock and lock rows in that same order), so two writers wait rather than deadlock.
 */
import {
  EVENT_LINK_TARGETS,
  EVENT_REAL_COLUMNS,
  EVENT_ROLLUP_TABLES,
  EVENT_VALUE_COLUMNS,
  eventRollupDeltas,
  eventUpsertSet,
  eventValues,
  LINKED_EVENTS_SQL,
  linkedEventDeltas,
  linkedEventsOf,
  type EventDelta,
  type EventLinkTarget,
  type EventRollupTable,
  type LinkedEventRow,
  type LinkKind,
  type RolledEvent,
} from '../event-rollup-batch.js';
import type { Tx } from './database.js';
import { groupedBy } from './rollup-reads.js';

/** The columns of `user_events` a RETURNING clause gives {@link addEventRollup}. */
export const EVENT_ROLLUP_RETURNING =
  'RETURNING id, dataset_id AS "datasetId", created_at AS "createdAt", event_type AS "eventType", event_name AS "eventName", revenue, request_id AS "requestId"';

/** A user event just stored, as RETURNING gave it. */
export interface StoredUserEvent extends Omit<RolledEvent, 'links'> {
  readonly requestId: string | null;
}

/** Adds each table's `deltas` to its rows. */
async function writeDeltas(tx: Tx, deltasOf: (t: EventRollupTable) => EventDelta[]): Promise<void> {
  for (const t of EVENT_ROLLUP_TABLES) {
    const deltas = deltasOf(t);
    if (deltas.length === 0) continue;
    const values = deltas.map(eventValues);
    await tx.run(
      `INSERT INTO ${t.table} AS r (dataset_id, ${t.column}, event_type, event_name, ${EVENT_VALUE_COLUMNS.join(', ')})
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], ${EVENT_VALUE_COLUMNS.map((c, i) => `$${i + 5}::${EVENT_REAL_COLUMNS.has(c) ? 'float8' : 'bigint'}[]`).join(', ')})
       ON CONFLICT (dataset_id, ${t.column}, event_type, event_name) DO UPDATE SET ${eventUpsertSet('r.')}`,
      [
        deltas.map((d) => d.datasetId),
        deltas.map((d) => d.start),
        deltas.map((d) => d.eventType),
        deltas.map((d) => d.eventName),
        ...EVENT_VALUE_COLUMNS.map((_, i) => values.map((v) => v[i])),
      ],
    );
  }
}

/**
 * Adds events just stored in `tx` (as RETURNING gave them) to both rollups, with their links to
 * the searches and answers stored now. When one names a request, `tx` must hold the rollup lock
 * (insertEventsWithRollup takes it).
 */
export async function addEventRollup(tx: Tx, events: readonly StoredUserEvent[]): Promise<void> {
  if (events.length === 0) return;
  const ids = [...new Set(events.flatMap((e) => (e.requestId === null ? [] : [e.requestId])))];
  const named =
    ids.length === 0
      ? new Map<string, { id: string; dataset_id: string; kind: LinkKind }[]>()
      : groupedBy(
          await tx.all<{ id: string; dataset_id: string; kind: LinkKind }>(
            EVENT_LINK_TARGETS.map((t) => `SELECT id, dataset_id, '${t.kind}' AS kind FROM ${t.table} WHERE id = ANY($1::text[])`).join(' UNION ALL '),
            [ids],
          ),
          (r) => r.id,
        );
  const stored = events.map(
    (e): RolledEvent => ({
      datasetId: e.datasetId,
      createdAt: Number(e.createdAt),
      eventType: e.eventType,
      eventName: e.eventName,
      revenue: Number(e.revenue),
      links: e.requestId === null ? [] : (named.get(e.requestId) ?? []).filter((r) => r.dataset_id === e.datasetId).map((r) => r.kind),
    }),
  );
  await writeDeltas(tx, (t) => eventRollupDeltas(stored, t));
}

/**
 * Counts (`sign` 1) or uncounts (-1) the links of the stored events to records of `target` just
 * stored or deleted in `tx`; call it under the rollup lock, after the records were written.
 */
export async function addEventLinks(tx: Tx, target: EventLinkTarget, records: readonly { id: string; datasetId: string }[], sign: 1 | -1): Promise<void> {
  if (records.length === 0) return;
  const rows = groupedBy(
    await tx.all<LinkedEventRow>(`${LINKED_EVENTS_SQL} WHERE request_id = ANY($1::text[])`, [records.map((r) => r.id)]),
    (r) => r.request_id,
  );
  const linked = records.flatMap((r) => linkedEventsOf(rows.get(r.id) ?? [], r.datasetId));
  if (linked.length > 0) await writeDeltas(tx, (t) => linkedEventDeltas(linked, target, sign, t));
}
