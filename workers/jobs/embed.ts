/**
 * Embedding jobs: a job names a dataset; the worker embeds the dataset's pending chunks (vector
 * missing, outdated, or of another model) in batches, stores the vectors with a change-log entry
 * each, and asks the core to apply them. Idempotent: a retried or repeated job finds only what is
 * still pending, and a chunk never has more than one vector.
 *
 * Fairness: a job runs one turn (batches for about {@link EmbedTurnOptions.turnMs}) and, when work
 * is left, goes back to the tail of the queue, behind every other dataset's job. With one job per
 * dataset that is round-robin across datasets: a dataset with a few new chunks waits at most one
 * turn of each busy dataset, whatever their backlogs.
 */
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { CoreClient } from '../../core/client/core-client.js';
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { embeddingSpec, embedsDense, spladeSpec, type SpladeSpec } from '../../core/domain/dataset-config.js';
import { boostSparse, SpladeClient } from '../../core/embed/splade.js';
import { lexicalText } from '../../core/domain/lexical-text.js';
import type { EmbedJob } from '../../core/domain/queues.js';
import { semanticText } from '../../core/domain/semantic-text.js';
import type { EmbedderCache } from '../../core/embed/embedder-cache.js';
import type { Embedder } from '../../core/embed/embedder.js';
import type { Store } from '../../store/repository.js';

/** Chunks per batch for an embedder without a batch hint (one store transaction and one core apply per batch). */
const BATCH = 32;

