/**
 * What the search core reads to index a slice of chunks, in one read transaction: the chunks,
 * their group ids and their vectors. Read through the repositories, each chunk cost four
 * statements with a snapshot each and went through the chunk read cache, filling it with chunks
 * no request asked for (a 50,000-row import: ~2.5 s of the core's thread in those reads). Alone,
 * 50,000 chunks read 17 us each that way and 14 us each here; most of the rest is better-sqlite3
 * building a 21-property object per row (a `.raw()` row costs 6.7 us).
 */
import type { IndexedChunk, IndexReads } from '../repository.js';
import { chunkFromRow } from '../rows.js';
import { COLUMNS } from './chunks.js';
import type { Db } from './database.js';
import { GROUPS_OF_CHUNK_FROM } from './groups.js';
import { own } from './sparse-vectors.js';
import { fromBlob } from './vectors.js';

/**
 * Chunks per read: SQLite's reads hold the core's thread, so a slice stays small (~0.5 ms here)
 * and other requests run between slices.
 */
const SLICE = 64;

/** Builds the SQLite reads of the search core's apply. */
export function sqliteIndexReads(db: Db): IndexReads {
  const chunk = db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE dataset_id = ? AND id = ?`);
  const groupIds = db.prepare(`SELECT g.id ${GROUPS_OF_CHUNK_FROM}`).pluck();
  const vector = db.prepare('SELECT vector FROM chunk_vectors WHERE chunk_id = ? AND model = ?').pluck();
  const sparse = db.prepare('SELECT indices, vals FROM chunk_sparse_vectors WHERE chunk_id = ? AND model = ?');
  const read = db.transaction((datasetId: string, ids: readonly string[], model: string, sparseModel: string | null): IndexedChunk[] => {
    const out: IndexedChunk[] = [];
    for (const id of ids) {
      const row = chunk.get(datasetId, id) as Record<string, unknown> | undefined;
      if (!row) continue;
      const v = vector.get(id, model) as Buffer | undefined;
      const s = sparseModel === null ? undefined : (sparse.get(id, sparseModel) as { indices: Buffer; vals: Buffer } | undefined);
      out.push({
        chunk: chunkFromRow(row),
        groupIds: groupIds.all(id, datasetId) as string[],
        vector: v ? fromBlob(v) : null,
        sparse: s ? { indices: new Uint32Array(own(s.indices)), values: new Float32Array(own(s.vals)) } : null,
      });
    }
    return out;
  });
  return {
    sliceSize: SLICE,
    async chunks(datasetId, ids, model, sparseModel) {
      return ids.length === 0 ? [] : read(datasetId, ids, model, sparseModel);
    },
  };
}
