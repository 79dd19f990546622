/**
 * Group commit of analytics batches. The batches of the analytics jobs active at one time are
 * stored together: one transaction per kind of record for the whole group, not one per batch.
 *
 * A commit's cost is mostly the pages it writes: the tails of the record tables and their
 * indexes, and the rollups' rows of each hour, day and query text. Batches sent close together
 * share most of those pages. Stored one by one, each 64-record batch wrote ~250 WAL frames
 * (strace, `bench/search-latency.ts` on SciFact), about four pages per search. Stored together,
 * a group writes each shared page once.
 *
 * A group fails as a whole only if one of its batches is bad. Then each batch is stored alone, so
 * a poison batch fails (and is retried) by itself, and the others are stored. Storing a batch
 * twice is harmless: the store ignores record ids it already holds, and the rollups count only
 * the rows added.
 */
import type { AnalyticsBatch, RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { AnalyticsRepository } from '../../store/repository.js';

/** Records a batch (or a group of them) added to the store; those it already held are not counted. */
export interface StoredCounts {
  readonly searches: number;
  readonly recommendations: number;
  readonly rags: number;
}

/** Tunables of {@link analyticsGroup}. */
export interface GroupOptions {
  /**
   * How long the first batch of a group waits for others, in ms. The recorder sends a batch every
   * 250 ms, or as soon as 64 records wait, so this only groups batches under load.
   */
  readonly lingerMs: number;
  /** Most batches in a group: the worker's concurrency, since no more can be active at once. */
  readonly maxBatches: number;
  /** Most records in a group; a group this full is stored without waiting out the linger. */
  readonly maxRecords: number;
}

/** The number of records of `batch`. */
export const recordsOf = (batch: AnalyticsBatch): number => (batch.searches?.length ?? 0) + (batch.recommendations?.length ?? 0) + (batch.rags?.length ?? 0);

/** One waiting batch and the settlement of its job. */
interface Member {
  readonly batch: AnalyticsBatch;
  readonly resolve: (counts: StoredCounts) => void;
  readonly reject: (err: unknown) => void;
}

/** Stores `batch` (or a merged group) in one transaction per kind of record. */
async function storeBatch(analytics: AnalyticsRepository, batch: Omit<AnalyticsBatch, 'id'>): Promise<StoredCounts> {
  // Batches enqueued by a facade from before RAG carry no `rags`; the others are checked alike.
  const searches = await analytics.insertSearches(batch.searches ?? []);
  const recommendations = await analytics.insertRecommendations(batch.recommendations ?? []);
  const rags = await analytics.insertRags(batch.rags ?? []);
  return { searches, recommendations, rags };
}

/** The batches of `members` as one. */
function merged(members: readonly Member[]): Omit<AnalyticsBatch, 'id'> {
  const searches: SearchRecord[] = [];
  const recommendations: RecommendationRecord[] = [];
  const rags: RagRecord[] = [];
  for (const { batch } of members) {
    for (const r of batch.searches ?? []) searches.push(r);
    for (const r of batch.recommendations ?? []) recommendations.push(r);
    for (const r of batch.rags ?? []) rags.push(r);
  }
  return { searches, recommendations, rags };
}

/**
 * Builds the group committer: `store(batch)` settles once the batch is stored, alone or in a group.
 * A group's counts are its own, not the batch's: each member resolves with them.
 */
export function analyticsGroup(analytics: AnalyticsRepository, options: GroupOptions): (batch: AnalyticsBatch) => Promise<StoredCounts> {
  let waiting: Member[] = [];
  let waitingRecords = 0;
  let timer: NodeJS.Timeout | undefined;
  let storing = false;
  // A group filled up while another was being stored: store it as soon as that one is done.
  let full = false;

  const storeGroup = async (members: readonly Member[]): Promise<void> => {
    if (members.length > 1) {
      try {
        const counts = await storeBatch(analytics, merged(members));
        for (const m of members) m.resolve(counts);
        return;
      } catch {
        // Each batch alone below: the bad one fails by itself.
      }
    }
    for (const m of members) {
      try {
        m.resolve(await storeBatch(analytics, m.batch));
      } catch (err) {
        m.reject(err);
      }
    }
  };

  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (storing) {
      full = true;
      return;
    }
    storing = true;
    try {
      do {
        full = false;
        const group = waiting;
        waiting = [];
        waitingRecords = 0;
        await storeGroup(group);
      } while (full && waiting.length > 0);
    } finally {
      storing = false;
    }
    // Batches that came during the store wait their own linger, to gather company.
    if (waiting.length > 0 && timer === undefined) timer = setTimeout(() => void flush(), options.lingerMs);
  };

  return (batch) =>
    new Promise<StoredCounts>((resolve, reject) => {
      waiting.push({ batch, resolve, reject });
      waitingRecords += recordsOf(batch);
      if (waiting.length >= options.maxBatches || waitingRecords >= options.maxRecords) void flush();
      else if (timer === undefined && !storing) timer = setTimeout(() => void flush(), options.lingerMs);
    });
}
