/**
 * Autocomplete's ranking, shared by POST /api/chunk/autocomplete and
 * POST /api/chunk_group/group_oriented_autocomplete: the reference adds "content contains the
 * query" to the filter; here every query word is required and the word still being typed (the
 * last one, when the query does not end in a space) matches as a prefix. With `extend`, the plain
 * search's other results follow those, up to the page.
 */
import { lastWordBeingTyped } from '../../core/domain/completions.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import type { Services } from '../context.js';
import { runChunkSearch, type ChunkSearch, type ChunkSearchResult } from './chunk-search.js';
import { withTermConditions } from './query-syntax.js';

/** Runs an autocomplete of the processed query `search.text`; `extend` appends non-prefix matches. */
export async function runAutocomplete(services: Services, dataset: DatasetRecord, search: ChunkSearch, extend: boolean): Promise<ChunkSearchResult> {
  const typing = lastWordBeingTyped(search.text) !== null;
  const prefixed = { ...search, filter: withTermConditions(search.filter, [typing ? `${search.text}*` : search.text], []), prefixLastWord: typing };
  const found = await runChunkSearch(services, dataset, prefixed);
  if (!extend || found.results.length >= search.limit) return found;
  const more = await runChunkSearch(services, dataset, { ...search, offset: 0, limit: search.limit + found.results.length, countTotal: false });
  const seen = new Set(found.results.map((r) => r.c.id));
  const extra = more.results.filter((r) => !seen.has(r.c.id)).slice(0, search.limit - found.results.length);
  return { ...found, results: [...found.results, ...extra] };
}
