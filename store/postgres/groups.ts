/** PostgreSQL chunk-group repository. */
import { QuarryError, notFound } from '../../core/domain/errors.js';
import type { GroupInput, GroupRecord } from '../../core/domain/group.js';
import { newId } from '../../core/domain/ids.js';
import type { GroupRepository } from '../repository.js';
import { chunkFromRow, groupFromRow, toJson } from '../rows.js';
import { appendChanges, conflictingTrackingId, datasetTx } from './change-log.js';
import { byKeys, datasetIs } from './keyed-reads.js';
import type { PgDb, Sql } from './database.js';

const COLUMNS = 'id, dataset_id, name, description, tracking_id, metadata, tag_set, file_id, created_at, updated_at';

// Batches travel as arrays, one per column: constant text whatever their size.
const INSERT = `INSERT INTO chunk_groups (${COLUMNS})
  SELECT u.id, $1::text, u.name, u.description, u.tracking_id, u.metadata, u.tag_set, u.file_id, $2::bigint, $2::bigint
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS u(id, name, description, tracking_id, metadata, tag_set, file_id)`;
const UPDATE = `UPDATE chunk_groups AS g SET name = u.name, description = u.description, tracking_id = u.tracking_id, metadata = u.metadata, tag_set = u.tag_set, updated_at = u.updated_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[]) AS u(id, name, description, tracking_id, metadata, tag_set, updated_at)
  WHERE g.id = u.id`;

/** SQLite's LIMIT and OFFSET as PostgreSQL takes them: a negative limit is no limit, a negative offset none. */
const page = (pageNo: number, pageSize: number): [number | null, number] => [pageSize < 0 ? null : pageSize, Math.max(0, (pageNo - 1) * pageSize)];

/** The duplicate-tracking-id error of a group unique violation that kept racing (see datasetTx). */
const groupConflict =
  (datasetId: string) =>
  (err: unknown): QuarryError =>
    new QuarryError(
      'duplicate_tracking_id',
      `A group with tracking_id "${conflictingTrackingId(err, datasetId)}" already exists in this dataset; set upsert_by_tracking_id to update it. Nothing was stored`,
      { cause: err },
    );

/** A group of dataset `$1` by its tracking id `$2` (the dataset's value hidden: keyed-reads.ts). */
export const GROUP_BY_TRACKING_ID = `SELECT ${COLUMNS} FROM chunk_groups WHERE ${datasetIs('$1')} AND tracking_id = $2`;

