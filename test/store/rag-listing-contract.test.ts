/**
 * `rag_queries` pages on both stores (store/reports/rag-events.ts): the page's last value is found
 * first and the answers tied at it are taken by id, so pages must be exactly those of a sort of
 * every answer by (column, id ascending), however large the block of ties: every answer at the
 * default hallucination score 0, top scores drawn from four values, times with ties, for both
 * orders, pages across the tie blocks and past the end, with and without a rag type filter.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ragQueries, RAG_SORT_COLUMNS } from '../../store/reports/rag-events.js';
import { ragRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';

describe.each(STORE_KINDS)('%s store: rag_queries pages', (kind) => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(kind);
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('are the pages of a full sort by (column, id), whatever the ties', async () => {
    const r = rng(41);
    const answers = Array.from({ length: 120 }, (_, i) =>
      ragRecord({
        // Ids out of insertion order, so that id order is not time order.
        id: `00000000-0000-4000-8000-${((i * 37) % 120).toString(16).padStart(12, '0')}`,
        datasetId: r() < 0.85 ? DATASET : OTHER,
        ragType: r() < 0.5 ? 'chosen_chunks' : 'all_chunks',
        topScore: [0, 0.25, 0.5, 0.75][Math.floor(r() * 4)]!,
        createdAt: 1_700_000_000_000 + Math.floor(r() * 20) * 1000,
      }),
    );
    await t.store.analytics.insertRags(answers);
    const value = (a: (typeof answers)[number], col: (typeof RAG_SORT_COLUMNS)[number]): number =>
      col === 'top_score' ? a.topScore : col === 'created_at' ? a.createdAt : 0;
    for (const ragType of [undefined, 'all_chunks'] as const) {
      const mine = answers.filter((a) => a.datasetId === DATASET && (ragType === undefined || a.ragType === ragType));
      for (const sortBy of RAG_SORT_COLUMNS) {
        for (const sortOrder of ['asc', 'desc'] as const) {
          const sorted = [...mine].sort((a, b) => (sortOrder === 'asc' ? 1 : -1) * (value(a, sortBy) - value(b, sortBy)) || (a.id < b.id ? -1 : 1));
          for (const page of [{ limit: 10, offset: 0 }, { limit: 10, offset: 20 }, { limit: 7, offset: 33 }, { limit: 10, offset: mine.length - 3 }, { limit: 10, offset: mine.length + 5 }]) {
            const got = await ragQueries(t.store.reports, DATASET, { filter: { ragType }, page, sortBy, sortOrder });
            expect(
              got.map((a) => a.rag.id),
              `${sortBy} ${sortOrder} ${ragType} ${JSON.stringify(page)}`,
            ).toEqual(sorted.slice(page.offset, page.offset + page.limit).map((a) => a.id));
          }
        }
      }
    }
  });
});
