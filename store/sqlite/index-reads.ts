/**
 * What the search core reads to index a slice of chunks, in one read transaction: the chunks,
 * their group ids and their vectors. Read through the repositories, each chunk cost four
 * statements with a snapshot each and went through the chunk read cache, filling it with chunks
 * no request asked for (a 50,000-row import: ~2.5 s of the core's thread in those reads). Then
 * three statements per chunk, most of their cost better-sqlite3 building a 21-property object
 * per row and parsing JSON columns no index needs. Now one statement per chunk, its row an array
 * of the indexed columns only, with the group ids and the dense vector in it: 20,000 product-like
 * chunks read 7.3-10.7 us each before, 4.8-5.2 us now (alternated, loaded machine).
 */
import type { IndexedChunkFields } from '../../core/domain/chunk.js';
import type { IndexedChunk, IndexReads } from '../repository.js';
import { fromJson } from '../rows.js';
import type { Db } from './database.js';
import { own } from './sparse-vectors.js';
import { fromBlob } from './vectors.js';

/**
 * Chunks per read: SQLite's reads hold the core's thread, so a slice stays small (~0.5 ms here)
 * and other requests run between slices.
 */
const SLICE = 64;

// The group ids as groupsOfChunks orders them (oldest group first), groups of the dataset only;
// json_group_array keeps its ORDER BY (SQLite 3.44+). Column order is what indexedFields reads.
const READ = `SELECT c.id, c.tracking_id, c.chunk_html, c.link, c.metadata, c.tag_set, c.time_stamp, c.lat, c.lon, c.num_value,
    c.fulltext_content, c.convert_html_to_text, c.fulltext_boost,
    (SELECT json_group_array(g.id ORDER BY g.created_at, g.id) FROM chunk_group_members m CROSS JOIN chunk_groups g ON g.id = m.group_id
      WHERE m.chunk_id = c.id AND g.dataset_id = c.dataset_id) AS group_ids,
    v.vector
  FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id AND v.model = ?
  WHERE c.dataset_id = ? AND c.id = ?`;

/** A row of {@link READ} as the fields the core indexes (the conversions of `chunkFromRow`). */
function indexedFields(r: unknown[]): IndexedChunkFields {
  const lat = r[7] as number | null;
  const lon = r[8] as number | null;
  return {
    id: r[0] as string,
    trackingId: r[1] as string | null,
    chunkHtml: r[2] as string | null,
    link: r[3] as string | null,
    // As stored: the shard parses it only if a filter or sort reads it (~12% of the core's CPU in
    // a 200,000-row product import went to parsing, sending and collecting these objects).
    metadataJson: r[4] as string | null,
    tagSet: fromJson(r[5] as string | null, []),
    timeStamp: r[6] as number | null,
    location: lat === null || lon === null ? null : { lat, lon },
    numValue: r[9] as number | null,
    fulltextContent: r[10] as string | null,
    convertHtmlToText: r[11] === 1,
    fulltextBoost: fromJson(r[12] as string | null, null),
  };
}

/** Builds the SQLite reads of the search core's apply. */
export function sqliteIndexReads(db: Db): IndexReads {
  const chunk = db.prepare(READ).raw();
  const sparse = db.prepare('SELECT indices, vals FROM chunk_sparse_vectors WHERE chunk_id = ? AND model = ?').raw();
  const read = db.transaction((datasetId: string, ids: readonly string[], model: string, sparseModel: string | null): IndexedChunk[] => {
    const out: IndexedChunk[] = [];
    for (const id of ids) {
      const row = chunk.get(model, datasetId, id) as unknown[] | undefined;
      if (!row) continue;
      const v = row[14] as Buffer | null;
      const s = sparseModel === null ? undefined : (sparse.get(id, sparseModel) as [Buffer, Buffer] | undefined);
      out.push({
        chunk: indexedFields(row),
        groupIds: JSON.parse(row[13] as string) as string[],
        vector: v ? fromBlob(v) : null,
        sparse: s ? { indices: new Uint32Array(own(s[0])), values: new Float32Array(own(s[1])) } : null,
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