/** Moves `v` toward the phrase vector `p` by `factor` times their distance (away when negative), then renormalises. */
export function applySemanticBoost(v: Float32Array, p: Float32Array, factor: number): Float32Array {
  const out = new Float32Array(v.length);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    out[i] = v[i]! + factor * (p[i]! - v[i]!);
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/** Embeds one batch of chunks (boosts included). */
async function embedChunks(embedder: Embedder, chunks: readonly ChunkRecord[]): Promise<Float32Array[]> {
  const vectors = await embedder.embed(chunks.map(semanticText), 'doc');
  const boosted = chunks.map((c, i) => ({ c, i })).filter(({ c }) => c.semanticBoost && c.semanticBoost.phrase.trim() !== '');
  if (boosted.length > 0) {
    const phrases = await embedder.embed(boosted.map(({ c }) => c.semanticBoost!.phrase), 'doc');
    boosted.forEach(({ c, i }, j) => {
      vectors[i] = applySemanticBoost(vectors[i]!, phrases[j]!, c.semanticBoost!.distance_factor);
    });
  }
  return vectors;
}

/** SPLADE clients by configuration, shared by the jobs of every dataset. */
class SpladeClients {
  private readonly clients = new Map<string, SpladeClient>();
  get(spec: SpladeSpec): SpladeClient {
    const key = JSON.stringify(spec);
    let c = this.clients.get(key);
    if (!c) this.clients.set(key, (c = new SpladeClient({ docUrl: spec.docUrl, queryUrl: spec.queryUrl, apiKey: spec.apiKey })));
    return c;
  }
}
const spladeClients = new SpladeClients();

/** Embeds one batch of the dataset's pending chunks; returns how many were pending and how many stored. */
async function denseBatch(store: Store, embedder: Embedder, model: string, datasetId: string): Promise<{ pending: number; stored: number }> {
  const pending = await store.vectors.pending(datasetId, model, embedder.batchHint ?? BATCH);
  if (pending.length === 0) return { pending: 0, stored: 0 };
  const vectors = await embedChunks(embedder, pending.map((p) => p.chunk));
  const stored = await store.vectors.put(datasetId, model, pending.map((p, i) => ({ chunkId: p.chunk.id, contentHash: p.contentHash, vector: vectors[i]! })));
  return { pending: pending.length, stored };
}

/**
 * Encodes one batch of the dataset's pending chunks into SPLADE vectors (the text fulltext
 * indexes, with the chunk's fulltext_boost applied: values of the phrase's indexes times the
 * factor) and stores them; returns how many were pending and how many stored.
 */
async function sparseBatch(store: Store, client: SpladeClient, model: string, datasetId: string): Promise<{ pending: number; stored: number }> {
  const pending = await store.sparseVectors.pending(datasetId, model, BATCH);
  if (pending.length === 0) return { pending: 0, stored: 0 };
  const vectors = await client.encode(pending.map((p) => lexicalText(p.chunk)), 'doc');
  const boosted = pending.map((p, i) => ({ c: p.chunk, i })).filter(({ c }) => c.fulltextBoost && c.fulltextBoost.phrase.trim() !== '');
  if (boosted.length > 0) {
    const phrases = await client.encode(boosted.map(({ c }) => c.fulltextBoost!.phrase), 'doc');
    boosted.forEach(({ c, i }, j) => (vectors[i] = boostSparse(vectors[i]!, phrases[j]!, c.fulltextBoost!.boost_factor)));
  }
  const stored = await store.sparseVectors.put(datasetId, model, pending.map((p, i) => ({ chunkId: p.chunk.id, sourceUpdatedAt: p.sourceUpdatedAt, vector: vectors[i]! })));
  return { pending: pending.length, stored };
}

/** Options of {@link embedProcessor}. */
export interface EmbedTurnOptions {
  /**
   * How long one job runs batches before it yields its place to the other datasets, in ms (a
   * batch is never cut: a turn is at least one batch).
   * @defaultValue `1000`
   */
  turnMs?: number;
}

/** Builds the processor of the embed queue. */
export function embedProcessor(store: Store, core: CoreClient, embedders: EmbedderCache, logger: Logger, options: EmbedTurnOptions = {}) {
  const turnMs = options.turnMs ?? 1000;
  return async (job: Job<EmbedJob>, token?: string): Promise<{ embedded: number }> => {
    const { datasetId } = job.data;
    // Totals of the earlier turns of this job, for the one event recorded when the dataset is done.
    let embedded = job.data.embedded ?? 0;
    let encoded = job.data.encoded ?? 0;
    const dataset = await store.datasets.get(datasetId);
    if (!dataset) return { embedded: 0 };
    const spec = embeddingSpec(dataset.serverConfiguration);
    // A dataset with SEMANTIC_ENABLED false gets no dense vectors (a job enqueued before the
    // switch, or for its SPLADE encoding, must not embed either).
    const embedder = embedsDense(dataset.serverConfiguration) ? embedders.get(spec) : null;
    const splade = spladeSpec(dataset.serverConfiguration);
    const started = Date.now();
    let done = false;
    while (Date.now() - started < turnMs) {
      // Dense first: semantic search is the default reader of background work.
      let batch = embedder ? await denseBatch(store, embedder, spec.modelKey, datasetId) : { pending: 0, stored: 0 };
      let sparse = false;
      if (batch.pending === 0 && splade) {
        batch = await sparseBatch(store, spladeClients.get(splade), splade.modelKey, datasetId);
        sparse = true;
      }
      if (batch.pending === 0) {
        done = true;
        break;
      }
      if (sparse) encoded += batch.stored;
      else embedded += batch.stored;
      // Searchable once the core has applied them; if it is down, it replays the change log on start.
      await core.apply(datasetId).catch((err: unknown) => logger.warn({ dataset: datasetId, err: (err as Error).message }, 'core apply after embedding failed'));
    }
    if (!done && token !== undefined) {
      // Back to the tail of the queue (a delay of 0 is promoted behind the jobs already waiting);
      // skipAttempt: a turn is not a failed attempt.
      await job.updateData({ datasetId, embedded, encoded });
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (embedded > 0) {
      await store.events.add(datasetId, 'chunks_embedded', { count: embedded, model: spec.modelKey });
      logger.info({ dataset: datasetId, embedded, model: spec.modelKey }, 'chunks embedded');
    }
    if (encoded > 0 && splade) {
      await store.events.add(datasetId, 'chunks_sparse_encoded', { count: encoded, model: splade.modelKey });
      logger.info({ dataset: datasetId, encoded, model: splade.modelKey }, 'chunks sparse-encoded');
    }
    return { embedded: embedded + encoded };
  };
}