/** Builds the PostgreSQL group repository. */
export function pgGroups(db: PgDb): GroupRepository {
  const find = async (on: Sql, datasetId: string, id: string): Promise<GroupRecord | undefined> => {
    const row = await on.get(`SELECT ${COLUMNS} FROM chunk_groups WHERE dataset_id = $1 AND id = $2`, [datasetId, id]);
    return row ? groupFromRow(row) : undefined;
  };
  const findByTracking = async (on: Sql, datasetId: string, tid: string): Promise<GroupRecord | undefined> => {
    const row = await on.get(GROUP_BY_TRACKING_ID, [datasetId, tid]);
    return row ? groupFromRow(row) : undefined;
  };

  const write = async (tx: Sql, groups: readonly GroupRecord[]): Promise<void> => {
    if (groups.length === 0) return;
    await tx.run(UPDATE, [
      groups.map((g) => g.id),
      groups.map((g) => g.name),
      groups.map((g) => g.description),
      groups.map((g) => g.trackingId),
      groups.map((g) => toJson(g.metadata)),
      groups.map((g) => JSON.stringify(g.tagSet)),
      groups.map((g) => g.updatedAt),
    ]);
  };

  const merge = (current: GroupRecord, patch: GroupInput, now: number): GroupRecord => ({
    ...current,
    name: patch.name ?? current.name,
    description: patch.description ?? current.description,
    trackingId: patch.trackingId === undefined ? current.trackingId : patch.trackingId,
    metadata: patch.metadata === undefined ? current.metadata : patch.metadata,
    tagSet: patch.tagSet === undefined ? current.tagSet : (patch.tagSet ?? []),
    updatedAt: Math.max(now, current.updatedAt),
  });

  const createAll = async (tx: Sql, datasetId: string, inputs: readonly GroupInput[], upsert: boolean): Promise<GroupRecord[]> => {
    // Earlier inputs only write tracking ids no later input may repeat, so one read before the
    // loop answers every lookup of SQLite's loop.
    const tids = inputs.flatMap((input) => (input.trackingId === undefined || input.trackingId === null ? [] : [input.trackingId]));
    const stored = new Map<string, GroupRecord>();
    if (tids.length > 0) {
      const rows = await tx.all(byKeys(COLUMNS, 'chunk_groups', 'tracking_id'), [datasetId, tids]);
      for (const r of rows) stored.set(r.tracking_id as string, groupFromRow(r));
    }
    const seen = new Set<string>();
    const now = Date.now();
    const fresh: GroupRecord[] = [];
    const merged: GroupRecord[] = [];
    const out = inputs.map((input): GroupRecord => {
      const tid = input.trackingId ?? null;
      if (tid !== null) {
        if (seen.has(tid)) {
          throw new QuarryError('duplicate_tracking_id', `Duplicate tracking_id "${tid}" appears more than once in this request; nothing was stored`);
        }
        seen.add(tid);
        const existing = stored.get(tid);
        if (existing) {
          if (!upsert) {
            throw new QuarryError(
              'duplicate_tracking_id',
              `A group with tracking_id "${tid}" already exists in this dataset; set upsert_by_tracking_id to update it. Nothing was stored`,
            );
          }
          const next = merge(existing, input, now);
          merged.push(next);
          return next;
        }
      }
      const record: GroupRecord = {
        id: newId(),
        datasetId,
        name: input.name ?? '',
        description: input.description ?? '',
        trackingId: tid,
        metadata: input.metadata ?? null,
        tagSet: input.tagSet ?? [],
        fileId: input.fileId ?? null,
        createdAt: now,
        updatedAt: now,
      };
      fresh.push(record);
      return record;
    });
    if (fresh.length > 0) {
      await tx.run(INSERT, [
        datasetId,
        now,
        fresh.map((g) => g.id),
        fresh.map((g) => g.name),
        fresh.map((g) => g.description),
        fresh.map((g) => g.trackingId),
        fresh.map((g) => toJson(g.metadata)),
        fresh.map((g) => JSON.stringify(g.tagSet)),
        fresh.map((g) => g.fileId),
      ]);
    }
    await write(tx, merged);
    return out;
  };

  return {
    async createMany(datasetId, inputs, upsert) {
      if (inputs.length === 0) return [];
      return datasetTx(db, datasetId, (tx) => createAll(tx, datasetId, inputs, upsert), groupConflict(datasetId));
    },
    async get(datasetId, id) {
      return find(db, datasetId, id);
    },
    async getByTrackingId(datasetId, trackingId) {
      return findByTracking(db, datasetId, trackingId);
    },
    async update(datasetId, id, patch) {
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const current = await find(tx, datasetId, id);
          if (!current) throw notFound(`group with id ${id} does not exist in this dataset`);
          if (patch.trackingId !== undefined && patch.trackingId !== null && patch.trackingId !== current.trackingId) {
            if (await findByTracking(tx, datasetId, patch.trackingId)) {
              throw new QuarryError('duplicate_tracking_id', `Cannot change tracking_id to "${patch.trackingId}": another group in this dataset already has it`);
            }
          }
          const next = merge(current, patch, Date.now());
          await write(tx, [next]);
          return next;
        },
        (err) =>
          new QuarryError(
            'duplicate_tracking_id',
            `Cannot change tracking_id to "${conflictingTrackingId(err, datasetId)}": another group in this dataset already has it`,
            { cause: err },
          ),
      );
    },
    async delete(datasetId, id, deleteChunks) {
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          if (!(await find(tx, datasetId, id))) return false;
          // By chunk id: the order SQLite reads them in (its primary-key index), so the log matches.
          const members = (await tx.all<{ chunk_id: string }>('SELECT chunk_id FROM chunk_group_members WHERE group_id = $1 ORDER BY chunk_id', [id])).map(
            (r) => r.chunk_id,
          );
          await tx.run('DELETE FROM chunk_groups WHERE id = $1', [id]);
          if (deleteChunks && members.length > 0) await tx.run('DELETE FROM chunks WHERE id = ANY($1::text[])', [members]);
          // Without deleteChunks the chunks' group_ids changed: their index entries must follow.
          await appendChanges(
            tx,
            datasetId,
            members.map((chunkId) => ({ chunkId, op: deleteChunks ? ('delete' as const) : ('upsert' as const) })),
            Date.now(),
          );
          return true;
        },
        groupConflict(datasetId),
      );
    },
    async addChunk(datasetId, groupId, chunkId) {
      await datasetTx(
        db,
        datasetId,
        async (tx) => {
          if (!(await find(tx, datasetId, groupId))) throw notFound(`group with id ${groupId} does not exist in this dataset`);
          if (!(await tx.get('SELECT 1 FROM chunks WHERE dataset_id = $1 AND id = $2', [datasetId, chunkId]))) {
            throw notFound(`chunk with id ${chunkId} does not exist in this dataset`);
          }
          const now = Date.now();
          const added = await tx.run(
            'INSERT INTO chunk_group_members (group_id, chunk_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
            [groupId, chunkId, now],
          );
          if (added > 0) await appendChanges(tx, datasetId, [{ chunkId, op: 'upsert' }], now);
        },
        groupConflict(datasetId),
      );
    },
    async removeChunk(datasetId, groupId, chunkId) {
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          if (!(await find(tx, datasetId, groupId))) throw notFound(`group with id ${groupId} does not exist in this dataset`);
          if ((await tx.run('DELETE FROM chunk_group_members WHERE group_id = $1 AND chunk_id = $2', [groupId, chunkId])) === 0) return false;
          await appendChanges(tx, datasetId, [{ chunkId, op: 'upsert' }], Date.now());
          return true;
        },
        groupConflict(datasetId),
      );
    },
    async chunks(groupId, pageNo, pageSize) {
      const [limit, offset] = page(pageNo, pageSize);
      const [rows, count] = await Promise.all([
        db.all(
          'SELECT c.* FROM chunk_group_members m JOIN chunks c ON c.id = m.chunk_id WHERE m.group_id = $1 ORDER BY m.created_at, c.id LIMIT $2 OFFSET $3',
          [groupId, limit, offset],
        ),
        db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunk_group_members WHERE group_id = $1', [groupId]),
      ]);
      return { chunks: rows.map(chunkFromRow), total: count!.n };
    },
    async list(datasetId, pageNo, pageSize) {
      const [limit, offset] = page(pageNo, pageSize);
      const [rows, count] = await Promise.all([
        db.all(`SELECT ${COLUMNS} FROM chunk_groups WHERE dataset_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`, [datasetId, limit, offset]),
        db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunk_groups WHERE dataset_id = $1', [datasetId]),
      ]);
      return { groups: rows.map(groupFromRow), total: count!.n };
    },
    async groupsOfChunks(datasetId, chunkIds) {
      const out = new Map<string, GroupRecord[]>();
      for (const id of chunkIds) out.set(id, []);
      if (chunkIds.length === 0) return out;
      const rows = await db.all(
        `SELECT m.chunk_id AS member_chunk_id, g.* FROM chunk_group_members m JOIN chunk_groups g ON g.id = m.group_id
         WHERE m.chunk_id = ANY($1::text[]) AND g.dataset_id = $2 ORDER BY g.created_at, g.id`,
        [[...out.keys()], datasetId],
      );
      for (const r of rows) out.get(r.member_chunk_id as string)!.push(groupFromRow(r));
      return out;
    },
  };
}
