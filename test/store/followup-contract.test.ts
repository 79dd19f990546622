/**
 * Contract of the follow-up flags and totals on both stores (store/followup-batch.ts): after seeded
 * random answers in topics (shared topic ids across datasets, ties on created_at broken by ids whose
 * byte order is not JS's UTF-16 order, answers without a topic), inserted in shuffled batches (an
 * answer before its topic's first and after it, redelivered batches, an id repeated in a batch,
 * concurrent batches on one topic), a retention purge that removes topics' first answers, and a
 * dataset purge, every answer's flag is what its topic's answers say, the totals are the follow-ups
 * counted (as the migration's backfill counts them), and `followup_queries` answers, for every
 * filter, what this test computes from the raw rows.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RagRecord, RagType } from '../../core/domain/rag.js';
import type { QueryRating } from '../../core/domain/user-events.js';
import { FOLLOWUP_BACKFILL, FOLLOWUP_TOTALS, FOLLOWUP_TOTALS_TABLES, FOLLOWUP_TYPE_TOTALS } from '../../store/followup-batch.js';
import type { RagAnalyticsFilter } from '../../store/reports/rag-filter.js';
import { followupQueries } from '../../store/reports/rag-reports.js';
import type { RangeBounds, ReportSql } from '../../store/reports/report-sql.js';
import type { Store } from '../../store/repository.js';
import { openTestStore, readInRolledBackTx, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { rng } from '../helpers/random-corpus.js';

const DATASETS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
const RAG_TYPES: RagType[] = ['chosen_chunks', 'all_chunks'];
/** Topic ids, the first two used in both datasets. */
const TOPICS = ['t-a', 't-b', 't-c', 't-d', 't-e', 't-f'];
/** User messages with ties whose code-point order is not JS's UTF-16 order (U+FFFD, U+1F600). */
const MESSAGES = ['how', 'How', 'why', 'what', '\u{1F600}', '\uFFFD', 'a longer question'];
/** Id suffixes that order differently bytewise and in UTF-16. */
const ID_TAILS = ['', '\uFFFD', '\u{1F600}', 'z'];
const START = Date.UTC(2024, 0, 29);
const DAY_MS = 86_400_000;
const SPAN = 4 * DAY_MS;

/** Code-point (bytewise UTF-8) order, as both stores compare text. */
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A stored answer as the test reads it back. */
interface Stored {
  id: string;
  datasetId: string;
  topicId: string | null;
  ragType: string;
  message: string;
  createdAt: number;
  followup: number;
  rating: number | null;
  component: string | null;
}

async function storedAnswers(store: Store): Promise<Stored[]> {
  const ratings = new Map((await store.reports.all("SELECT query_id, dataset_id, rating FROM query_ratings WHERE kind = 'rag'", [])).map((r) => [`${r.query_id}|${r.dataset_id}`, Number(r.rating)]));
  const rows = await store.reports.all('SELECT id, dataset_id, topic_id, rag_type, user_message, created_at, followup, metadata FROM rag_queries', []);
  return rows.map((r) => ({
    id: String(r.id),
    datasetId: String(r.dataset_id),
    topicId: r.topic_id === null ? null : String(r.topic_id),
    ragType: String(r.rag_type),
    message: String(r.user_message),
    createdAt: Number(r.created_at),
    followup: Number(r.followup),
    rating: ratings.get(`${r.id}|${r.dataset_id}`) ?? null,
    component: r.metadata === null ? null : ((JSON.parse(String(r.metadata)) as { component_name?: string } | null)?.component_name ?? null),
  }));
}

/** Whether `q` is a follow-up: an answer of its dataset and topic sorts before it by (created_at, id). */
const isFollowup = (q: Stored, all: readonly Stored[]): boolean =>
  q.topicId !== null &&
  all.some((p) => p.datasetId === q.datasetId && p.topicId === q.topicId && (p.createdAt < q.createdAt || (p.createdAt === q.createdAt && bytewise(p.id, q.id) < 0)));

const inRange = (ms: number, range: RangeBounds | undefined): boolean =>
  (range?.gte === undefined || ms >= range.gte) && (range?.gt === undefined || ms > range.gt) && (range?.lt === undefined || ms < range.lt) && (range?.lte === undefined || ms <= range.lte);

/** The user messages of `answers` counted, most first, ties bytewise. */
function ranked(answers: readonly Stored[]): { query: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const q of answers) counts.set(q.message, (counts.get(q.message) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || bytewise(a[0], b[0])).map(([query, count]) => ({ query, count }));
}

/** Totals rows as comparable tuples, from the store or from `answers`. */
const totalsOf = (rows: Record<string, any>[]): string[] =>
  rows.map((r) => JSON.stringify([r.dataset_id, r.rag_type ?? null, r.user_message, Number(r.followups)])).sort();
