/** PostgreSQL dense-vector and dataset-event repositories. */
import { QuarryError } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { semanticHash } from '../../core/domain/semantic-text.js';
import type { DatasetEventRepository, VectorRepository } from '../repository.js';
import { chunkFromRow } from '../rows.js';
import { appendChanges, datasetTx } from './change-log.js';
import { byKeys } from './keyed-reads.js';
import type { PgDb } from './database.js';

/** Float32 vector to BYTEA, byte for byte what SQLite's BLOB holds (little-endian, as typed arrays are on every supported machine). */
const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/**
 * A view of `b` as `T` when that is safe (aligned, and the buffer is b's alone, not a slice of
 * the driver's shared pool), else a copy: either way an array that owns its memory.
 */
export function ownedArray<T>(b: Buffer, make: (buffer: ArrayBuffer, byteOffset?: number, length?: number) => T, width: number): T {
  if (b.byteOffset % width === 0 && b.buffer.byteLength === b.byteLength && b.buffer instanceof ArrayBuffer) {
    return make(b.buffer, b.byteOffset, b.byteLength / width);
  }
  return make(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
}

/** BYTEA to a Float32Array that owns its memory. */
export const fromBlob = (b: Buffer): Float32Array => ownedArray(b, (buf, off, len) => new Float32Array(buf, off, len), 4);

/** A unique violation here can only be a driver race on chunk_vectors' key, which the dataset lock rules out; never shown raw. */
const vectorConflict = (err: unknown): QuarryError => new QuarryError('internal', 'Concurrent vector writes collided; retry', { cause: err });

/** Builds the vector repository. */
export function pgVectors(db: PgDb): VectorRepository {
  // A chunk is pending when its vector is missing or made from other text (STALE, exactly the
  // WHERE of the partial index chunks_embed_stale, so the planner uses it), or made by another
  // model (a range of chunks_vector_model). Both read only pending rows.
  const STALE = 'vector_hash IS NULL OR semantic_hash IS NULL OR vector_hash != semantic_hash';
  const OTHER_MODEL = `(vector_model < $2 OR vector_model > $2) AND NOT (${STALE})`;

  return {
    async pending(datasetId, model, limit) {
      const rows = await db.all(`SELECT * FROM chunks WHERE dataset_id = $1 AND (${STALE}) ORDER BY id LIMIT $2`, [datasetId, limit < 0 ? null : limit]);
      if (limit < 0 || rows.length < limit) {
        const rest = limit < 0 ? null : limit - rows.length;
        rows.push(...(await db.all(`SELECT * FROM chunks WHERE dataset_id = $1 AND ${OTHER_MODEL} ORDER BY id LIMIT $3`, [datasetId, model, rest])));
      }
      return rows.map((row) => {
        const chunk = chunkFromRow(row);
        return { chunk, contentHash: (row.semantic_hash as string | null) ?? semanticHash(chunk) };
      });
    },
    async pendingCount(datasetId, model) {
      const row = await db.get<{ n: number }>(
        `SELECT (SELECT COUNT(*) FROM chunks WHERE dataset_id = $1 AND (${STALE})) + (SELECT COUNT(*) FROM chunks WHERE dataset_id = $1 AND ${OTHER_MODEL}) AS n`,
        [datasetId, model],
      );
      return row!.n;
    },
    async put(datasetId, model, vectors) {
      if (vectors.length === 0) return 0;
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const now = Date.now();
          const rows = await tx.all(
            byKeys('id, chunk_html, semantic_content, convert_html_to_text, semantic_boost, semantic_hash', 'chunks', 'id'),
            [datasetId, [...new Set(vectors.map((v) => v.chunkId))]],
          );
          const current = new Map(rows.map((r) => [r.id as string, r]));
          // What SQLite's loop stores: per chunk the last vector that passed (a later one replaces
          // an earlier one), while every pass counts and is logged.
          const accepted: string[] = [];
          const last = new Map<string, { contentHash: string; vector: Float32Array }>();
          for (const v of vectors) {
            const row = current.get(v.chunkId);
            // The chunk was deleted or edited while it was being embedded: that vector is stale, drop it.
            if (!row) continue;
            const hash =
              (row.semantic_hash as string | null) ??
              semanticHash(chunkFromRow({ ...row, tag_set: '[]', metadata: null, image_urls: null, fulltext_boost: null }));
            if (hash !== v.contentHash) continue;
            accepted.push(v.chunkId);
            last.set(v.chunkId, v);
          }
          if (accepted.length === 0) return 0;
          const ids = [...last.keys()];
          const hashes = ids.map((id) => last.get(id)!.contentHash);
          await tx.run(
            `INSERT INTO chunk_vectors (chunk_id, dataset_id, model, dimension, content_hash, vector, updated_at)
             SELECT u.chunk_id, $1::text, $2::text, u.dimension, u.content_hash, u.vector, $3::bigint
             FROM unnest($4::text[], $5::integer[], $6::text[], $7::bytea[]) AS u(chunk_id, dimension, content_hash, vector)
             ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, content_hash = excluded.content_hash, vector = excluded.vector, updated_at = excluded.updated_at`,
            [datasetId, model, now, ids, ids.map((id) => last.get(id)!.vector.length), hashes, ids.map((id) => toBlob(last.get(id)!.vector))],
          );
          // The backfill of a missing semantic_hash (the hash just checked equals it) and the
          // vector's tags beside the chunk, in one statement.
          await tx.run(
            `UPDATE chunks AS c SET vector_model = $1, vector_hash = u.hash, semantic_hash = COALESCE(c.semantic_hash, u.hash)
             FROM unnest($2::text[], $3::text[]) AS u(id, hash) WHERE c.id = u.id`,
            [model, ids, hashes],
          );
          await appendChanges(
            tx,
            datasetId,
            accepted.map((chunkId) => ({ chunkId, op: 'upsert' as const })),
            now,
          );
          return accepted.length;
        },
        vectorConflict,
      );
    },
    async getMany(chunkIds, model) {
      const out = new Map<string, Float32Array>();
      if (chunkIds.length === 0) return out;
      const rows = await db.all<{ chunk_id: string; vector: Buffer }>('SELECT chunk_id, vector FROM chunk_vectors WHERE chunk_id = ANY($1::text[]) AND model = $2', [
        [...new Set(chunkIds)],
        model,
      ]);
      const byId = new Map(rows.map((r) => [r.chunk_id, r.vector]));
      for (const id of chunkIds) {
        const b = byId.get(id);
        if (b) out.set(id, fromBlob(b));
      }
      return out;
    },
  };
}

