/** PostgreSQL dataset repository. */
import { QuarryError, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import type { DatasetRepository } from '../repository.js';
import { datasetFromRow, membershipFromRow, organizationFromRow } from '../rows.js';
import { pauseAfterSlice, PURGE_SLICE_ROWS } from '../sqlite/purge.js';
import { appendChanges } from './change-log.js';
import type { PgDb, Row, Sql } from './database.js';
import type { Purger } from './purge.js';

/** The unique index that keeps a tracking id to one live dataset per organization. */
const TRACKING_INDEX = 'datasets_tracking';

/** Whether `err` is the unique violation of {@link TRACKING_INDEX}. */
const isTrackingConflict = (err: unknown): boolean =>
  (err as { code?: unknown } | null)?.code === '23505' && (err as { constraint?: unknown }).constraint === TRACKING_INDEX;

/** Builds the PostgreSQL dataset repository. */
export function pgDatasets(db: PgDb, purger: Purger): DatasetRepository {
  // ON CONFLICT on the tracking index: a concurrent creation with the same tracking id (which
  // SQLite's single writer serialized) waits for the other to commit and then inserts nothing.
  const insert = `INSERT INTO datasets (id, organization_id, name, tracking_id, server_configuration, deleted, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 0, $6, $7)
     ON CONFLICT (organization_id, tracking_id) WHERE tracking_id IS NOT NULL AND deleted = 0 DO NOTHING`;
  // A dataset of an organization flagged deleted is as gone as a flagged dataset (its purge may be
  // half done): the core drops it on use, and the job workers skip it.
  const byId =
    'SELECT d.* FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.id = $1 AND d.deleted = 0 AND o.deleted = 0';
  const byTracking = 'SELECT * FROM datasets WHERE organization_id = $1 AND tracking_id = $2 AND deleted = 0';
  // What a request needs to know about its dataset in one round trip (no cache: a revoked
  // membership or a deleted dataset shows on the next request). The organization and membership
  // come as JSON objects of their rows (BIGINT values stay exact: all are below 2^53).
  const standing = (where: string): string =>
    `SELECT d.*, row_to_json(o) AS ix_organization, CASE WHEN m.id IS NULL THEN NULL ELSE row_to_json(m) END AS ix_membership
     FROM datasets d JOIN organizations o ON o.id = d.organization_id
     LEFT JOIN memberships m ON m.organization_id = d.organization_id AND m.user_id = $1::text
     WHERE ${where} AND d.deleted = 0 AND o.deleted = 0`;
  const standingById = standing('d.id = $2');
  const standingByTracking = standing('d.organization_id = $2 AND d.tracking_id = $3');
  const listIds =
    'SELECT d.id FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.deleted = 0 AND o.deleted = 0 ORDER BY d.created_at, d.id';
  const listByOrg = `SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.dataset_id = d.id) AS chunk_count
     FROM datasets d WHERE d.organization_id = $1 AND d.deleted = 0 ORDER BY d.created_at, d.id LIMIT $2 OFFSET $3`;
  // Keyset from the last id deleted: chunks written meanwhile (kept) are not scanned again by every slice.
  const chunkSlice = 'SELECT id FROM chunks WHERE dataset_id = $1 AND id > $2 AND created_at <= $3 ORDER BY id LIMIT $4';
  const groupSlice =
    'DELETE FROM chunk_groups WHERE id IN (SELECT id FROM chunk_groups WHERE dataset_id = $1 AND created_at <= $2 LIMIT $3)';
  // Tags come out of jsonb as text of the database's collation: COLLATE "C" sorts ties bytewise, as SQLite does.
  const tags = `SELECT t.value AS tag, COUNT(*) AS count FROM chunks c, jsonb_array_elements_text(c.tag_set::jsonb) AS t(value)
     WHERE c.dataset_id = $1 GROUP BY t.value ORDER BY count DESC, t.value COLLATE "C" LIMIT $2 OFFSET $3`;
  const tagTotal =
    'SELECT COUNT(DISTINCT t.value) AS n FROM chunks c, jsonb_array_elements_text(c.tag_set::jsonb) AS t(value) WHERE c.dataset_id = $1';

  const get = async (sql: Sql, id: string): Promise<DatasetRecord | undefined> => {
    const row = await sql.get(byId, [id]);
    return row ? datasetFromRow(row) : undefined;
  };
  const takenTrackingId = (organizationId: string, trackingId: string): QuarryError =>
    new QuarryError(
      'duplicate_tracking_id',
      `A dataset with tracking_id "${trackingId}" already exists in organization ${organizationId}`,
    );

  // Clearing runs in slices for the same reason as purges (./purge.ts). Only what existed when the
  // clear started goes, as with bulk deletes: a chunk written meanwhile is the caller's new data.
  /** Deletes up to a slice of chunks after `afterId`; returns the last id deleted, or null when none was left. */
  const clearChunkSlice = (id: string, afterId: string, startedAt: number): Promise<string | null> =>
    db.tx(async (tx) => {
      // Taken before the slice is read: a chunk write of the dataset either commits (and logs)
      // before the slice's deletions or waits for them, so the log has them in commit order.
      await tx.lockDataset(id);
      const now = Date.now();
      const ids = (await tx.all<{ id: string }>(chunkSlice, [id, afterId, startedAt, PURGE_SLICE_ROWS])).map((r) => r.id);
      if (ids.length > 0) {
        await appendChanges(tx, id, ids.map((chunkId) => ({ chunkId, op: 'delete' as const })), now);
        await tx.run('DELETE FROM chunks WHERE dataset_id = $1 AND id = ANY($2::text[])', [id, ids]);
      }
      return ids.length === PURGE_SLICE_ROWS ? ids[ids.length - 1]! : null;
    });
  /** Runs one slice, then pauses as long as it took (see pauseAfterSlice). */
  const sliced = async <T>(slice: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await slice();
    await pauseAfterSlice(performance.now() - started);
    return result;
  };

  return {
    async create({ organizationId, name, trackingId, serverConfiguration }) {
      return db.tx(async (tx) => {
        const id = newId();
        const now = Date.now();
        const inserted = await tx.run(insert, [id, organizationId, name, trackingId, JSON.stringify(serverConfiguration), now, now]);
        if (inserted === 0) throw takenTrackingId(organizationId, trackingId!);
        return (await get(tx, id))!;
      });
    },
    async get(id) {
      return get(db, id);
    },
    async idsOfOrganization(organizationId) {
      return (await db.all<{ id: string }>('SELECT id FROM datasets WHERE organization_id = $1', [organizationId])).map((r) => r.id);
    },
    async listIds() {
      return (await db.all<{ id: string }>(listIds)).map((r) => r.id);
    },
    async getByTrackingId(organizationId, trackingId) {
      const row = await db.get(byTracking, [organizationId, trackingId]);
      return row ? datasetFromRow(row) : undefined;
    },
    async update(id, patch) {
      return db.tx(async (tx) => {
        // Locked: a concurrent update of this dataset waits, so neither overwrites the other's fields.
        const row = await tx.get(`${byId} FOR UPDATE OF d`, [id]);
        if (!row) throw notFound(`dataset ${id} does not exist`);
        const current = datasetFromRow(row);
        const trackingId = patch.trackingId === undefined ? current.trackingId : patch.trackingId;
        if (trackingId !== null && trackingId !== current.trackingId && (await tx.get(byTracking, [current.organizationId, trackingId]))) {
          throw takenTrackingId(current.organizationId, trackingId);
        }
        try {
          await tx.run('UPDATE datasets SET name = $1, tracking_id = $2, server_configuration = $3, updated_at = $4 WHERE id = $5', [
            patch.name ?? current.name,
            trackingId,
            JSON.stringify(patch.serverConfiguration ?? current.serverConfiguration),
            Math.max(Date.now(), current.updatedAt),
            id,
          ]);
        } catch (err) {
          // Another dataset took the tracking id after the check above (SQLite's single writer
          // ruled that out): the same answer as if it had been there before.
          if (isTrackingConflict(err)) throw takenTrackingId(current.organizationId, trackingId!);
          throw err;
        }
        return (await get(tx, id))!;
      });
    },
    async markDeleted(id) {
      await db.run('UPDATE datasets SET deleted = 1, updated_at = $1 WHERE id = $2', [Date.now(), id]);
    },
    async listDeleted() {
      return (await db.all<{ id: string }>('SELECT id FROM datasets WHERE deleted = 1')).map((r) => r.id);
    },
    async purge(id) {
      return purger.dataset(id);
    },
    async listByOrganization(organizationId, limit, offset) {
      return (await db.all(listByOrg, [organizationId, limit, offset])).map((row) => ({
        dataset: datasetFromRow(row),
        chunkCount: row.chunk_count as number,
      }));
    },
    async chunkCount(id) {
      return (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunks WHERE dataset_id = $1', [id]))!.n;
    },
    async clear(id) {
      const startedAt = Date.now();
      for (let after: string | null = ''; after !== null; ) after = await sliced(() => clearChunkSlice(id, after!, startedAt));
      for (let n = PURGE_SLICE_ROWS; n === PURGE_SLICE_ROWS; ) {
        n = await sliced(() => db.run(groupSlice, [id, startedAt, PURGE_SLICE_ROWS]));
      }
    },
    async standing(ref, userId) {
      const row =
        'id' in ref
          ? await db.get(standingById, [userId, ref.id])
          : await db.get(standingByTracking, [userId, ref.organizationId, ref.trackingId]);
      if (!row) return undefined;
      return {
        dataset: datasetFromRow(row),
        organization: organizationFromRow(row.ix_organization as Row),
        membership: row.ix_membership ? membershipFromRow(row.ix_membership as Row) : undefined,
      };
    },
    async tags(id, page, pageSize) {
      const rows = await db.all<{ tag: string; count: number }>(tags, [id, pageSize, (page - 1) * pageSize]);
      return { tags: rows, total: (await db.get<{ n: number }>(tagTotal, [id]))!.n };
    },
  };
}
