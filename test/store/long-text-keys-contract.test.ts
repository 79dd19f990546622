/**
 * Contract of the free-text keys of the analytics tables on both stores (store/text-keys.ts): a
 * batch of searches whose query texts are as long as the API stores (4,096 random CJK characters,
 * 4,096 random ASCII ones) and of RAG answers whose user messages are (65,536), some of them
 * follow-ups, is stored whole; texts differing only in their last character stay apart; and
 * `head_queries` (all time, over a range by the ranked lists and by grouping), `popular_chats` and
 * `followup_queries` count them exactly, before and after a retention purge takes some of them.
 * PostgreSQL refused such a text in a btree entry (2,704 bytes at most) and with it the batch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord, RagType } from '../../core/domain/rag.js';
import { rangeHeadQueries } from '../../store/reports/head-queries.js';
import type { RagAnalyticsFilter } from '../../store/reports/rag-filter.js';
import { followupQueries, popularChats } from '../../store/reports/rag-reports.js';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { headQueries } from '../../store/reports/search-reports.js';
import { ragRecord, searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASET = '11111111-1111-4111-8111-111111111111';
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const START = Date.UTC(2024, 2, 4);
const SPAN = 3 * DAY_MS;
const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 3, offset: 1 },
];

/** Code-point (bytewise UTF-8) order, as both stores compare text. */
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** `texts` counted, most first, ties bytewise: what every text report gives. */
function ranked(texts: readonly string[]): { query: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || bytewise(a[0], b[0])).map(([query, count]) => ({ query, count }));
}

const inRange = (ms: number, range: RangeBounds): boolean => (range.gte === undefined || ms >= range.gte) && (range.lt === undefined || ms < range.lt);

/** Shortens the long texts of a report for a readable failure. */
const short = (rows: readonly { query: string; count: number }[]): string[] => rows.map((r) => `${r.query.length}:${r.query.slice(0, 6)}…${r.query.slice(-3)} ×${r.count}`);

