/** POST /api/chunk/suggestions: search queries a model suggests from the chunks a query finds (or the dataset's first ones). */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { htmlToText } from '../../core/domain/html-text.js';
import { Role } from '../../core/domain/tenancy.js';
import { suggestQueries } from '../../core/llm/provider.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { planRetrieval, runRetrieval } from '../rag/retrieval.js';
import { shortCompletion } from '../rag/short-completion.js';
import { parseScroll } from '../schemas/search.js';
import { parseSuggestions } from '../schemas/suggestions.js';
import type { QuarryRouter } from './router.js';

/** Chunks the suggestions are drawn from. */
const SUGGESTION_CHUNKS = 10;
/** Characters of each chunk's text given to the model: the start says what a chunk is about. */
const SUGGESTION_TEXT_LENGTH = 2000;

/** Registers the suggestions route (read role, like search). Registered before chunkRoutes: /api/chunk/:chunk_id would take it. */
export function suggestionRoutes(router: QuarryRouter, services: Services): void {
  router.post('/api/chunk/suggestions', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Read);
    const req = parseSuggestions(ctx.state.body);
    const body = (ctx.state.body ?? {}) as Record<string, unknown>;
    let chunks: ChunkRecord[];
    if (req.query !== null) {
      const planned = planRetrieval(dataset, body, req.query, SUGGESTION_CHUNKS);
      chunks = (await runRetrieval(ctx, services, dataset.id, planned, { record: false })).results.map((r) => r.c);
    } else {
      // No query: the dataset's first chunks (in id order) that pass the filters.
      const scroll = parseScroll({ filters: body.filters, page_size: SUGGESTION_CHUNKS });
      const ids = await ctx.state.core.scroll({
        dataset_id: dataset.id,
        filter: scroll.filter,
        offset_chunk_id: '',
        limit: SUGGESTION_CHUNKS,
        sort_field: '',
        sort_direction: 'asc',
      });
      chunks = await services.store.chunks.getMany(dataset.id, ids);
    }
    const texts = [
      ...(req.context !== null ? [req.context] : []),
      ...chunks.map((c) => htmlToText(c.chunkHtml ?? '').slice(0, SUGGESTION_TEXT_LENGTH)).filter((t) => t.trim() !== ''),
    ];
    if (texts.length === 0 && req.query === null) {
      // Nothing to suggest from: an empty dataset answers without asking a model.
      ctx.body = { queries: [] };
      return;
    }
    const queries = await shortCompletion(ctx, services.config, dataset, 'Error getting suggested queries', ({ provider, options, signal }) =>
      suggestQueries(provider, texts, req.query, options, signal),
    );
    ctx.body = { queries: queries.slice(0, req.count) };
  });
}
