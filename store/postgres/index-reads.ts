/**
 * What the search core reads to index a slice of chunks, in one statement: the chunks, their
 * group ids and their vectors. Separate reads cost the core a round trip each, and under
 * concurrent writes each one also waits its turn on a busy event loop (see ARCHITECTURE.md §4).
 */
import type { IndexedChunk, IndexReads } from '../repository.js';
import { indexedChunkFromRow } from '../rows.js';
import { COLUMNS } from './chunks.js';
import { byKeys } from './keyed-reads.js';
import type { PgDb } from './database.js';
import { sparseFromBlobs } from './sparse-vectors.js';
import { fromBlob } from './vectors.js';

/**
 * Chunks per read: the change log's whole batch (512 entries) in one statement. The rows are
 * parsed as they arrive on the socket, a packet at a time, so a large read does not hold the
 * event loop in one piece as SQLite's synchronous reads would.
 */
const SLICE = 512;

// The chunks are found by key (byKeys: one index probe each); the group ids come in the order
// groupsOfChunks gives them (oldest group first), and only groups of the dataset count, as there.
const READ = `SELECT c.*,
    ARRAY(SELECT g.id FROM chunk_group_members m JOIN chunk_groups g ON g.id = m.group_id
          WHERE m.chunk_id = c.id AND g.dataset_id = $1 ORDER BY g.created_at, g.id) AS ix_group_ids,
    v.vector AS ix_vector, s.indices AS ix_sparse_indices, s.vals AS ix_sparse_vals
  FROM (${byKeys(COLUMNS, 'chunks', 'id')}) AS c
  LEFT JOIN chunk_vectors v ON v.chunk_id = c.id AND v.model = $3::text
  LEFT JOIN chunk_sparse_vectors s ON s.chunk_id = c.id AND s.model = $4::text`;

/** Builds the PostgreSQL reads of the search core's apply. */
export function pgIndexReads(db: PgDb): IndexReads {
  return {
    sliceSize: SLICE,
    async chunks(datasetId, ids, model, sparseModel) {
      if (ids.length === 0) return [];
      const rows = await db.all(READ, [datasetId, [...new Set(ids)], model, sparseModel]);
      const byId = new Map<string, IndexedChunk>();
      for (const r of rows) {
        byId.set(r.id as string, {
          chunk: indexedChunkFromRow(r),
          groupIds: r.ix_group_ids as string[],
          vector: r.ix_vector ? fromBlob(r.ix_vector as Buffer) : null,
          sparse: r.ix_sparse_indices && r.ix_sparse_vals ? sparseFromBlobs(r.ix_sparse_indices as Buffer, r.ix_sparse_vals as Buffer) : null,
        });
      }
      return ids.flatMap((id) => {
        const found = byId.get(id);
        return found ? [found] : [];
      });
    },
  };
}
