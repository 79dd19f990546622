/**
 * Typo correction of one dataset: the shards' vocabularies, turned on and filled from the store
 * the first time a search asks for correction (the bootstrap), then asked once per query.
 */
import type { Logger } from 'pino';
import { lexicalText } from '../domain/lexical-text.js';
import { decideCorrections, mergeTypoAnswers, planTypoLookups, type TypoAnswer } from '../typo/correct.js';
import type { TypoOptions } from '../typo/options.js';
import type { Store } from '../../store/repository.js';
import { nextTurn, sliceEnd } from './inline-slices.js';
import type { ShardSet } from './shard-set.js';

/** Longest a typo-corrected search waits for the dataset's first vocabulary build. */
const TYPO_BUILD_WAIT_MS = 2000;

/** Chunks read from the store per batch while filling the typo vocabularies. */
const TYPO_FILL_BATCH = 1000;

/** A query's correction: the corrected query (null when no word changed) and the words results must contain. */
export interface TypoCorrection {
  readonly correctedQuery: string | null;
  readonly requiredWords: string[];
}

/** The typo vocabularies of one dataset's shards. */
export class DatasetTypos {
  /** Resolves once the shards' vocabularies are on and filled (null: not asked yet, or reset). */
  private ready: Promise<void> | null = null;

  constructor(
    private readonly shards: ShardSet,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** Forgets the vocabularies (the shards were reloaded fresh, without them). */
  reset(): void {
    this.ready = null;
  }

  /**
   * Starts filling the vocabularies in the background: for a dataset whose snapshots had them on
   * (a load does not restore them, see workers/shard/persist/shard-snapshot.ts), so that its
   * typo-corrected queries after a restart find them filled, or nearly.
   */
  warm(): void {
    void this.building();
  }

  /** The bootstrap, started once (again after a failure or a reset). */
  private building(): Promise<void> {
    return (this.ready ??= this.bootstrap().catch((err: unknown) => {
      this.ready = null;
      this.logger.error({ err, dataset: this.shards.datasetId }, 'typo vocabulary build failed');
    }));
  }

  /**
   * Corrects `query` against the words of every shard: one round trip asks each shard about the
   * query's correctable words; answers are merged (counts summed) and decided here. The shards
   * must be loaded.
   */
  async correct(query: string, options: TypoOptions, signal?: AbortSignal): Promise<TypoCorrection> {
    const plan = planTypoLookups(query, options);
    if (plan.lookups.length === 0) return { correctedQuery: null, requiredWords: [] };
    const building = this.building();
    // A large dataset's first build takes a while (~30 s per million chunks): searches do not
    // wait for it longer than this, they run uncorrected until it is done.
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      building.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), TYPO_BUILD_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!waited || this.ready === null) return { correctedQuery: null, requiredWords: [] };
    const replies = await this.shards.run<TypoAnswer[]>(() => ({ op: 'typo', lookups: plan.lookups }), signal);
    const decided = decideCorrections(plan, mergeTypoAnswers(replies));
    // As the reference: corrected_query only when a word was corrected, not when one was only quoted.
    return { correctedQuery: decided.corrections.length > 0 ? decided.correctedQuery : null, requiredWords: decided.requiredWords };
  }

  /**
   * Turns the shards' typo vocabularies on and fills them from the store (once per index: a
   * shard whose vocabulary is on already is complete). Writes applied meanwhile are counted by
   * the shards themselves, and the fill skips the chunks they counted.
   */
  private async bootstrap(): Promise<void> {
    const wasOn = await this.shards.run<boolean>(() => ({ op: 'typoEnable' }));
    if (wasOn.every(Boolean)) return;
    const started = Date.now();
    let after: string | null = null;
    let filled = 0;
    for (;;) {
      const chunks = await this.store.chunks.scrollIds(this.shards.datasetId, after, TYPO_FILL_BATCH);
      if (chunks.length === 0) break;
      if (this.shards.inline) {
        // A slice at a time (inline-slices.ts): 1,000 SciFact chunks counted in one task held the
        // event loop that answers every request for 240-460 ms.
        const docs = chunks.map((c) => ({ chunkId: c.id, text: lexicalText(c) }));
        for (let start = 0; start < docs.length; ) {
          if (start > 0) await nextTurn();
          const end = sliceEnd(docs, start);
          const slice = docs.slice(start, end);
          start = end;
          await this.shards.run(() => ({ op: 'typoFill', docs: slice }));
        }
      } else {
        const { byShard, shards } = this.shards.partition(chunks, (c) => c.id);
        await this.shards.run((shard) => ({ op: 'typoFill', docs: byShard[shard]!.map((c) => ({ chunkId: c.id, text: lexicalText(c) })) }), undefined, shards);
      }
      filled += chunks.length;
      after = chunks[chunks.length - 1]!.id;
    }
    this.logger.info({ dataset: this.shards.datasetId, chunks: filled, ms: Date.now() - started }, 'typo vocabulary built');
  }
}
