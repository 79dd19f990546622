/**
 * The search engine of the core: one {@link DatasetIndex} per dataset, created on first use and
 * warmed at start, plus the canonical operations the gRPC handlers call.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { EmbedderCache } from '../embed/embedder-cache.js';
import { DATASET_CONFIG_DEFAULTS, embeddingSpec, rerankerSpec, spladeSpec, type EmbeddingSpec, type SpladeSpec } from '../domain/dataset-config.js';
import type { SparseVector } from '../domain/sparse-vector.js';
import { boostSparse, SpladeClient } from '../embed/splade.js';
import { Reranker } from '../embed/reranker.js';
import { badRequest, notFound } from '../domain/errors.js';
import { withConditions, type Filter } from '../domain/filter.js';
import type { Store } from '../../store/repository.js';
import type { ShardPool } from '../pool/shard-pool.js';
import { Admission } from './admission.js';
import { DatasetIndex, indexFingerprint, type ShardLayout, type DatasetHits } from './dataset-index.js';
import type { Bm25Params } from '../../workers/shard/protocol.js';
import { checkFilter, resolveGroupTrackingIds } from './filter-check.js';
import { resolveGroupFields } from './group-fields.js';
import type { TypoOptions } from '../typo/options.js';
import type { DatasetRecord } from '../domain/tenancy.js';
import type { GroupRecord } from '../domain/group.js';
import { withFields } from '../domain/with-fields.js';

/** Search types the core serves today. */
const ENABLED_SEARCH_TYPES = new Set(['bm25', 'fulltext', 'semantic', 'hybrid']);

/** A search as the core receives it. */
export interface SearchQuery {
  readonly datasetId: string;
  readonly searchType: string;
  readonly query: string;
  readonly filter: Filter | null;
  readonly offset: number;
  readonly limit: number;
  readonly scoreThreshold: number | null;
  readonly countTotal: boolean;
  /** Semantic multi-query: embeddings of these are summed with their weights. */
  readonly queries?: readonly { query: string; weight: number }[];
  /** Semantic: this vector instead of the query's embedding. */
  readonly vector?: Float32Array | null;
  /** bm25/fulltext: query words also in the phrase weigh `factor` times more. */
  readonly fulltextBoost?: { phrase: string; factor: number } | null;
  /** semantic/hybrid: the query vector plus `factor` times the phrase's vector. */
  readonly semanticBoost?: { phrase: string; factor: number } | null;
  /** Autocomplete: the last word matches every indexed word it begins. */
  readonly prefixLastWord?: boolean;
  /** Typo correction of the query (null: none). */
  readonly typo?: TypoOptions | null;
}

/** Ranked hits, with the corrected query when typo correction changed it. */
export type SearchHits = DatasetHits & { readonly correctedQuery?: string | null };

/** A scroll as the core receives it. */
export interface ScrollQuery {
  readonly datasetId: string;
  readonly filter: Filter | null;
  readonly offsetChunkId: string | null;
  readonly limit: number;
  readonly sortField: string | null;
  readonly descending: boolean;
}