const expectedTotals = (answers: readonly Stored[]): string[] => {
  const out: string[] = [];
  for (const datasetId of DATASETS) {
    const mine = answers.filter((q) => q.datasetId === datasetId && q.followup === 1);
    out.push(...ranked(mine).map((m) => JSON.stringify([datasetId, null, m.query, m.count])));
    for (const t of RAG_TYPES) out.push(...ranked(mine.filter((q) => q.ragType === t)).map((m) => JSON.stringify([datasetId, t, m.query, m.count])));
  }
  return out.sort();
};
const TOTALS_READS = FOLLOWUP_TOTALS_TABLES.map((t) => `SELECT * FROM ${t.table}`);

/** Flags, totals, backfill and report all agree with the raw rows. */
async function expectConsistent(t: TestStore, r: () => number): Promise<number> {
  const all = await storedAnswers(t.store);
  const wrong = all.filter((q) => q.followup !== (isFollowup(q, all) ? 1 : 0)).map((q) => `${q.id} ${q.followup}`);
  expect(wrong, 'follow-up flags').toEqual([]);
  const totals = (await Promise.all(TOTALS_READS.map((s) => t.store.reports.all(s, [])))).flatMap(totalsOf).sort();
  expect(totals, 'totals').toEqual(expectedTotals(all));
  // The migration's backfill, run now from flags cleared, computes the same flags and totals.
  const [flags, ...filled] = await readInRolledBackTx(
    t.loc,
    ['UPDATE rag_queries SET followup = 0', ...FOLLOWUP_TOTALS_TABLES.map((table) => `DELETE FROM ${table.table}`), FOLLOWUP_BACKFILL],
    ['SELECT id, followup FROM rag_queries', ...TOTALS_READS],
  );
  expect(new Map(flags!.map((f) => [String(f.id), Number(f.followup)]))).toEqual(new Map(all.map((q) => [q.id, q.followup])));
  expect(filled.flatMap(totalsOf).sort(), 'backfilled totals').toEqual(totals);

  const lo = START + Math.floor(r() * SPAN * 0.5);
  const ranges: (RangeBounds | undefined)[] = [
    undefined,
    {},
    { gte: lo },
    { gt: lo, lte: lo + Math.floor(r() * SPAN * 0.5) },
    { lt: lo },
    { gte: START, lt: START + SPAN },
    { gt: START + DAY_MS / 4, lte: START + SPAN - DAY_MS / 4 },
    { gte: START - 50 * DAY_MS },
  ];
  const pages = [{ limit: 10, offset: 0 }, { limit: 2, offset: 1 }, { limit: 1000, offset: 0 }];
  for (const datasetId of DATASETS) {
    for (const dateRange of ranges) {
      const filters: RagAnalyticsFilter[] = [
        { dateRange },
        ...RAG_TYPES.map((ragType) => ({ dateRange, ragType })),
        { dateRange, query: 'how' },
        { dateRange, queryRating: { gte: 1 } },
        { dateRange, componentName: 'chat' },
      ];
      for (const filter of filters) {
        const matching = all.filter(
          (q) =>
            q.datasetId === datasetId &&
            q.followup === 1 &&
            inRange(q.createdAt, filter.dateRange) &&
            (filter.ragType === undefined || q.ragType === filter.ragType) &&
            (filter.query === undefined || q.message === filter.query) &&
            (filter.queryRating === undefined || (q.rating !== null && inRange(q.rating, filter.queryRating))) &&
            (filter.componentName === undefined || q.component === filter.componentName),
        );
        for (const page of pages) {
          const got = await followupQueries(t.store.reports, datasetId, { filter, page });
          expect(got.top_queries, `${datasetId.slice(0, 2)} ${JSON.stringify(filter)} ${JSON.stringify(page)}`).toEqual(ranked(matching).slice(page.offset, page.offset + page.limit));
        }
      }
    }
  }
  return all.filter((q) => q.followup === 1).length;
}

