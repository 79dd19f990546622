/** SQLite repository of SPLADE sparse vectors (indices and values as little-endian BLOBs). */
import type { SparseVector } from '../../core/domain/sparse-vector.js';
import type { SparseVectorRepository } from '../repository.js';
import type { ChangeLogWriter } from './change-log.js';
import type { Db } from './database.js';
import { chunkFromRow } from '../rows.js';

const blob = (a: Uint32Array | Float32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
/** A copy that owns its memory (no view into SQLite's buffer). */
export const own = (b: Buffer): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** Builds the sparse-vector repository. */
export function sqliteSparseVectors(db: Db, log: ChangeLogWriter): SparseVectorRepository {
  const outdated = `FROM chunks c LEFT JOIN chunk_sparse_vectors v ON v.chunk_id = c.id
    WHERE c.dataset_id = ? AND (v.chunk_id IS NULL OR v.model != ? OR v.source_updated_at != c.updated_at)`;
  const pending = db.prepare(`SELECT c.* ${outdated} ORDER BY c.id LIMIT ?`);
  const pendingCount = db.prepare(`SELECT COUNT(*) AS n ${outdated}`);
  const current = db.prepare('SELECT updated_at FROM chunks WHERE id = ? AND dataset_id = ?');
  const upsert = db.prepare(
    `INSERT INTO chunk_sparse_vectors (chunk_id, dataset_id, model, source_updated_at, indices, vals, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(chunk_id) DO UPDATE SET model = excluded.model, source_updated_at = excluded.source_updated_at, indices = excluded.indices, vals = excluded.vals, updated_at = excluded.updated_at`,
  );
  const byId = db.prepare('SELECT indices, vals FROM chunk_sparse_vectors WHERE chunk_id = ? AND model = ?');

  const put = db.transaction((datasetId: string, model: string, vectors: readonly { chunkId: string; sourceUpdatedAt: number; vector: SparseVector }[]) => {
    const now = Date.now();
    let stored = 0;
    for (const v of vectors) {
      const row = current.get(v.chunkId, datasetId) as { updated_at: number } | undefined;
      // Deleted or edited while it was being encoded: the vector is stale, the next round redoes it.
      if (!row || row.updated_at !== v.sourceUpdatedAt) continue;
      upsert.run(v.chunkId, datasetId, model, v.sourceUpdatedAt, blob(v.vector.indices), blob(v.vector.values), now);
      log.upsert(datasetId, v.chunkId, now);
      stored++;
    }
    return stored;
  });

  return {
    async pending(datasetId, model, limit) {
      return (pending.all(datasetId, model, limit) as Record<string, unknown>[]).map((row) => ({ chunk: chunkFromRow(row), sourceUpdatedAt: row.updated_at as number }));
    },
    async pendingCount(datasetId, model) {
      return (pendingCount.get(datasetId, model) as { n: number }).n;
    },
    async put(datasetId, model, vectors) {
      return put.immediate(datasetId, model, vectors);
    },
    async getMany(chunkIds, model) {
      const out = new Map<string, SparseVector>();
      for (const id of chunkIds) {
        const row = byId.get(id, model) as { indices: Buffer; vals: Buffer } | undefined;
        if (row) out.set(id, { indices: new Uint32Array(own(row.indices)), values: new Float32Array(own(row.vals)) });
      }
      return out;
    },
  };
}
