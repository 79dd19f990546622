/** PostgreSQL repository of SPLADE sparse vectors (indices and values as little-endian BYTEA, as SQLite's BLOBs). */
import { QuarryError } from '../../core/domain/errors.js';
import type { SparseVector } from '../../core/domain/sparse-vector.js';
import type { SparseVectorRepository } from '../repository.js';
import { chunkFromRow } from '../rows.js';
import { appendChanges, datasetTx } from './change-log.js';
import { byKeys } from './keyed-reads.js';
import type { PgDb } from './database.js';
import { ownedArray } from './vectors.js';

const blob = (a: Uint32Array | Float32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** A sparse vector from its two BYTEA columns, in arrays that own their memory. */
export function sparseFromBlobs(indices: Buffer, vals: Buffer): SparseVector {
  return {
    indices: ownedArray(indices, (buf, off, len) => new Uint32Array(buf, off, len), 4),
    values: ownedArray(vals, (buf, off, len) => new Float32Array(buf, off, len), 4),
  };
}

/** Builds the sparse-vector repository. */
export function pgSparseVectors(db: PgDb): SparseVectorRepository {
  const outdated = `FROM chunks c LEFT JOIN chunk_sparse_vectors v ON v.chunk_id = c.id
    WHERE c.dataset_id = $1 AND (v.chunk_id IS NULL OR v.model != $2 OR v.source_updated_at != c.updated_at)`;

  return {
    async pending(datasetId, model, limit) {
      const rows = await db.all(`SELECT c.* ${outdated} ORDER BY c.id LIMIT $3`, [datasetId, model, limit < 0 ? null : limit]);
      return rows.map((row) => ({ chunk: chunkFromRow(row), sourceUpdatedAt: row.updated_at as number }));
    },
    async pendingCount(datasetId, model) {
      return (await db.get<{ n: number }>(`SELECT COUNT(*) AS n ${outdated}`, [datasetId, model]))!.n;
    },
    async put(datasetId, model, vectors) {
      if (vectors.length === 0) return 0;
      return datasetTx(
        db,
        datasetId,
        async (tx) => {
          const now = Date.now();
          const rows = await tx.all<{ id: string; updated_at: number }>(byKeys('id, updated_at', 'chunks', 'id'), [
            datasetId,
            [...new Set(vectors.map((v) => v.chunkId))],
          ]);
          const current = new Map(rows.map((r) => [r.id, r.updated_at]));
          // As SQLite's loop: every vector that passes counts and is logged; per chunk the last one stays.
          const accepted: string[] = [];
          const last = new Map<string, { sourceUpdatedAt: number; vector: SparseVector }>();
          for (const v of vectors) {
            // Deleted or edited while it was being encoded: the vector is stale, the next round redoes it.
            if (current.get(v.chunkId) !== v.sourceUpdatedAt) continue;
            accepted.push(v.chunkId);
            last.set(v.chunkId, v);
          }
          if (accepted.length === 0) return 0;
          const ids = [...last.keys()];
          const picked = ids.map((id) => last.get(id)!);
          await tx.run(
            `INSERT INTO chunk_sparse_vectors (chunk_id, dataset_id, model, source_updated_at, indices, vals, updated_at)
             SELECT u.chunk_id, $1::text, $2::text, u.source_updated_at, u.indices, u.vals, $3::bigint
             FROM unnest($4::text[], $5::bigint[], $6::bytea[], $7::bytea[]) AS u(chunk_id, source_updated_at, indices, vals)
             ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, source_updated_at = excluded.source_updated_at, indices = excluded.indices, vals = excluded.vals, updated_at = excluded.updated_at`,
            [
              datasetId,
              model,
              now,
              ids,
              picked.map((v) => v.sourceUpdatedAt),
              picked.map((v) => blob(v.vector.indices)),
              picked.map((v) => blob(v.vector.values)),
            ],
          );
          await appendChanges(
            tx,
            datasetId,
            accepted.map((chunkId) => ({ chunkId, op: 'upsert' as const })),
            now,
          );
          return accepted.length;
        },
        (err) => new QuarryError('internal', 'Concurrent sparse vector writes collided; retry', { cause: err }),
      );
    },
    async getMany(chunkIds, model) {
      const out = new Map<string, SparseVector>();
      if (chunkIds.length === 0) return out;
      const rows = await db.all<{ chunk_id: string; indices: Buffer; vals: Buffer }>(
        'SELECT chunk_id, indices, vals FROM chunk_sparse_vectors WHERE chunk_id = ANY($1::text[]) AND model = $2',
        [[...new Set(chunkIds)], model],
      );
      const byId = new Map(rows.map((r) => [r.chunk_id, r]));
      for (const id of chunkIds) {
        const row = byId.get(id);
        if (row) out.set(id, sparseFromBlobs(row.indices, row.vals));
      }
      return out;
    },
  };
}
