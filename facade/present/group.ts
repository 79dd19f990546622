/** Chunk groups on the wire. */
import type { GroupRecord } from '../../core/domain/group.js';
import { formatTimestamp } from '../../core/domain/time.js';
import { withFields } from '../../core/domain/with-fields.js';

/** ChunkGroup. */
export function group(g: GroupRecord): Record<string, unknown> {
  return {
    id: g.id,
    dataset_id: g.datasetId,
    name: g.name,
    description: g.description,
    tracking_id: g.trackingId,
    metadata: g.metadata,
    tag_set: [...g.tagSet],
    created_at: formatTimestamp(g.createdAt),
    updated_at: formatTimestamp(g.updatedAt),
  };
}

/** ChunkGroupAndFileId: a group with the file it came from (null for groups made by the API). */
export function groupWithFile(g: GroupRecord): Record<string, unknown> {
  return withFields(group(g), { file_id: g.fileId });
}
