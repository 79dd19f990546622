/**
 * The search engine of the core: one {@link DatasetIndex} per dataset, created on first use and
 * warmed at start, plus the canonical operations the gRPC handlers call.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { DATASET_CONFIG_DEFAULTS } from '../domain/dataset-config.js';
import { badRequest, notFound } from '../domain/errors.js';
import type { Filter } from '../domain/filter.js';
import type { Store } from '../../store/repository.js';
import type { ShardPool } from '../pool/shard-pool.js';
import { Admission } from './admission.js';
import { DatasetIndex, type DatasetHits } from './dataset-index.js';
import { checkFilter, resolveGroupTrackingIds } from './filter-check.js';

/** Search types the core serves today. */
const ENABLED_SEARCH_TYPES = new Set(['bm25']);

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
}

/** A scroll as the core receives it. */
export interface ScrollQuery {
  readonly datasetId: string;
  readonly filter: Filter | null;
  readonly offsetChunkId: string | null;
  readonly limit: number;
  readonly sortField: string | null;
  readonly descending: boolean;
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** The engine. */
export class Engine {
  private readonly datasets = new Map<string, DatasetIndex>();
  private readonly admission: Admission;
  private seenHead = 0;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly pool: ShardPool,
    private readonly logger: Logger,
  ) {
    this.admission = new Admission(config.maxConcurrentSearches);
  }

  /** The index of a live dataset; 404 when the store does not have it (and its shards are dropped). */
  async dataset(datasetId: string): Promise<DatasetIndex> {
    const record = await this.store.datasets.get(datasetId);
    const existing = this.datasets.get(datasetId);
    if (!record) {
      if (existing) {
        this.datasets.delete(datasetId);
        await existing.drop();
      }
      throw notFound(`dataset ${datasetId} does not exist`);
    }
    if (existing) return existing;
    const cfg = record.serverConfiguration;
    const index = new DatasetIndex(
      datasetId,
      this.config.shardsPerDataset,
      { k1: num(cfg.BM25_K, DATASET_CONFIG_DEFAULTS.BM25_K), b: num(cfg.BM25_B, DATASET_CONFIG_DEFAULTS.BM25_B) },
      this.pool,
      this.store,
      this.config.dataDir,
      this.logger,
    );
    this.datasets.set(datasetId, index);
    return index;
  }

  /** Loads every dataset of the store (snapshots + log tail) so that first queries are fast. */
  async warmup(): Promise<void> {
    for (const id of await this.store.datasets.listIds()) {
      const index = await this.dataset(id);
      await index.ensureReady();
    }
  }

  /** Applies a dataset's change log at least through `minSeq`. */
  async apply(datasetId: string, minSeq: number): Promise<number> {
    return (await this.dataset(datasetId)).apply(minSeq);
  }

  private async prepareFilter(datasetId: string, filter: Filter | null): Promise<Filter | null> {
    if (!filter) return null;
    checkFilter(filter);
    return resolveGroupTrackingIds(filter, async (tid) => (await this.store.groups.getByTrackingId(datasetId, tid))?.id);
  }

  /** Ranked search. */
  async search(q: SearchQuery, signal?: AbortSignal): Promise<DatasetHits> {
    if (!ENABLED_SEARCH_TYPES.has(q.searchType)) {
      throw badRequest(`search_type "${q.searchType}" is not enabled on this server yet; use "bm25"`);
    }
    return this.admission.run(async () => {
      const index = await this.dataset(q.datasetId);
      const filter = await this.prepareFilter(q.datasetId, q.filter);
      return index.search(
        { text: q.query, filter, offset: q.offset, limit: q.limit, minScore: q.scoreThreshold, countTotal: q.countTotal },
        signal,
      );
    });
  }

  /** Filtered listing. */
  async scroll(q: ScrollQuery): Promise<string[]> {
    return this.admission.run(async () => {
      const index = await this.dataset(q.datasetId);
      const filter = await this.prepareFilter(q.datasetId, q.filter);
      return index.scroll(filter, q.offsetChunkId, q.limit, q.sortField, q.descending);
    });
  }

  /** Index statistics. */
  async stats(datasetId: string): Promise<{ chunkCount: number; appliedSeq: number; shards: number }> {
    const index = await this.dataset(datasetId);
    return { ...(await index.stats()), shards: index.shards };
  }

  /** Drops a dataset's shards from memory (its snapshots are removed with the dataset's data). */
  async drop(datasetId: string): Promise<void> {
    const existing = this.datasets.get(datasetId);
    this.datasets.delete(datasetId);
    if (existing) await existing.drop();
  }

  /**
   * Applies changes that no writer announced (a writer whose Apply call failed, or another
   * process writing to the store): a cheap check of the log head, then the datasets behind it.
   */
  async catchUp(): Promise<void> {
    const head = await this.store.changeLog.head();
    if (head <= this.seenHead) return;
    for (const index of this.datasets.values()) {
      if (index.appliedSeq < head) await index.apply(0).catch((err: unknown) => this.logger.warn({ err, dataset: index.datasetId }, 'catch-up failed'));
    }
    this.seenHead = head;
  }

  /** Snapshots every loaded dataset. */
  async snapshotAll(): Promise<void> {
    await Promise.all([...this.datasets.values()].map((d) => d.snapshot()));
  }
}
