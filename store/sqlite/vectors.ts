/** SQLite dense-vector and dataset-event repositories. */
import { newId } from '../../core/domain/ids.js';
import { semanticHash } from '../../core/domain/semantic-text.js';
import type { DatasetEventRepository, VectorRepository } from '../repository.js';
import type { ChangeLogWriter } from './change-log.js';
import type { Db } from './database.js';
import { chunkFromRow } from '../rows.js';

/** Float32 vector to a BLOB (little-endian, as typed arrays are on every supported machine). */
const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
/** BLOB to a Float32Array that owns its memory (no view into SQLite's buffer). */
export const fromBlob = (b: Buffer): Float32Array => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

/** Builds the vector repository. */
export function sqliteVectors(db: Db, log: ChangeLogWriter): VectorRepository {
  // A chunk is pending when its vector is missing or made from other text (STALE, exactly the
  // WHERE of the partial index chunks_embed_stale, so SQLite uses it), or made by another model
  // (a range of chunks_vector_model). Both read only pending rows (migration v5).
  const STALE = 'vector_hash IS NULL OR semantic_hash IS NULL OR vector_hash != semantic_hash';
  const OTHER_MODEL = `(vector_model < ? OR vector_model > ?) AND NOT (${STALE})`;
  const staleRows = db.prepare(`SELECT * FROM chunks WHERE dataset_id = ? AND (${STALE}) ORDER BY id LIMIT ?`);
  const otherModelRows = db.prepare(`SELECT * FROM chunks WHERE dataset_id = ? AND ${OTHER_MODEL} ORDER BY id LIMIT ?`);
  const pendingCount = db.prepare(
    `SELECT (SELECT COUNT(*) FROM chunks WHERE dataset_id = ? AND (${STALE})) + (SELECT COUNT(*) FROM chunks WHERE dataset_id = ? AND ${OTHER_MODEL}) AS n`,
  );
  const markVector = db.prepare('UPDATE chunks SET vector_model = ?, vector_hash = ? WHERE id = ?');
  const currentHash = db.prepare('SELECT chunk_html, semantic_content, convert_html_to_text, semantic_boost, semantic_hash FROM chunks WHERE id = ? AND dataset_id = ?');
  const backfill = db.prepare('UPDATE chunks SET semantic_hash = ? WHERE id = ?');
  const upsert = db.prepare(
    `INSERT INTO chunk_vectors (chunk_id, dataset_id, model, dimension, content_hash, vector, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(chunk_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, content_hash = excluded.content_hash, vector = excluded.vector, updated_at = excluded.updated_at`,
  );
  const byId = db.prepare('SELECT chunk_id, vector FROM chunk_vectors WHERE chunk_id = ? AND model = ?');

  const put = db.transaction((datasetId: string, model: string, vectors: readonly { chunkId: string; contentHash: string; vector: Float32Array }[]) => {
    const now = Date.now();
    let stored = 0;
    for (const v of vectors) {
      const row = currentHash.get(v.chunkId, datasetId) as Record<string, unknown> | undefined;
      // The chunk was deleted or edited while it was being embedded: that vector is stale, drop it.
      if (!row) continue;
      const hash = (row.semantic_hash as string | null) ?? semanticHash(chunkFromRow({ ...row, tag_set: '[]', metadata: null, image_urls: null, fulltext_boost: null }));
      if (hash !== v.contentHash) continue;
      if (row.semantic_hash === null) backfill.run(hash, v.chunkId);
      upsert.run(v.chunkId, datasetId, model, v.vector.length, v.contentHash, toBlob(v.vector), now);
      markVector.run(model, v.contentHash, v.chunkId);
      log.upsert(datasetId, v.chunkId, now);
      stored++;
    }
    return stored;
  });

  return {
    async pending(datasetId, model, limit) {
      const rows = staleRows.all(datasetId, limit) as Record<string, unknown>[];
      if (rows.length < limit) rows.push(...(otherModelRows.all(datasetId, model, model, limit - rows.length) as Record<string, unknown>[]));
      return rows.map((row) => {
        const chunk = chunkFromRow(row);
        return { chunk, contentHash: (row.semantic_hash as string | null) ?? semanticHash(chunk) };
      });
    },
    async pendingCount(datasetId, model) {
      return (pendingCount.get(datasetId, datasetId, model, model) as { n: number }).n;
    },
    async put(datasetId, model, vectors) {
      return put.immediate(datasetId, model, vectors);
    },
    async getMany(chunkIds, model) {
      const out = new Map<string, Float32Array>();
      for (const id of chunkIds) {
        const row = byId.get(id, model) as { chunk_id: string; vector: Buffer } | undefined;
        if (row) out.set(id, fromBlob(row.vector));
      }
      return out;
    },
  };
}

/** Builds the dataset-event repository. */
export function sqliteDatasetEvents(db: Db): DatasetEventRepository {
  const insert = db.prepare('INSERT INTO dataset_events (id, dataset_id, event_type, event_data, created_at) VALUES (?, ?, ?, ?, ?)');
  const distinctTypes = db.prepare('SELECT DISTINCT event_type FROM dataset_events WHERE dataset_id = ? ORDER BY event_type').pluck();
  return {
    async add(datasetId, eventType, eventData) {
      insert.run(newId(), datasetId, eventType, JSON.stringify(eventData ?? null), Date.now());
    },
    async list(datasetId, eventTypes, page, pageSize) {
      const types = eventTypes && eventTypes.length > 0 ? eventTypes : null;
      const where = `dataset_id = ?${types ? ` AND event_type IN (${types.map(() => '?').join(', ')})` : ''}`;
      const args = [datasetId, ...(types ?? [])];
      const rows = db
        .prepare(`SELECT * FROM dataset_events WHERE ${where} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`)
        .all(...args, pageSize, (page - 1) * pageSize) as { id: string; dataset_id: string; event_type: string; event_data: string; created_at: number }[];
      const total = (db.prepare(`SELECT COUNT(*) AS n FROM dataset_events WHERE ${where}`).get(...args) as { n: number }).n;
      return {
        events: rows.map((r) => ({ id: r.id, datasetId: r.dataset_id, eventType: r.event_type, eventData: JSON.parse(r.event_data), createdAt: r.created_at })),
        total,
      };
    },
    async types(datasetId) {
      return distinctTypes.all(datasetId) as string[];
    },
  };
}