describe.each(STORE_KINDS)('%s store: long free texts as analytics keys', (kind) => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(kind);
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('stores a batch holding the longest query texts and user messages, and every text report counts them exactly', async () => {
    const { store } = t;
    const r = rng(77);
    const text = (n: number, from: number, span: number): string => Array.from({ length: n }, () => String.fromCharCode(from + Math.floor(r() * span))).join('');
    const cjk = (n: number): string => text(n, 0x4e00, 0x5200);
    const ascii = (n: number): string => text(n, 0x21, 94);
    const longCjk = cjk(4096);
    const queries = [longCjk, cjk(4096), ascii(4096), longCjk.slice(0, 300), 'short', 'Short'];
    let n = 0;
    const id = (): string => `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`;
    const at = (): number => START + Math.floor(r() * SPAN);
    const search = (query: string): SearchRecord => searchRecord({ id: id(), datasetId: DATASET, searchMethod: 'bm25', query, createdAt: at() });
    // The retention purge below takes every search and answer of a long text of the first hours.
    const cutoff = START + DAY_MS + 7;
    const early = cjk(4096);
    const searches = [
      ...Array.from({ length: 61 }, (_, i) => search(queries[i < queries.length ? i : Math.floor(r() * queries.length)]!)),
      ...[0, 1, 2].map((h) => ({ ...search(early), createdAt: START + h * HOUR_MS })),
    ];
    expect(await store.analytics.insertSearches(searches)).toBe(searches.length);
    // Texts that tie with stored ones on their count and on the ranked prefix (200 characters) but
    // sort before them, each stored after those it sorts after (so that an index or sort without
    // the whole text would give them in the wrong order): texts alike but for their last character
    // (other keys, rows and report lines), and the prefix itself.
    const times = (text: string, rows: readonly { query?: string; userMessage?: string }[]): string[] =>
      Array.from({ length: rows.filter((x) => (x.query ?? x.userMessage) === text).length }, () => text);
    /** Texts alike but for their last character, sorting before `of`, last first. */
    const siblings = (of: string, k: number): string[] => Array.from({ length: k }, (_, i) => `${of.slice(0, -1)}${String.fromCharCode(0x4e00 + k - 1 - i)}`);
    expect(siblings(longCjk, 6).every((q) => bytewise(q, longCjk) < 0)).toBe(true);
    for (const later of [...siblings(longCjk, 6).map((q) => times(longCjk, searches).map(() => q)), times(longCjk.slice(0, 300), searches).map((q) => q.slice(0, 200))]) {
      const batch = later.map(search);
      expect(await store.analytics.insertSearches(batch)).toBe(batch.length);
      searches.push(...batch);
    }

    const longMessage = cjk(65_536);
    const messages = [longMessage, ascii(65_536), 'hello'];
    const types: RagType[] = ['chosen_chunks', 'all_chunks'];
    // Three topics: all but each one's first answer are follow-ups.
    const answer = (userMessage: string, i: number): RagRecord =>
      ragRecord({ id: id(), datasetId: DATASET, ragType: types[i % 2]!, userMessage, topicId: `topic-${i % 3}`, createdAt: at() });
    const answers = [
      ...Array.from({ length: 24 }, (_, i) => answer(messages[i < messages.length ? i : Math.floor(r() * messages.length)]!, i)),
      ...[0, 1, 2].map((h) => ({ ...answer(early, h), topicId: 'topic-early', createdAt: START + h * HOUR_MS })),
    ];
    expect(await store.analytics.insertRags(answers)).toBe(answers.length);
    for (const message of siblings(longMessage, 3)) {
      const batch = times(longMessage, answers).map((_, i) => answer(message, i));
      expect(await store.analytics.insertRags(batch)).toBe(batch.length);
      answers.push(...batch);
    }

    const expectReports = async (keptFrom: number): Promise<void> => {
      const kept = searches.filter((s) => s.createdAt >= keptFrom);
      const rags = answers.filter((a) => a.createdAt >= keptFrom);
      // A follow-up: another answer of its topic comes first by (created_at, id).
      const followups = rags.filter((a) => rags.some((b) => b.topicId === a.topicId && (b.createdAt < a.createdAt || (b.createdAt === a.createdAt && bytewise(b.id, a.id) < 0))));
      expect(followups.length).toBeGreaterThan(10);
      // One row per key with records left, none for a key without.
      const keys = (rows: readonly string[][]): number => new Set(rows.map((k) => JSON.stringify(k))).size;
      const rows = async (table: string): Promise<number> => Number((await store.reports.all(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n);
      expect(await rows('search_query_totals')).toBe(keys(kept.map((s) => [s.query])));
      expect(await rows('search_query_hourly')).toBe(keys(kept.map((s) => [s.query, String(Math.floor(s.createdAt / HOUR_MS))])));
      expect(await rows('search_query_daily')).toBe(keys(kept.map((s) => [s.query, String(Math.floor(s.createdAt / DAY_MS))])));
      expect(await rows('rag_message_totals')).toBe(keys(rags.map((a) => [a.userMessage])));
      expect(await rows('rag_followup_totals')).toBe(keys(followups.map((a) => [a.userMessage])));
      expect(await rows('rag_followup_type_totals')).toBe(keys(followups.map((a) => [a.ragType, a.userMessage])));
      const ranges: RangeBounds[] = [{}, { gte: START + 5 * HOUR_MS + 17, lt: START + 2 * DAY_MS + 3 * HOUR_MS }, { gte: START + DAY_MS }];
      for (const page of PAGES) {
        const all = ranked(kept.map((s) => s.query)).slice(page.offset, page.offset + page.limit);
        expect(short((await headQueries(store.reports, DATASET, { filter: {}, page })).queries), 'all-time head queries').toEqual(short(all));
        for (const range of ranges) {
          const want = short(ranked(kept.filter((s) => inRange(s.createdAt, range)).map((s) => s.query)).slice(page.offset, page.offset + page.limit));
          // The ranked lists of the hours and days (groupedCost 0: never grouping instead), and grouping.
          expect(short(await rangeHeadQueries(store.reports, DATASET, range, page, 0)), `lists ${JSON.stringify(range)}`).toEqual(want);
          expect(short((await headQueries(store.reports, DATASET, { filter: { dateRange: range, searchMethod: 'bm25' }, page })).queries), 'grouped').toEqual(want);
        }
      }

      for (const page of PAGES) {
        const popular = (await popularChats(store.reports, DATASET, { filter: {}, page })).top_queries;
        expect(short(popular), 'popular chats').toEqual(short(ranked(rags.map((a) => a.userMessage)).slice(page.offset, page.offset + page.limit)));
        const filters: RagAnalyticsFilter[] = [{}, { ragType: types[1]! }, { dateRange: { gte: START + DAY_MS } }, { dateRange: { gte: START + SPAN - DAY_MS } }];
        for (const filter of filters) {
          const want = followups.filter((a) => (filter.ragType === undefined || a.ragType === filter.ragType) && inRange(a.createdAt, filter.dateRange ?? {}));
          const got = (await followupQueries(store.reports, DATASET, { filter, page })).top_queries;
          expect(short(got), `follow-ups ${JSON.stringify(filter)}`).toEqual(short(ranked(want.map((a) => a.userMessage)).slice(page.offset, page.offset + page.limit)));
        }
      }
    };
    await expectReports(0);
    // The purge subtracts from the same keys, and deletes those left at zero.
    await store.analytics.purgeBefore(cutoff, 5);
    await expectReports(cutoff);
  }, 120_000);
});
