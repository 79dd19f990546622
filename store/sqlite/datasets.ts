/** SQLite dataset repository. */
import { QuarryError, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import type { DatasetRepository } from '../repository.js';
import type { ChangeLogWriter } from './change-log.js';
import type { Db } from './database.js';
import { EpochCache, type WriteEpoch } from './epoch-cache.js';
import { pauseAfterSlice, PURGE_SLICE_ROWS, type Purger } from './purge.js';
import { datasetFromRow } from '../rows.js';

/** Builds the SQLite dataset repository. */
/** The dataset repository; with `epoch`, `get` answers from memory while nothing was written. */
export function sqliteDatasets(db: Db, log: ChangeLogWriter, purger: Purger, epoch: WriteEpoch | null = null): DatasetRepository {
  const cache = epoch ? new EpochCache<DatasetRecord>(epoch) : null;
  const insert = db.prepare(
    'INSERT INTO datasets (id, organization_id, name, tracking_id, server_configuration, deleted, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
  );
  // A dataset of an organization flagged deleted is as gone as a flagged dataset (its purge may be
  // half done): the core drops it on use, and the job workers skip it.
  const byId = db.prepare(
    'SELECT d.* FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.id = ? AND d.deleted = 0 AND o.deleted = 0',
  );
  const byTracking = db.prepare('SELECT * FROM datasets WHERE organization_id = ? AND tracking_id = ? AND deleted = 0');
  const updateRow = db.prepare(
    'UPDATE datasets SET name = ?, tracking_id = ?, server_configuration = ?, updated_at = ? WHERE id = ?',
  );
  const markDeleted = db.prepare('UPDATE datasets SET deleted = 1, updated_at = ? WHERE id = ?');
  const listDeleted = db.prepare('SELECT id FROM datasets WHERE deleted = 1');
  const listIds = db.prepare(
    'SELECT d.id FROM datasets d JOIN organizations o ON o.id = d.organization_id WHERE d.deleted = 0 AND o.deleted = 0 ORDER BY d.created_at, d.id',
  );
  const idsOfOrg = db.prepare('SELECT id FROM datasets WHERE organization_id = ?');
  const listByOrg = db.prepare(
    `SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.dataset_id = d.id) AS chunk_count
     FROM datasets d WHERE d.organization_id = ? AND d.deleted = 0 ORDER BY d.created_at, d.id LIMIT ? OFFSET ?`,
  );
  const count = db.prepare('SELECT COUNT(*) AS n FROM chunks WHERE dataset_id = ?');
  // Keyset from the last id deleted: chunks written meanwhile (kept) are not scanned again by every slice.
  const chunkSlice = db.prepare('SELECT id FROM chunks WHERE dataset_id = ? AND id > ? AND created_at <= ? ORDER BY id LIMIT ?');
  const deleteChunk = db.prepare('DELETE FROM chunks WHERE id = ?');
  const groupSlice = db.prepare(
    'DELETE FROM chunk_groups WHERE rowid IN (SELECT rowid FROM chunk_groups WHERE dataset_id = ? AND created_at <= ? LIMIT ?)',
  );
  const tags = db.prepare(
    `SELECT t.value AS tag, COUNT(*) AS count FROM chunks c, json_each(c.tag_set) t
     WHERE c.dataset_id = ? GROUP BY t.value ORDER BY count DESC, tag LIMIT ? OFFSET ?`,
  );
  const tagTotal = db.prepare(
    'SELECT COUNT(DISTINCT t.value) AS n FROM chunks c, json_each(c.tag_set) t WHERE c.dataset_id = ?',
  );

  const get = (id: string): DatasetRecord | undefined => {
    const row = byId.get(id) as Record<string, unknown> | undefined;
    return row ? datasetFromRow(row) : undefined;
  };
  const takenTrackingId = (organizationId: string, trackingId: string): QuarryError =>
    new QuarryError(
      'duplicate_tracking_id',
      `A dataset with tracking_id "${trackingId}" already exists in organization ${organizationId}`,
    );

  const create = db.transaction(
    (organizationId: string, name: string, trackingId: string | null, config: Record<string, unknown>) => {
      if (trackingId !== null && byTracking.get(organizationId, trackingId)) throw takenTrackingId(organizationId, trackingId);
      const id = newId();
      const now = Date.now();
      insert.run(id, organizationId, name, trackingId, JSON.stringify(config), now, now);
      return get(id)!;
    },
  );

  const update = db.transaction(
    (id: string, patch: { name?: string; trackingId?: string | null; serverConfiguration?: Record<string, unknown> }) => {
      const current = get(id);
      if (!current) throw notFound(`dataset ${id} does not exist`);
      const trackingId = patch.trackingId === undefined ? current.trackingId : patch.trackingId;
      if (trackingId !== null && trackingId !== current.trackingId && byTracking.get(current.organizationId, trackingId)) {
        throw takenTrackingId(current.organizationId, trackingId);
      }
      updateRow.run(
        patch.name ?? current.name,
        trackingId,
        JSON.stringify(patch.serverConfiguration ?? current.serverConfiguration),
        Math.max(Date.now(), current.updatedAt),
        id,
      );
      return get(id)!;
    },
  );

  // Clearing runs in slices for the same reason as purges (store/sqlite/purge.ts): one transaction
  // over a large dataset blocked this process and every other process's writes for seconds.
  // Only what existed when the clear started goes, as with bulk deletes: a chunk written meanwhile
  // is the caller's new data.
  /** Deletes up to a slice of chunks after `afterId`; returns the last id deleted, or null when none was left. */
  const clearChunkSlice = db.transaction((id: string, afterId: string, startedAt: number): string | null => {
    const now = Date.now();
    // all(), not iterate(): better-sqlite3 refuses other statements on the connection while an
    // iterator is open, and each log entry is an INSERT.
    const rows = chunkSlice.all(id, afterId, startedAt, PURGE_SLICE_ROWS) as { id: string }[];
    for (const row of rows) {
      log.delete(id, row.id, now);
      deleteChunk.run(row.id);
    }
    return rows.length === PURGE_SLICE_ROWS ? rows[rows.length - 1]!.id : null;
  });
  const clearGroupSlice = db.transaction((id: string, startedAt: number): number => groupSlice.run(id, startedAt, PURGE_SLICE_ROWS).changes);
  /** Runs one slice, then pauses as long as it took (see pauseAfterSlice). */
  const sliced = async <T>(slice: () => T): Promise<T> => {
    const started = performance.now();
    const result = slice();
    await pauseAfterSlice(performance.now() - started);
    return result;
  };

  return {
    async create({ organizationId, name, trackingId, serverConfiguration }) {
      return create.immediate(organizationId, name, trackingId, serverConfiguration);
    },
    async get(id) {
      return cache ? cache.get(id, () => get(id)) : get(id);
    },
    async idsOfOrganization(organizationId) {
      return (idsOfOrg.all(organizationId) as { id: string }[]).map((r) => r.id);
    },
    async listIds() {
      return (listIds.all() as { id: string }[]).map((r) => r.id);
    },
    async getByTrackingId(organizationId, trackingId) {
      const row = byTracking.get(organizationId, trackingId) as Record<string, unknown> | undefined;
      return row ? datasetFromRow(row) : undefined;
    },
    async update(id, patch) {
      return update.immediate(id, patch);
    },
    async markDeleted(id) {
      markDeleted.run(Date.now(), id);
    },
    async listDeleted() {
      return (listDeleted.all() as { id: string }[]).map((r) => r.id);
    },
    async purge(id) {
      return purger.dataset(id);
    },
    async listByOrganization(organizationId, limit, offset) {
      return (listByOrg.all(organizationId, limit, offset) as Record<string, unknown>[]).map((row) => ({
        dataset: datasetFromRow(row),
        chunkCount: row.chunk_count as number,
      }));
    },
    async chunkCount(id) {
      return (count.get(id) as { n: number }).n;
    },
    async clear(id) {
      const startedAt = Date.now();
      for (let after: string | null = ''; after !== null; ) after = await sliced(() => clearChunkSlice.immediate(id, after!, startedAt));
      for (let n = PURGE_SLICE_ROWS; n === PURGE_SLICE_ROWS; ) n = await sliced(() => clearGroupSlice.immediate(id, startedAt));
    },
    async tags(id, page, pageSize) {
      const rows = tags.all(id, pageSize, (page - 1) * pageSize) as { tag: string; count: number }[];
      return { tags: rows, total: (tagTotal.get(id) as { n: number }).n };
    },
  };
}
