/**
 * The chunk records a write makes, and the checks of a batch's tracking ids, shared by both
 * stores so that the same input stores the same record and fails with the same error on each.
 */
import type { ChunkInput, ChunkPatch, ChunkRecord } from '../core/domain/chunk.js';
import { QuarryError } from '../core/domain/errors.js';
import { newId } from '../core/domain/ids.js';

/** What a stored chunk keeps when an upsert by tracking id replaces it. */
export interface ReplacedChunk {
  readonly id: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * Checks a batch's tracking ids against each other and against the stored chunks (`stored(tid)`),
 * in input order; returns the stored chunk each upserting input replaces, by input index.
 * Throws `duplicate_tracking_id` for a repeat within the batch, or a stored one without upsert.
 */
export function checkTrackingIds(
  inputs: readonly ChunkInput[],
  upsert: readonly boolean[],
  stored: (trackingId: string) => ReplacedChunk | undefined,
): Map<number, ReplacedChunk> {
  const seen = new Set<string>();
  const existing = new Map<number, ReplacedChunk>();
  inputs.forEach((input, i) => {
    const tid = input.trackingId;
    if (tid === undefined || tid === null) return;
    if (seen.has(tid)) {
      throw new QuarryError('duplicate_tracking_id', `Duplicate tracking_id "${tid}" appears more than once in this request; nothing was stored`);
    }
    seen.add(tid);
    const found = stored(tid);
    if (found && !upsert[i]) {
      throw new QuarryError(
        'duplicate_tracking_id',
        `A chunk with tracking_id "${tid}" already exists in this dataset; nothing from this request was stored (set upsert_by_tracking_id to replace it)`,
      );
    }
    if (found) existing.set(i, found);
  });
  return existing;
}

/** The record an input makes at `now`; replacing `stored` keeps its id and creation time. */
export function newChunkRecord(datasetId: string, input: ChunkInput, stored: ReplacedChunk | undefined, now: number): ChunkRecord {
  return {
    id: stored?.id ?? newId(),
    datasetId,
    trackingId: input.trackingId ?? null,
    chunkHtml: input.chunkHtml ?? null,
    link: input.link ?? null,
    metadata: input.metadata ?? null,
    tagSet: input.tagSet ?? [],
    timeStamp: input.timeStamp ?? null,
    weight: input.weight ?? 0,
    imageUrls: input.imageUrls ?? null,
    location: input.location ?? null,
    numValue: input.numValue ?? null,
    semanticContent: input.semanticContent ?? null,
    fulltextContent: input.fulltextContent ?? null,
    convertHtmlToText: input.convertHtmlToText ?? true,
    fulltextBoost: input.fulltextBoost ?? null,
    semanticBoost: input.semanticBoost ?? null,
    createdAt: stored?.createdAt ?? now,
    updatedAt: stored ? Math.max(now, stored.updatedAt) : now,
  };
}

/** `current` with the fields `patch` sets (undefined keeps a field), updated at `now`. */
export function patchedChunkRecord(current: ChunkRecord, patch: ChunkPatch, now: number): ChunkRecord {
  const keep = <T>(next: T | undefined, old: T): T => (next === undefined ? old : next);
  return {
    ...current,
    trackingId: keep(patch.newTrackingId, current.trackingId),
    chunkHtml: keep(patch.chunkHtml, current.chunkHtml),
    link: keep(patch.link, current.link),
    metadata: keep(patch.metadata, current.metadata),
    tagSet: keep(patch.tagSet, current.tagSet) ?? [],
    timeStamp: keep(patch.timeStamp, current.timeStamp),
    weight: keep(patch.weight, current.weight) ?? current.weight,
    imageUrls: keep(patch.imageUrls, current.imageUrls),
    location: keep(patch.location, current.location),
    numValue: keep(patch.numValue, current.numValue),
    semanticContent: keep(patch.semanticContent, current.semanticContent),
    fulltextContent: keep(patch.fulltextContent, current.fulltextContent),
    convertHtmlToText: keep(patch.convertHtmlToText, current.convertHtmlToText),
    fulltextBoost: keep(patch.fulltextBoost, current.fulltextBoost),
    semanticBoost: keep(patch.semanticBoost, current.semanticBoost),
    updatedAt: now,
  };
}