/** Σ weight_i · vector_i, the multi-query vector (as the reference implementation combines them). */
function weightedSum(vectors: readonly Float32Array[], weights: readonly number[]): Float32Array {
  const out = new Float32Array(vectors[0]!.length);
  vectors.forEach((v, i) => {
    for (let j = 0; j < out.length; j++) out[j]! += weights[i]! * v[j]!;
  });
  return out;
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** What a dataset record says about its index: models, BM25 parameters and their fingerprint. */
interface IndexSpec {
  readonly spec: EmbeddingSpec & { reranker: { baseUrl: string; apiKey: string } | null; splade: SpladeSpec | null };
  readonly sparseKey: string | null;
  readonly params: Bm25Params;
  readonly fingerprint: string;
}

/**
 * Per dataset record: records come from the store's cache, shared until the dataset changes, so
 * every search of a dataset reuses one (a hash and three config parses were ~10 us of each).
 */
const indexSpecs = new WeakMap<DatasetRecord, IndexSpec>();

function indexSpecOf(record: DatasetRecord): IndexSpec {
  let known = indexSpecs.get(record);
  if (!known) {
    const cfg = record.serverConfiguration;
    const spec = withFields(embeddingSpec(cfg), { reranker: rerankerSpec(cfg), splade: spladeSpec(cfg) });
    const sparseKey = spec.splade?.modelKey ?? null;
    const params = { k1: num(cfg.BM25_K, DATASET_CONFIG_DEFAULTS.BM25_K), b: num(cfg.BM25_B, DATASET_CONFIG_DEFAULTS.BM25_B), distance: spec.distance };
    known = { spec, sparseKey, params, fingerprint: indexFingerprint(params, spec.modelKey, sparseKey) };
    indexSpecs.set(record, known);
  }
  return known;
}

/** This many slow inline queries of a dataset within {@link SLOW_WINDOW_MS} move it to the shard threads. */
const SLOW_STRIKES = 3;
/** The window of {@link SLOW_STRIKES}, in ms. */
const SLOW_WINDOW_MS = 2000;

/**
 * A file beside a dataset's snapshots saying that its inline queries were slow and it was moved
 * to the shard threads: a restart keeps it there rather than serving it inline until it is slow
 * three times again (and moving it once more). The dataset's purge removes it with the rest.
 */
const slowMarker = (dataDir: string, datasetId: string): string => path.join(dataDir, 'index', datasetId, 'slow-queries');

/** How often (ms) the catch-up looks at every loaded dataset on a store with change notices (see Engine.catchUp). */
const FULL_CATCH_UP_MS = 30_000;
/** Groups read per store call when a filter names the groups' own fields. */
const GROUP_PAGE = 1000;

/** The engine. */
export class Engine {
  private readonly datasets = new Map<string, DatasetIndex>();
  /** Datasets whose index is being created (see datasetWithSpec). */
  private readonly creating = new Map<string, Promise<DatasetIndex>>();
  /** Datasets being moved from their inline shard to the shard threads. */
  private readonly growing = new Set<string>();
  /** Datasets moved to the shard threads for slow inline queries: never inline again (see {@link slowMarker}). */
  private readonly slowDatasets = new Set<string>();
  /** When each inline dataset's recent slow queries ended (the {@link SLOW_STRIKES}th within {@link SLOW_WINDOW_MS} moves it). */
  private readonly slowSeenAt = new Map<string, number[]>();
  /** Replaced inline indexes waiting out searches that started on them: their retirement, run by the timer or at close. */
  private readonly retiring = new Map<DatasetIndex, () => Promise<void>>();
  private readonly admission: Admission;
  private seenHead = 0;
  /** When catchUp last looked at every loaded dataset (stores with change notices only). */
  private fullCatchUpAt = 0;
  private readonly embedders = new EmbedderCache();
  private readonly rerankers = new Map<string, Reranker>();
  private readonly splades = new Map<string, SpladeClient>();

  constructor(
    private readonly config: Config,
    /** The store the engine reads datasets and change logs from (the search pipeline reads chunk records from it too). */
    readonly store: Store,
    private readonly pool: ShardPool,
    private readonly logger: Logger,
  ) {
    this.admission = new Admission(config.maxConcurrentSearches);
    if (config.inlineSlowQueryMs > 0) {
      // Reported from a timer after the search (ShardPool.checkSlow), so the move never starts within its call.
      pool.onSlowInlineQuery(config.inlineSlowQueryMs, (datasetId, ms, again) => this.slowInlineQuery(datasetId, ms, again));
    }
    pool.onThreadLost((thread) => {
      this.logger.error({ thread, restarts: pool.restarts }, 'a shard thread died and was replaced empty; reloading the datasets it held');
      for (const index of this.datasets.values()) index.threadLost(thread);
    });
  }

  /**
   * Where the datasets' shards are: counts by state (see `ShardState` in dataset-index.ts) and how many shard
   * threads were replaced. `lost` datasets lost shards with a thread and are not reloaded yet.
   */
  shardHealth(): { loaded: number; loading: number; failed: number; lost: number; threadRestarts: number } {
    const counts = { loaded: 0, loading: 0, failed: 0, lost: 0 };
    for (const index of this.datasets.values()) {
      const state = index.state;
      if (state === 'ready') counts.loaded++;
      else if (state === 'loading') counts.loading++;
      else if (state === 'failed') counts.failed++;
      else if (state === 'lost') counts.lost++;
    }
    return withFields(counts, { threadRestarts: this.pool.restarts });
  }

  /**
   * The index of a live dataset; 404 when the store does not have it (and its shards are
   * dropped). A dataset whose configuration changed its index parameters (BM25 k/b, distance,
   * embedding model) gets a new index, rebuilt from the store.
   */
  async dataset(datasetId: string): Promise<DatasetIndex> {
    return (await this.datasetWithSpec(datasetId)).index;
  }

  private async datasetWithSpec(
    datasetId: string,
    known?: DatasetRecord,
  ): Promise<{ index: DatasetIndex; spec: EmbeddingSpec & { reranker: { baseUrl: string; apiKey: string } | null; splade: SpladeSpec | null } }> {
    const record = known ?? (await this.store.datasets.get(datasetId));
    const existing = this.datasets.get(datasetId);
    if (!record) {
      if (existing) {
        this.datasets.delete(datasetId);
        await existing.drop();
      }
      throw notFound(`dataset ${datasetId} does not exist`);
    }
    const { spec, sparseKey, params, fingerprint } = indexSpecOf(record);
    if (existing && existing.fingerprint === fingerprint) return { index: existing, spec };
    // One creation per dataset at a time: the layout is chosen after reading the dataset's size.
    let creating = this.creating.get(datasetId);
    if (!creating) {
      creating = (async () => {
        if (existing) {
          this.logger.info({ dataset: datasetId }, 'index parameters changed; rebuilding from the store');
          this.datasets.delete(datasetId);
          await existing.drop();
        }
        // The size an import in progress is about to give it: a large file's dataset starts on the
        // threads instead of indexing its first rows inline and then all of them again there.
        const [chunks, coming] = await Promise.all([this.store.datasets.chunkCount(datasetId), this.store.files.rowsToCome(datasetId)]);
        const layout = this.layoutFor(chunks + coming, datasetId);
        const index = new DatasetIndex(datasetId, layout, params, spec.modelKey, this.pool, this.store, this.config.dataDir, this.logger, sparseKey, this.config.compactIdleMs);
        this.datasets.set(datasetId, index);
        // The chunk count chose the layout; the words indexed are known once it is loaded.
        if (layout.inline) {
          index
            .ensureReady()
            .then(() => this.checkGrowth(index))
            .catch(() => undefined);
        }
        return index;
      })().finally(() => this.creating.delete(datasetId));
      this.creating.set(datasetId, creating);
    }
    return { index: await creating, spec };
  }

  /** Shards of a dataset of `chunks` chunks: one inline while that is cheap, else spread over the threads. */
  private layoutFor(chunks: number, datasetId?: string): ShardLayout {
    if (datasetId !== undefined && !this.slowDatasets.has(datasetId) && fs.existsSync(slowMarker(this.config.dataDir, datasetId))) this.slowDatasets.add(datasetId);
    const inline = chunks <= this.config.inlineShardMaxChunks && !(datasetId !== undefined && this.slowDatasets.has(datasetId));
    return inline ? { shards: 1, inline: true } : { shards: this.config.shardsPerDataset, inline: false };
  }

  /**
   * Starts moving an inline dataset that outgrew {@link Config.inlineShardMaxChunks} or
   * {@link Config.inlineShardMaxTokens}, or will with the rows its imports in progress are about
   * to write, to the shard threads (once at a time per dataset). Moving at an import's first
   * batches, not past the limit, spares indexing the limit's worth of rows inline only to index
   * them again on the threads (a 50,000-row import: 15,000 rows twice, and the inline shard's
   * memory until it retires).
   */
  private async checkGrowth(index: DatasetIndex): Promise<void> {
    if (!index.inline || this.growing.has(index.datasetId)) return;
    const { chunkCount, tokenCount } = await index.stats();
    if (chunkCount <= this.config.inlineShardMaxChunks && tokenCount <= this.config.inlineShardMaxTokens) {
      const coming = await this.store.files.rowsToCome(index.datasetId);
      if (chunkCount + coming <= this.config.inlineShardMaxChunks) return;
      this.moveToThreads(index, 'an import in progress will take the dataset past its inline shard; moved to the shard threads');
      return;
    }
    this.moveToThreads(index, 'dataset outgrew its inline shard; moved to the shard threads');
  }

  /**
   * An inline query of `datasetId` held the event loop for `ms` (past
   * {@link Config.inlineSlowQueryMs}), and every other tenant's request with it. At the
   * {@link SLOW_STRIKES}th within {@link SLOW_WINDOW_MS}, when that query is slow again run once
   * more (`again`), the dataset moves to the shard threads, whose scheduler shares them by time,
   * and stays there for the life of this process.
   */
  private slowInlineQuery(datasetId: string, ms: number, again: () => number): void {
    const index = this.datasets.get(datasetId);
    // Slow queries that finish while the move runs have nothing more to start.
    if (!index?.inline || this.growing.has(datasetId)) return;
    // Wall time also counts a garbage collection or code not yet compiled (a cold process) that
    // fell inside the query: one slow query says little, a run of them says the dataset is heavy.
    const now = Date.now();
    const recent = (this.slowSeenAt.get(datasetId) ?? []).filter((at) => now - at <= SLOW_WINDOW_MS);
    recent.push(now);
    if (recent.length < SLOW_STRIKES) {
      this.slowSeenAt.set(datasetId, recent);
      return;
    }
    this.slowSeenAt.delete(datasetId);
    // The process's CPU bounds a query's own only while its other threads idle: on a busy
    // machine, right after an ingest (snapshot writes, concurrent marking) SciFact's 0.1 ms
    // searches were seen slow three times and moved, costing every later search ~50% more CPU.
    // A dataset whose queries are heavy is slow again when the last one runs once more. Half the
    // bar: the second run finds the caches the first filled (pair postings, block bounds): in the
    // shard-growth test queries just past a 1 ms bar took 0.6-2x their time again, and failed it
    // once in two CI runs. A light query that only looked slow stays far below (0.1 ms against 2.5).
    const confirmed = again();
    if (confirmed <= this.config.inlineSlowQueryMs / 2) {
      this.logger.info({ dataset: datasetId, ms: Math.round(ms), again: Math.round(confirmed * 100) / 100 }, 'slow inline queries not confirmed by a second run; the dataset stays inline');
      return;
    }
    this.slowDatasets.add(datasetId);
    try {
      const marker = slowMarker(this.config.dataDir, datasetId);
      fs.mkdirSync(path.dirname(marker), { recursive: true });
      fs.writeFileSync(marker, `${JSON.stringify({ movedAt: new Date().toISOString(), ms: Math.round(ms) })}\n`);
    } catch (err) {
      this.logger.warn({ err, dataset: datasetId }, 'could not record the move to the shard threads; a restart serves the dataset inline again');
    }
    this.logger.warn({ dataset: datasetId, ms: Math.round(ms) }, 'an inline query held the event loop; moving the dataset to the shard threads');
    this.moveToThreads(index, 'dataset with slow queries moved to the shard threads');
  }

  /** Starts {@link grow} for `index` unless a move of its dataset runs already. */
  private moveToThreads(index: DatasetIndex, done: string): void {
    if (this.growing.has(index.datasetId)) return;
    this.growing.add(index.datasetId);
    this.grow(index, done)
      .catch((err: unknown) => this.logger.error({ err, dataset: index.datasetId }, 'moving the dataset to the shard threads failed; it stays inline'))
      .finally(() => this.growing.delete(index.datasetId));
  }

  /**
   * Builds the dataset's index in its threaded layout beside the serving inline one (from the
   * store's change log, as a fresh start would), catches it up, and swaps it in; the old shards
   * go once searches that started on them are past their deadline.
   */
  private async grow(current: DatasetIndex, done: string): Promise<void> {
    const id = current.datasetId;
    const started = Date.now();
    const next = current.withLayout(this.layoutFor(Number.POSITIVE_INFINITY));
    await next.ensureReady();
    // Writes go on meanwhile: catch up until nothing the serving index applied is missing. The
    // check and the swap below run in one turn of the event loop, so no apply slips between.
    for (;;) {
      if (this.datasets.get(id) !== current) {
        await next.drop();
        return;
      }
      if (next.appliedSeq >= current.appliedSeq) break;
      await next.apply(0);
    }
    this.datasets.set(id, next);
    this.logger.info({ dataset: id, shards: next.shards, appliedSeq: next.appliedSeq, ms: Date.now() - started }, done);
    await next.snapshot();
    const retire = (): Promise<void> => {
      clearTimeout(timer);
      this.retiring.delete(current);
      return current.retire(next).catch((err: unknown) => this.logger.warn({ err, dataset: id }, 'dropping the old inline shard failed'));
    };
    const timer = setTimeout(() => void retire(), this.config.coreDeadlineMs + 1000);
    timer.unref();
    // A shutdown before the timer fires still deletes the old snapshot (no later start would read it).
    this.retiring.set(current, retire);
  }

  /** The (shared) SPLADE client of a configuration. */
  private spladeFor(spec: SpladeSpec): SpladeClient {
    const key = JSON.stringify(spec);
    let c = this.splades.get(key);
    if (!c) this.splades.set(key, (c = new SpladeClient({ docUrl: spec.docUrl, queryUrl: spec.queryUrl, apiKey: spec.apiKey })));
    return c;
  }

  /** The query's SPLADE vector (with a query-time fulltext_boost applied), or null without an encoder. */
  private async sparseQuery(q: SearchQuery, spec: SpladeSpec | null, signal?: AbortSignal): Promise<SparseVector | null> {
    if (!spec || (q.searchType !== 'fulltext' && q.searchType !== 'hybrid')) return null;
    const client = this.spladeFor(spec);
    const boost = q.fulltextBoost && q.fulltextBoost.phrase.trim() !== '' ? q.fulltextBoost : null;
    const [vector, phrase] = await client.encode(boost ? [q.query, boost.phrase] : [q.query], 'query', signal);
    return boost ? boostSparse(vector!, phrase!, boost.factor) : vector!;
  }

  /** The (shared) reranker of a configuration, or null for score fusion. */
  private rerankerFor(spec: { baseUrl: string; apiKey: string } | null): Reranker | null {
    if (!spec) return null;
    const key = JSON.stringify(spec);
    let r = this.rerankers.get(key);
    if (!r) this.rerankers.set(key, (r = new Reranker(spec)));
    return r;
  }

  /** Loads every dataset of the store (snapshots + log tail) so that first queries are fast. */
  async warmup(): Promise<void> {
    for (const id of await this.store.datasets.listIds()) {
      const index = await this.dataset(id);
      await index.ensureReady();
    }
  }

  /**
   * Applies a dataset's change log at least through `minSeq`, on the index that serves the
   * dataset when it returns (an index swapped in meanwhile is caught up too).
   */
  async apply(datasetId: string, minSeq: number): Promise<number> {
    for (;;) {
      const index = await this.dataset(datasetId);
      const seq = await index.apply(minSeq);
      if (this.datasets.get(datasetId) !== index) continue;
      await this.checkGrowth(index);
      return seq;
    }
  }

  private async prepareFilter(datasetId: string, filter: Filter | null): Promise<Filter | null> {
    if (!filter) return null;
    checkFilter(filter);
    const byGroupIds = await resolveGroupTrackingIds(filter, async (tid) => (await this.store.groups.getByTrackingId(datasetId, tid))?.id);
    return resolveGroupFields(byGroupIds, () => this.allGroups(datasetId));
  }

  /** Every group of a dataset, for conditions on the groups' own fields (group-fields.ts). */
  private async allGroups(datasetId: string): Promise<GroupRecord[]> {
    const out: GroupRecord[] = [];
    for (let page = 1; ; page++) {
      const { groups } = await this.store.groups.list(datasetId, page, GROUP_PAGE);
      out.push(...groups);
      if (groups.length < GROUP_PAGE) return out;
    }
  }

  /**
   * Ranked search. `record` is the dataset as the caller read it for this request (the search
   * pipeline reads it once for all its retrievals); the store is asked when it is not given.
   */
  async search(q: SearchQuery, signal?: AbortSignal, record?: DatasetRecord): Promise<SearchHits> {
    if (!ENABLED_SEARCH_TYPES.has(q.searchType)) {
      throw badRequest(`search_type "${q.searchType}" is not enabled on this server; use "bm25", "fulltext", "semantic" or "hybrid"`);
    }
    return this.admission.run(async () => {
      const { index, spec } = await this.datasetWithSpec(q.datasetId, record?.id === q.datasetId ? record : undefined);
      let filter = await this.prepareFilter(q.datasetId, q.filter);
      const typo = q.typo ? await index.correctTypos(q.query, q.typo, signal) : null;
      if (typo && typo.requiredWords.length > 0) {
        // Dataset words the user typed verbatim (prioritize_domain_specifc_words) must be in results.
        const must = typo.requiredWords.map((w) => ({ field: { field: 'content', match_all: [{ text: w }] } }));
        filter = withConditions(filter, must);
      }
      if (typo?.correctedQuery) q = withFields(q, { query: typo.correctedQuery.replace(/"/g, ' ') });
      const boost = q.fulltextBoost && q.fulltextBoost.phrase.trim() !== '' && q.fulltextBoost.factor !== 1 ? q.fulltextBoost : null;
      const query = {
        text: q.query,
        filter,
        offset: q.offset,
        limit: q.limit,
        minScore: q.scoreThreshold,
        countTotal: q.countTotal,
        boost,
        prefixLastWord: q.prefixLastWord === true,
        sparse: await this.sparseQuery(q, spec.splade, signal),
      };
      let hits: DatasetHits;
      if (q.searchType === 'semantic' || q.searchType === 'hybrid') {
        const vector = await this.queryVector(q, spec, signal);
        const reranker = q.searchType === 'hybrid' ? this.rerankerFor(spec.reranker) : null;
        hits =
          q.searchType === 'semantic'
            ? await index.searchDense(vector, query, signal)
            : reranker
              ? await index.searchHybridReranked(vector, query, reranker, signal)
              : await index.searchHybrid(vector, query, signal);
      } else {
        hits = await index.search({ fulltext: q.searchType === 'fulltext', ...query }, signal);
      }
      return { correctedQuery: typo?.correctedQuery ?? null, ...hits };
    });
  }

  /**
   * The query vector of a semantic or hybrid search: the given vector, or the embedding of the
   * query (the weighted sum of a multi-query's embeddings), moved by a semantic boost phrase.
   */
  private async queryVector(q: SearchQuery, spec: EmbeddingSpec, signal?: AbortSignal): Promise<Float32Array> {
    const multi = q.queries ?? [];
    if (multi.length > 0 && q.searchType !== 'semantic') throw badRequest('multi-query works only with search_type "semantic"');
    const boost = q.semanticBoost && q.semanticBoost.phrase.trim() !== '' && q.semanticBoost.factor !== 0 ? q.semanticBoost : null;
    let vector: Float32Array;
    if (q.vector && q.vector.length > 0) {
      if (q.vector.length !== spec.dimension) {
        throw badRequest(`the search vector has ${q.vector.length} dimensions; this dataset's embedding model has ${spec.dimension}`);
      }
      vector = q.vector;
    } else {
      const texts = multi.length > 0 ? multi.map((m) => m.query) : [q.query];
      const vectors = await this.embedders.get(spec).embed(texts, 'query', signal);
      vector = multi.length > 0 ? weightedSum(vectors, multi.map((m) => m.weight)) : vectors[0]!;
    }
    if (!boost) return vector;
    // As the reference does: q + factor x p, not renormalised.
    const [phrase] = await this.embedders.get(spec).embed([boost.phrase], 'query', signal);
    return weightedSum([vector, phrase!], [1, boost.factor]);
  }

  /** Filtered listing. */
  async scroll(q: ScrollQuery, signal?: AbortSignal): Promise<string[]> {
    return this.admission.run(async () => {
      const index = await this.dataset(q.datasetId);
      const filter = await this.prepareFilter(q.datasetId, q.filter);
      return index.scroll(filter, q.offsetChunkId, q.limit, q.sortField, q.descending, signal);
    });
  }

  /** Index statistics. */
  async stats(datasetId: string): Promise<{ chunkCount: number; appliedSeq: number; shards: number }> {
    const index = await this.dataset(datasetId);
    return withFields(await index.stats(), { shards: index.shards });
  }

  /** Drops a dataset's shards from memory (its snapshots are removed with the dataset's data). */
  async drop(datasetId: string): Promise<void> {
    const existing = this.datasets.get(datasetId);
    this.datasets.delete(datasetId);
    this.slowSeenAt.delete(datasetId);
    if (existing) await existing.drop();
  }

  /**
   * Applies a loaded dataset's new changes, written by any process (the store's change notices:
   * {@link Store.watchChanges}); `null` checks every loaded dataset. A dataset not loaded here
   * reads its log when it loads.
   */
  async changed(datasetId: string | null): Promise<void> {
    const ids = datasetId === null ? [...this.datasets.keys()] : this.datasets.has(datasetId) ? [datasetId] : [];
    for (const id of ids) await this.apply(id, 0);
  }

  /**
   * Applies changes that no writer announced (a writer whose Apply call failed, or another
   * process writing to the store): a cheap check of the log head, then the datasets behind it.
   */
  async catchUp(): Promise<void> {
    // Datasets whose shards died with a thread and whose reload failed: try again.
    for (const index of this.datasets.values()) {
      if (index.needsReload) await index.reload().catch((err: unknown) => this.logger.warn({ err, dataset: index.datasetId }, 'reload failed'));
    }
    const head = await this.store.changeLog.head();
    // On a store that other machines write to, the head is the largest committed seq of any
    // dataset, and a smaller seq of another dataset may commit after it (seqs commit in order only
    // per dataset): its change notice applies it, and every FULL_CATCH_UP_MS this looks at every
    // loaded dataset anyway, in case that notice was lost.
    const full = this.store.watchChanges !== undefined && Date.now() - this.fullCatchUpAt >= FULL_CATCH_UP_MS;
    if (head <= this.seenHead && !full) return;
    if (full) this.fullCatchUpAt = Date.now();
    for (const index of [...this.datasets.values()]) {
      if (index.appliedSeq < head) {
        await index
          .apply(0)
          .then(() => this.checkGrowth(index))
          .catch((err: unknown) => this.logger.warn({ err, dataset: index.datasetId }, 'catch-up failed'));
      }
    }
    this.seenHead = head;
  }

  /** Snapshots every loaded dataset. */
  async snapshotAll(): Promise<void> {
    await Promise.all([...this.datasets.values()].map((d) => d.snapshot()));
  }

  /** Retires replaced inline indexes at once, and stops the embedders' threads and connections. */
  async close(): Promise<void> {
    await Promise.all([...this.retiring.values()].map((retire) => retire()));
    await this.embedders.close();
  }
}