/** Builds the dataset-event repository. */
export function pgDatasetEvents(db: PgDb): DatasetEventRepository {
  return {
    async add(datasetId, eventType, eventData) {
      await db.run('INSERT INTO dataset_events (id, dataset_id, event_type, event_data, created_at) VALUES ($1, $2, $3, $4, $5)', [
        newId(),
        datasetId,
        eventType,
        JSON.stringify(eventData ?? null),
        Date.now(),
      ]);
    },
    async list(datasetId, eventTypes, pageNo, pageSize) {
      const types = eventTypes && eventTypes.length > 0 ? eventTypes : null;
      // One text per case: with and without the type filter (an array, so any number of types).
      const where = `dataset_id = $1${types ? ' AND event_type = ANY($2::text[])' : ''}`;
      const args: unknown[] = types ? [datasetId, types] : [datasetId];
      const n = args.length;
      const [rows, count] = await Promise.all([
        db.all<{ id: string; dataset_id: string; event_type: string; event_data: string; created_at: number }>(
          `SELECT * FROM dataset_events WHERE ${where} ORDER BY created_at DESC, id LIMIT $${n + 1} OFFSET $${n + 2}`,
          [...args, pageSize < 0 ? null : pageSize, Math.max(0, (pageNo - 1) * pageSize)],
        ),
        db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM dataset_events WHERE ${where}`, args),
      ]);
      return {
        events: rows.map((r) => ({ id: r.id, datasetId: r.dataset_id, eventType: r.event_type, eventData: JSON.parse(r.event_data), createdAt: r.created_at })),
        total: count!.n,
      };
    },
    async types(datasetId) {
      const rows = await db.all<{ event_type: string }>('SELECT DISTINCT event_type FROM dataset_events WHERE dataset_id = $1 ORDER BY event_type', [datasetId]);
      return rows.map((r) => r.event_type);
    },
  };
}
