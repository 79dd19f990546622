/** PostgreSQL chunk repository: all-or-nothing batch creates, patch updates, change-log entries. */
import type { ChunkInput, ChunkPatch, ChunkRecord } from '../../core/domain/chunk.js';
import { QuarryError, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { semanticHash } from '../../core/domain/semantic-text.js';
import type { ChunkRepository, ChunkSelector } from '../repository.js';
import { checkTrackingIds, newChunkRecord, patchedChunkRecord } from '../chunk-records.js';
import { chunkFromRow, toJson } from '../rows.js';
import { appendChanges, conflictingTrackingId, datasetTx } from './change-log.js';
import type { PgDb, Row, Sql, Tx } from './database.js';
import { byKeys, datasetIs } from './keyed-reads.js';

/** Columns written from a record, with the type of each (for the arrays that carry a batch). */
const WRITTEN: readonly (readonly [string, string])[] = [
  ['id', 'text'],
  ['dataset_id', 'text'],
  ['tracking_id', 'text'],
  ['chunk_html', 'text'],
  ['link', 'text'],
  ['metadata', 'text'],
  ['tag_set', 'text'],
  ['time_stamp', 'bigint'],
  ['weight', 'double precision'],
  ['image_urls', 'text'],
  ['lat', 'double precision'],
  ['lon', 'double precision'],
  ['num_value', 'double precision'],
  ['semantic_content', 'text'],
  ['fulltext_content', 'text'],
  ['convert_html_to_text', 'integer'],
  ['fulltext_boost', 'text'],
  ['semantic_boost', 'text'],
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
  ['semantic_hash', 'text'],
];
/** The chunk columns every read of records selects. */
export const COLUMNS = WRITTEN.map(([c]) => c).join(', ');

/** Row values of a record (`metadataJson`: its metadata's JSON text, when the input came with it), in {@link WRITTEN} order. */
function rowValues(c: ChunkRecord, metadataJson: string | null = toJson(c.metadata)): unknown[] {
  return [
    c.id,
    c.datasetId,
    c.trackingId,
    c.chunkHtml,
    c.link,
    metadataJson,
    JSON.stringify(c.tagSet),
    c.timeStamp,
    c.weight,
    toJson(c.imageUrls),
    c.location?.lat ?? null,
    c.location?.lon ?? null,
    c.numValue,
    c.semanticContent,
    c.fulltextContent,
    c.convertHtmlToText ? 1 : 0,
    toJson(c.fulltextBoost),
    toJson(c.semanticBoost),
    c.createdAt,
    c.updatedAt,
    // Written with every chunk so the embedding worker finds outdated vectors with one join.
    semanticHash(c),
  ];
}

/** Records as one array per column (the parameters of {@link INSERT} and {@link UPDATE}); `inputs[i]` made `records[i]`, when given. */
function columnsOf(records: readonly ChunkRecord[], inputs?: readonly ChunkInput[]): unknown[][] {
  const out: unknown[][] = WRITTEN.map(() => []);
  records.forEach((r, i) => rowValues(r, inputs?.[i]?.metadataJson).forEach((v, j) => out[j]!.push(v)));
  return out;
}

// A batch travels as one array per column: one statement whatever its size (no 65535-parameter
// limit), with constant text.
const UNNEST = `unnest(${WRITTEN.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')}) AS u(${COLUMNS})`;
const INSERT = `INSERT INTO chunks (${COLUMNS}) SELECT ${COLUMNS} FROM ${UNNEST}`;
const UPDATE = `UPDATE chunks AS c SET ${WRITTEN.slice(2)
  .map(([col]) => `${col} = u.${col}`)
  .join(', ')} FROM ${UNNEST} WHERE c.id = u.id`;

/** The duplicate-tracking-id error of a chunk unique violation that kept racing (see datasetTx). */
const chunkConflict =
  (datasetId: string) =>
  (err: unknown): QuarryError =>
    new QuarryError(
      'duplicate_tracking_id',
      `A chunk with tracking_id "${conflictingTrackingId(err, datasetId)}" already exists in this dataset; nothing from this request was stored (set upsert_by_tracking_id to replace it)`,
      { cause: err },
    );

/** The groups one chunk joins, as a create or patch names them. */
type GroupRefs = Pick<ChunkInput, 'groupIds' | 'groupTrackingIds'>;

/** Group membership of chunks, resolved and written a batch at a time inside a chunk write's transaction. */
export class Membership {
  /**
   * Resolves, for each entry, group ids (which must exist) and group tracking ids (created when
   * missing, once: a later entry naming the same tracking id joins the group an earlier one
   * created) to ids, as SQLite's per-chunk resolve does, with one read of each kind for the batch.
   * Runs inside the caller's transaction so a failure leaves nothing behind.
   */
  async resolve(tx: Sql, datasetId: string, refs: readonly GroupRefs[], now: number): Promise<string[][]> {
    const askedIds = [...new Set(refs.flatMap((r) => r.groupIds ?? []))];
    const askedTids = [...new Set(refs.flatMap((r) => r.groupTrackingIds ?? []))];
    const known = new Set<string>();
    const byTid = new Map<string, string>();
    if (askedIds.length > 0) {
      const rows = await tx.all<{ id: string }>(byKeys('id', 'chunk_groups', 'id'), [datasetId, askedIds]);
      for (const r of rows) known.add(r.id);
    }
    if (askedTids.length > 0) {
      const rows = await tx.all<{ id: string; tracking_id: string }>(
        byKeys('id, tracking_id', 'chunk_groups', 'tracking_id'),
        [datasetId, askedTids],
      );
      for (const r of rows) byTid.set(r.tracking_id, r.id);
    }
    const created: { id: string; tid: string }[] = [];
    const out = refs.map((r) => {
      const ids = new Set<string>();
      for (const id of r.groupIds ?? []) {
        if (!known.has(id)) throw notFound(`group with id ${id} does not exist in this dataset`);
        ids.add(id);
      }
      for (const tid of r.groupTrackingIds ?? []) {
        let id = byTid.get(tid);
        if (id === undefined) {
          id = newId();
          byTid.set(tid, id);
          created.push({ id, tid });
        }
        ids.add(id);
      }
      return [...ids];
    });
    if (created.length > 0) {
      await tx.run(
        `INSERT INTO chunk_groups (id, dataset_id, name, description, tracking_id, metadata, tag_set, created_at, updated_at)
         SELECT u.id, $1::text, u.tid, '', u.tid, NULL, '[]', $2::bigint, $2::bigint FROM unnest($3::text[], $4::text[]) AS u(id, tid)`,
        [datasetId, now, created.map((c) => c.id), created.map((c) => c.tid)],
      );
    }
    return out;
  }

  /** Adds chunks to groups (pairs already members are left as they are). */
  async add(tx: Sql, pairs: readonly { groupId: string; chunkId: string }[], now: number): Promise<void> {
    if (pairs.length === 0) return;
    await tx.run(
      `INSERT INTO chunk_group_members (group_id, chunk_id, created_at)
       SELECT u.group_id, u.chunk_id, $3::bigint FROM unnest($1::text[], $2::text[]) AS u(group_id, chunk_id) ON CONFLICT DO NOTHING`,
      [pairs.map((p) => p.groupId), pairs.map((p) => p.chunkId), now],
    );
  }

  /** Replaces a chunk's groups. */
  async replace(tx: Sql, chunkId: string, groupIds: readonly string[], now: number): Promise<void> {
    await tx.run('DELETE FROM chunk_group_members WHERE chunk_id = $1', [chunkId]);
    await this.add(
      tx,
      groupIds.map((groupId) => ({ groupId, chunkId })),
      now,
    );
  }
}

/** Group membership of every chunk write (it holds no state of its own). */
const membership = new Membership();

/** A chunk's stored identity, all an upsert keeps of it. */
interface Stored {
  readonly id: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The batch write of `createMany` (all or nothing within `tx`, which must hold the dataset's lock
 * from its start: datasetTx): tracking ids checked, rows inserted or replaced, groups joined,
 * change-log entries appended. A file import's batch runs it inside its own transaction (files.ts).
 */
export async function writeChunks(tx: Tx, datasetId: string, inputs: readonly ChunkInput[], upsert: readonly boolean[]): Promise<ChunkRecord[]> {
  const tids = inputs.flatMap((input) => (input.trackingId === undefined || input.trackingId === null ? [] : [input.trackingId]));
  const stored = new Map<string, Stored>();
  if (tids.length > 0) {
    const rows = await tx.all<{ id: string; tracking_id: string; created_at: number; updated_at: number }>(
      byKeys('id, tracking_id, created_at, updated_at', 'chunks', 'tracking_id'),
      [datasetId, tids],
    );
    for (const r of rows) stored.set(r.tracking_id, { id: r.id, createdAt: r.created_at, updatedAt: r.updated_at });
  }
  const existing = checkTrackingIds(inputs, upsert, (tid) => stored.get(tid));
  const now = Date.now();
  const groups = await membership.resolve(tx, datasetId, inputs, now);
  const records = inputs.map((input, i) => newChunkRecord(datasetId, input, existing.get(i), now));
  const fresh = records.filter((_, i) => !existing.has(i));
  const replaced = records.filter((_, i) => existing.has(i));
  if (fresh.length > 0) await tx.run(INSERT, columnsOf(fresh, inputs.filter((_, i) => !existing.has(i))));
  if (replaced.length > 0) await tx.run(UPDATE, columnsOf(replaced, inputs.filter((_, i) => existing.has(i))));
  // An upsert adds the groups it names to those the chunk had (SQLite's add, not replace).
  await membership.add(
    tx,
    records.flatMap((r, i) => groups[i]!.map((groupId) => ({ groupId, chunkId: r.id }))),
    now,
  );
  await appendChanges(
    tx,
    datasetId,
    records.map((r) => ({ chunkId: r.id, op: 'upsert' as const })),
    now,
  );
  return records;
}

/** A chunk of dataset `$1` by its tracking id `$2` (the dataset's value hidden: keyed-reads.ts). */
export const CHUNK_BY_TRACKING_ID = `SELECT ${COLUMNS} FROM chunks WHERE ${datasetIs('$1')} AND tracking_id = $2`;

/** Builds the PostgreSQL chunk repository (no read cache: several processes write, see pg-store.ts). */
export function pgChunks(db: PgDb): ChunkRepository {
  const find = async (on: Sql, datasetId: string, selector: ChunkSelector): Promise<ChunkRecord | undefined> => {
    const row =
      'id' in selector
        ? await on.get(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = $1 AND id = $2`, [datasetId, selector.id])
        : await on.get(CHUNK_BY_TRACKING_ID, [datasetId, selector.trackingId]);
    return row ? chunkFromRow(row) : undefined;
  };

  /** Records of the rows whose `column` is in `keys`, in the order of `keys` (repeats repeated, unknown keys dropped). */
  const findMany = async (datasetId: string, column: 'id' | 'tracking_id', keys: readonly string[]): Promise<ChunkRecord[]> => {
    if (keys.length === 0) return [];
    const rows = await db.all(byKeys(COLUMNS, 'chunks', column), [datasetId, [...new Set(keys)]]);
    const byKey = new Map<string, Row>(rows.map((r) => [r[column] as string, r]));
    return keys.flatMap((k) => {
      const row = byKey.get(k);
      return row ? [chunkFromRow(row)] : [];
    });
  };

  return {
    async createMany(datasetId, inputs, upsert = []) {
      if (inputs.length === 0) return [];
      return datasetTx(db, datasetId, (tx) => writeChunks(tx, datasetId, inputs, upsert), chunkConflict(datasetId));
    },
    async update(datasetId, selector, patch: ChunkPatch) {
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const current = await find(tx, datasetId, selector);
          if (!current) {
            throw notFound(
              'id' in selector
                ? `chunk with id ${selector.id} does not exist in this dataset`
                : `chunk with tracking_id "${selector.trackingId}" does not exist in this dataset`,
            );
          }
          const newTid = patch.newTrackingId;
          if (newTid !== undefined && newTid !== null && newTid !== current.trackingId) {
            if (await tx.get(`SELECT 1 FROM chunks WHERE ${datasetIs('$1')} AND tracking_id = $2`, [datasetId, newTid])) {
              throw new QuarryError(
                'duplicate_tracking_id',
                `Cannot change tracking_id to "${newTid}": another chunk in this dataset already has it`,
              );
            }
          }
          const now = Math.max(Date.now(), current.updatedAt);
          const next = patchedChunkRecord(current, patch, now);
          await tx.run(UPDATE, columnsOf([next]));
          if (patch.groupIds !== undefined || patch.groupTrackingIds !== undefined) {
            const [groups] = await membership.resolve(tx, datasetId, [patch], now);
            await membership.replace(tx, next.id, groups!, now);
          }
          await appendChanges(tx, datasetId, [{ chunkId: next.id, op: 'upsert' }], now);
          return next;
        },
        (err) =>
          new QuarryError(
            'duplicate_tracking_id',
            `Cannot change tracking_id to "${conflictingTrackingId(err, datasetId)}": another chunk in this dataset already has it`,
            { cause: err },
          ),
      );
    },
    async get(datasetId, selector) {
      return find(db, datasetId, selector);
    },
    async getMany(datasetId, ids) {
      return findMany(datasetId, 'id', ids);
    },
    async getManyByTrackingIds(datasetId, trackingIds) {
      return findMany(datasetId, 'tracking_id', trackingIds);
    },
    async delete(datasetId, selector) {
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const row =
            'id' in selector
              ? await tx.get<{ id: string }>('DELETE FROM chunks WHERE dataset_id = $1 AND id = $2 RETURNING id', [datasetId, selector.id])
              : await tx.get<{ id: string }>(`DELETE FROM chunks WHERE ${datasetIs('$1')} AND tracking_id = $2 RETURNING id`, [
                  datasetId,
                  selector.trackingId,
                ]);
          if (!row) return false;
          await appendChanges(tx, datasetId, [{ chunkId: row.id, op: 'delete' }], Date.now());
          return true;
        },
        chunkConflict(datasetId),
      );
    },
    async deleteMany(datasetId, ids, createdAtOrBefore) {
      if (ids.length === 0) return 0;
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const now = Date.now();
          // The dataset's chunks found by key (see byKeys), then deleted by primary key. double
          // precision: the cutoff need not be a whole number of ms (bigint would refuse it).
          const rows = await tx.all<{ id: string }>(
            `DELETE FROM chunks WHERE id = ANY(ARRAY(${byKeys('id', 'chunks', 'id')})) AND created_at <= $3::double precision RETURNING id`,
            [datasetId, [...new Set(ids)], createdAtOrBefore],
          );
          const gone = new Set(rows.map((r) => r.id));
          // Logged in the order asked, as the one-by-one deletes of SQLite's batch log them.
          const order = [...new Set(ids)].filter((id) => gone.has(id));
          await appendChanges(
            tx,
            datasetId,
            order.map((chunkId) => ({ chunkId, op: 'delete' as const })),
            now,
          );
          return order.length;
        },
        chunkConflict(datasetId),
      );
    },
    async scrollIds(datasetId, afterId, limit) {
      const rows = await db.all(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
        datasetId,
        afterId ?? '',
        limit < 0 ? null : limit,
      ]);
      return rows.map(chunkFromRow);
    },
  };
}
