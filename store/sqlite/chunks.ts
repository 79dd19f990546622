/** SQLite chunk repository: all-or-nothing batch creates, patch updates, change-log entries. */
import type Database from 'better-sqlite3';
import type { ChunkInput, ChunkPatch, ChunkRecord } from '../../core/domain/chunk.js';
import { QuarryError, notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { semanticHash } from '../../core/domain/semantic-text.js';
import type { ChunkRepository, ChunkSelector } from '../repository.js';
import { ChangeLogWriter } from './change-log.js';
import { ChunkCache } from './chunk-cache.js';
import type { WriteEpoch } from './epoch-cache.js';
import type { Db } from './database.js';
import { checkTrackingIds, newChunkRecord, patchedChunkRecord, type ReplacedChunk } from '../chunk-records.js';
import { chunkFromRow, toJson } from '../rows.js';

/** The chunk columns, in {@link rowValues} order. */
export const COLUMNS =
  'id, dataset_id, tracking_id, chunk_html, link, metadata, tag_set, time_stamp, weight, image_urls, lat, lon, num_value, semantic_content, fulltext_content, convert_html_to_text, fulltext_boost, semantic_boost, created_at, updated_at, semantic_hash';

/** Row values of a record (`metadataJson`: its metadata's JSON text, when the input came with it), in {@link COLUMNS} order. */
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

/** Group membership helper shared with the group repository. */
export class Membership {
  private readonly groupById;
  private readonly groupByTracking;
  private readonly createGroup;
  private readonly join;
  private readonly leaveAll;

  constructor(db: Db) {
    this.groupById = db.prepare('SELECT id FROM chunk_groups WHERE dataset_id = ? AND id = ?');
    this.groupByTracking = db.prepare('SELECT id FROM chunk_groups WHERE dataset_id = ? AND tracking_id = ?');
    this.createGroup = db.prepare(
      "INSERT INTO chunk_groups (id, dataset_id, name, description, tracking_id, metadata, tag_set, created_at, updated_at) VALUES (?, ?, ?, '', ?, NULL, '[]', ?, ?)",
    );
    this.join = db.prepare('INSERT OR IGNORE INTO chunk_group_members (group_id, chunk_id, created_at) VALUES (?, ?, ?)');
    this.leaveAll = db.prepare('DELETE FROM chunk_group_members WHERE chunk_id = ?');
  }

  /**
   * Resolves group ids (which must exist) and group tracking ids (created when missing) to ids.
   * Runs inside the caller's transaction so a failure leaves nothing behind. `known` holds what
   * earlier calls of the same transaction resolved (group ids found, and tracking id -> group id):
   * a batch whose chunks all join one group looks it up once, not once a chunk.
   */
  resolve(datasetId: string, groupIds: readonly string[] = [], trackingIds: readonly string[] = [], now: number, known?: Map<string, string>): string[] {
    const out = new Set<string>();
    for (const id of groupIds) {
      if (known?.get(id) !== id) {
        if (!this.groupById.get(datasetId, id)) throw notFound(`group with id ${id} does not exist in this dataset`);
        known?.set(id, id);
      }
      out.add(id);
    }
    for (const tid of trackingIds) {
      // Tracking ids are keyed apart from ids: a tracking id may spell another group's id.
      const key = `\u0000${tid}`;
      let id = known?.get(key) ?? (this.groupByTracking.get(datasetId, tid) as { id: string } | undefined)?.id;
      if (id === undefined) {
        id = newId();
        this.createGroup.run(id, datasetId, tid, tid, now, now);
      }
      known?.set(key, id);
      out.add(id);
    }
    return [...out];
  }

  /** Adds a chunk to groups. */
  add(chunkId: string, groupIds: readonly string[], now: number): void {
    for (const g of groupIds) this.join.run(g, chunkId, now);
  }

  /** Replaces a chunk's groups. */
  replace(chunkId: string, groupIds: readonly string[], now: number): void {
    this.leaveAll.run(chunkId);
    this.add(chunkId, groupIds, now);
  }
}

/** Reads of at most this many ids go through the record cache (a search page); bigger ones (indexing batches) bypass it. */
const CACHED_READ_MAX = 100;

/** The statement that replaces a chunk's row (every column but id and dataset_id, then the id). */
const UPDATE_ROW = `UPDATE chunks SET ${COLUMNS.split(', ')
  .slice(2)
  .map((c) => `${c} = ?`)
  .join(', ')} WHERE id = ?`;

/**
 * A batch write of chunks (see {@link chunkBatchWriter}): a transaction function, a savepoint when
 * nested. `absent`: the caller found none of the inputs' tracking ids stored, in the same
 * transaction (a file import skipping the stored ones), so they are not looked up again.
 */
export type ChunkBatchWrite = Database.Transaction<(datasetId: string, inputs: readonly ChunkInput[], upsert: readonly boolean[], absent?: boolean) => ChunkRecord[]>;

/**
 * The batch write of `createMany` (all or nothing, change-log entries, groups) as a better-sqlite3
 * transaction function. Called inside another transaction (a file import's batch, files.ts) it
 * runs as a savepoint of it: a refused batch leaves that transaction as it was, to go on without it.
 */
export function chunkBatchWriter(db: Db, log: ChangeLogWriter): ChunkBatchWrite {
  const membership = new Membership(db);
  const insert = db.prepare(`INSERT INTO chunks (${COLUMNS}) VALUES (${COLUMNS.split(',').map(() => '?').join(', ')})`);
  // Only what a replacement keeps (ReplacedChunk), not a whole row parsed into a record per input.
  const byTracking = db.prepare('SELECT id, created_at AS createdAt, updated_at AS updatedAt FROM chunks WHERE dataset_id = ? AND tracking_id = ?');
  const updateRow = db.prepare(UPDATE_ROW);
  const stored = (datasetId: string, trackingId: string): ReplacedChunk | undefined => byTracking.get(datasetId, trackingId) as ReplacedChunk | undefined;
  return db.transaction((datasetId: string, inputs: readonly ChunkInput[], upsert: readonly boolean[], absent = false): ChunkRecord[] => {
    const existing = checkTrackingIds(inputs, upsert, (trackingId) => (absent ? undefined : stored(datasetId, trackingId)));
    const now = Date.now();
    const known = new Map<string, string>();
    return inputs.map((input, i) => {
      const before = existing.get(i);
      const record = newChunkRecord(datasetId, input, before, now);
      const groups = membership.resolve(datasetId, input.groupIds, input.groupTrackingIds, now, known);
      if (before) {
        updateRow.run(...rowValues(record, input.metadataJson).slice(2), record.id);
        if (groups.length > 0) membership.add(record.id, groups, now);
      } else {
        insert.run(...rowValues(record, input.metadataJson));
        membership.add(record.id, groups, now);
      }
      log.upsert(datasetId, record.id, now);
      return record;
    });
  });
}

/** Builds the SQLite chunk repository; `cacheBytes` > 0 (with `epoch`) keeps recently read records (chunk-cache.ts). */
export function sqliteChunks(db: Db, log: ChangeLogWriter, cacheBytes = 0, epoch: WriteEpoch | null = null): ChunkRepository {
  const cache = cacheBytes > 0 && epoch ? new ChunkCache(db, cacheBytes, epoch) : null;
  const membership = new Membership(db);
  const byId = db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = ? AND id = ?`);
  const byTracking = db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = ? AND tracking_id = ?`);
  const updateRow = db.prepare(UPDATE_ROW);
  const remove = db.prepare('DELETE FROM chunks WHERE id = ?');
  const scroll = db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = ? AND id > ? ORDER BY id LIMIT ?`);

  const find = (datasetId: string, selector: ChunkSelector): ChunkRecord | undefined => {
    const row = 'id' in selector ? byId.get(datasetId, selector.id) : byTracking.get(datasetId, selector.trackingId);
    return row ? chunkFromRow(row) : undefined;
  };

  const createAll = chunkBatchWriter(db, log);

  const updateOne = db.transaction((datasetId: string, selector: ChunkSelector, patch: ChunkPatch): ChunkRecord => {
    const current = find(datasetId, selector);
    if (!current) {
      throw notFound(
        'id' in selector
          ? `chunk with id ${selector.id} does not exist in this dataset`
          : `chunk with tracking_id "${selector.trackingId}" does not exist in this dataset`,
      );
    }
    const newTid = patch.newTrackingId;
    if (newTid !== undefined && newTid !== null && newTid !== current.trackingId) {
      const other = byTracking.get(datasetId, newTid) as { id: string } | undefined;
      if (other) {
        throw new QuarryError(
          'duplicate_tracking_id',
          `Cannot change tracking_id to "${newTid}": another chunk in this dataset already has it`,
        );
      }
    }
    const now = Math.max(Date.now(), current.updatedAt);
    const next = patchedChunkRecord(current, patch, now);
    updateRow.run(...rowValues(next).slice(2), next.id);
    if (patch.groupIds !== undefined || patch.groupTrackingIds !== undefined) {
      membership.replace(next.id, membership.resolve(datasetId, patch.groupIds, patch.groupTrackingIds, now), now);
    }
    log.upsert(datasetId, next.id, now);
    return next;
  });

  const deleteOne = db.transaction((datasetId: string, selector: ChunkSelector): boolean => {
    const current = find(datasetId, selector);
    if (!current) return false;
    remove.run(current.id);
    log.delete(datasetId, current.id, Date.now());
    return true;
  });

  // The bulk delete's batch: the single delete's statements, one transaction for the batch.
  const deleteSome = db.transaction((datasetId: string, ids: readonly string[], createdAtOrBefore: number): number => {
    const now = Date.now();
    let deleted = 0;
    for (const id of ids) {
      const current = find(datasetId, { id });
      if (!current || current.createdAt > createdAtOrBefore) continue;
      remove.run(current.id);
      log.delete(datasetId, current.id, now);
      deleted++;
    }
    return deleted;
  });

  // Many ids in one read transaction: one snapshot and one WAL-index check instead of one per id.
  const findMany = db.transaction((datasetId: string, ids: readonly string[]): ChunkRecord[] => ids.flatMap((id) => find(datasetId, { id }) ?? []));

  return {
    async createMany(datasetId, inputs, upsert = []) {
      return createAll.immediate(datasetId, inputs, upsert);
    },
    async update(datasetId, selector, patch) {
      return updateOne.immediate(datasetId, selector, patch);
    },
    async get(datasetId, selector) {
      return find(datasetId, selector);
    },
    async getMany(datasetId, ids) {
      if (cache && ids.length <= CACHED_READ_MAX && !db.inTransaction) {
        cache.sync();
        const out: ChunkRecord[] = [];
        for (const id of ids) {
          let record = cache.get(datasetId, id);
          if (!record) {
            record = find(datasetId, { id });
            if (record) cache.set(record);
          }
          if (record) out.push(record);
        }
        return out;
      }
      // Inside a caller's transaction (a write that reads back) the plain loop is already one snapshot.
      if (ids.length > 1 && !db.inTransaction) return findMany(datasetId, ids);
      return ids.flatMap((id) => find(datasetId, { id }) ?? []);
    },
    async getManyByTrackingIds(datasetId, trackingIds) {
      return trackingIds.flatMap((trackingId) => find(datasetId, { trackingId }) ?? []);
    },
    async delete(datasetId, selector) {
      return deleteOne.immediate(datasetId, selector);
    },
    async deleteMany(datasetId, ids, createdAtOrBefore) {
      return deleteSome.immediate(datasetId, ids, createdAtOrBefore);
    },
    async scrollIds(datasetId, afterId, limit) {
      return (scroll.all(datasetId, afterId ?? '', limit) as Record<string, unknown>[]).map(chunkFromRow);
    },
  };
}

