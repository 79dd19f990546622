/**
 * Groups of ranked chunks on the wire: V2 `{group, chunks: ScoreChunk[], file_id}`
 * (SearchOverGroupsResults) and V1 GroupScoreChunk, whose group fields are flattened with a
 * `group_` prefix beside `metadata: ScoreChunkDTO[]`.
 */
import type { GroupRecord } from '../../core/domain/group.js';
import { formatTimestamp } from '../../core/domain/time.js';
import type { ApiVersion } from '../access.js';
import { group as presentGroup } from './group.js';

/** A group and its already shaped chunks (ScoreChunk for V2, ScoreChunkDTO for V1). */
export interface ShapedGroup {
  readonly group: GroupRecord;
  readonly chunks: readonly Record<string, unknown>[];
}

/** V1 GroupScoreChunk. */
export function groupScoreChunkV1(g: ShapedGroup): Record<string, unknown> {
  return {
    group_id: g.group.id,
    group_name: g.group.name,
    group_description: g.group.description,
    group_created_at: formatTimestamp(g.group.createdAt),
    group_updated_at: formatTimestamp(g.group.updatedAt),
    group_tracking_id: g.group.trackingId,
    group_metadata: g.group.metadata,
    group_tag_set: [...g.group.tagSet],
    group_dataset_id: g.group.datasetId,
    metadata: g.chunks,
    file_id: g.group.fileId,
  };
}

/** V2 SearchOverGroupsResults. */
export function searchOverGroupsResultV2(g: ShapedGroup): Record<string, unknown> {
  return { group: presentGroup(g.group), chunks: g.chunks, file_id: g.group.fileId };
}

/** A group result in the shape of the caller's API version. */
export function groupResultFor(version: ApiVersion, g: ShapedGroup): Record<string, unknown> {
  return version === 'V1' ? groupScoreChunkV1(g) : searchOverGroupsResultV2(g);
}
