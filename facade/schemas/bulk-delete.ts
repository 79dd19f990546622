/** Body of DELETE /api/chunk: the filter whose matching chunks are deleted. */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import type { Filter } from '../../core/domain/filter.js';
import { parse, requireBody } from './common.js';
import { chunkFilter } from './filter.js';

const bulkDeleteBody = z.object({ filter: z.unknown().optional() });

/**
 * Validates a bulk delete body. A filter with no condition is a 400, not "delete everything":
 * clearing a dataset is PUT /api/dataset/clear/{id}, and a missing or mistyped member must never
 * empty a dataset.
 */
export function parseBulkDelete(body: unknown): Filter {
  requireBody(body, 'a JSON object with "filter" (a ChunkFilter)');
  const raw = parse(bulkDeleteBody, body).filter;
  if (raw === undefined || raw === null) throw badRequest('filter is required: a ChunkFilter with must, must_not or should conditions');
  const filter = parse(z.object({ filter: chunkFilter }), { filter: raw }).filter;
  if (filter === null) {
    throw badRequest('filter has no condition; to delete every chunk of the dataset use PUT /api/dataset/clear/{dataset_id}');
  }
  return filter;
}