describe.each(STORE_KINDS)('%s store: follow-up answers', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('keep each answer flagged as its topic says and the totals counted, through any order of arrival and purges', async () => {
    const r = rng(41);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    let n = 0;
    // A few coarse instants, so that answers of one topic often tie on created_at.
    const at = (): number => START + Math.floor(r() * 40) * (SPAN / 40);
    const answer = (): RagRecord => {
      const datasetId = r() < 0.75 ? DATASETS[0]! : DATASETS[1]!;
      const topics = datasetId === DATASETS[0] ? TOPICS : TOPICS.slice(0, 3);
      return {
        id: `00000000-0000-4000-8000-${(n++ % 7).toString(16)}${pick(ID_TAILS)}${n.toString(16).padStart(6, '0')}`,
        datasetId,
        ragType: pick(RAG_TYPES),
        userMessage: pick(MESSAGES),
        searchId: null,
        topicId: r() < 0.85 ? pick(topics) : null,
        results: [],
        llmResponse: 'a',
        topScore: 0.5,
        userId: null,
        metadata: r() < 0.3 ? { component_name: 'chat' } : null,
        promptTokens: 1,
        completionTokens: 1,
        latencyMs: 3,
        createdAt: at(),
      };
    };
    const rating = (q: RagRecord): QueryRating => ({ kind: 'rag', datasetId: q.datasetId, queryId: q.id, rating: pick([-1, 0, 1, 2]), note: null, metadata: null, createdAt: q.createdAt });

    const batches = Array.from({ length: 8 }, () => Array.from({ length: 5 + Math.floor(r() * 30) }, answer));
    // Batches arrive in no time order, so answers come before and after their topic's first.
    for (const b of batches) {
      b.sort(() => r() - 0.5);
      expect(await store.analytics.insertRags(b)).toBe(b.length);
    }
    // Redelivered batches and an id repeated within one batch count nothing twice.
    expect(await store.analytics.insertRags(batches[2]!)).toBe(0);
    const late = Array.from({ length: 10 }, answer);
    expect(await store.analytics.insertRags([...late, late[0]!, ...batches[3]!.slice(0, 3)])).toBe(late.length);
    // An answer earlier than everything of its topic arrives last: the old first becomes a follow-up.
    const earliest = { ...answer(), datasetId: DATASETS[0]!, topicId: TOPICS[0]!, createdAt: START - 1 };
    expect(await store.analytics.insertRags([earliest])).toBe(1);
    // Concurrent batches on two new topics, each answer before the ones sent ahead of it, serialize
    // on PostgreSQL. Days and messages apart, so that no rollup row they share serializes them instead.
    const racing = Array.from({ length: 48 }, (_, i) => ({ ...answer(), datasetId: DATASETS[1]!, topicId: `t-race-${i % 2}`, userMessage: `race ${i}`, createdAt: START + SPAN - i * DAY_MS }));
    await Promise.all(racing.map((q) => store.analytics.insertRags([q])));
    await store.analytics.rate([...batches.flat(), ...late].filter(() => r() < 0.4).map(rating));

    const followups = await expectConsistent(t, r);
    expect(followups).toBeGreaterThan(80);
    const stored = await storedAnswers(store);
    expect(stored.filter((q) => q.topicId?.startsWith('t-race-') && q.followup === 0)).toHaveLength(2);
    expect(stored.find((q) => q.id === earliest.id)!.followup).toBe(0);

    // The unfiltered and rag-type reports read the totals alone.
    const seen: string[] = [];
    const recording: ReportSql = { dialect: store.reports.dialect, all: (text, params) => (seen.push(text), store.reports.all(text, params)) };
    await followupQueries(recording, DATASETS[0]!, { filter: {}, page: { limit: 10, offset: 0 } });
    await followupQueries(recording, DATASETS[0]!, { filter: { ragType: 'all_chunks' }, page: { limit: 10, offset: 0 } });
    expect(seen.filter((text) => /rag_queries/.test(text))).toEqual([]);
    expect(seen.some((text) => text.includes(FOLLOWUP_TOTALS.table)) && seen.some((text) => text.includes(FOLLOWUP_TYPE_TOTALS.table))).toBe(true);
    // A range over most of the history reads the totals (less what is outside it), a short one only the flagged answers.
    seen.length = 0;
    await followupQueries(recording, DATASETS[0]!, { filter: { dateRange: { gte: START + DAY_MS / 2 } }, page: { limit: 10, offset: 0 } });
    expect(seen.some((text) => text.includes(FOLLOWUP_TOTALS.table))).toBe(true);
    seen.length = 0;
    await followupQueries(recording, DATASETS[0]!, { filter: { dateRange: { gte: START + SPAN - DAY_MS / 2 } }, page: { limit: 10, offset: 0 } });
    expect(seen.some((text) => text.includes(FOLLOWUP_TOTALS.table))).toBe(false);

    // A retention purge in small slices takes topics' first answers: the next ones become firsts.
    const cutoff = START + 2 * DAY_MS + 1;
    await store.analytics.purgeBefore(cutoff, 7);
    const left = await expectConsistent(t, r);
    expect(left).toBeLessThan(followups);
    expect(left).toBeGreaterThan(0);
    // Answers older than the cutoff arriving after the purge still settle their topics.
    expect(await store.analytics.insertRags([{ ...answer(), datasetId: DATASETS[0]!, topicId: TOPICS[1]!, createdAt: START }])).toBe(1);
    await expectConsistent(t, r);

    expect(await store.datasets.purge(DATASETS[1]!)).toBe(true);
    const totals = (await Promise.all(TOTALS_READS.map((s) => store.reports.all(s, [])))).flat();
    expect(totals.filter((row) => row.dataset_id === DATASETS[1])).toEqual([]);
    expect(totals.length).toBeGreaterThan(0);
    await expectConsistent(t, r);
  }, 120_000);
});
