/**
 * Embedding jobs: a job names a dataset; the worker embeds the dataset's pending chunks (vector
 * missing, outdated, or of another model) in batches, stores the vectors with a change-log entry
 * each, and asks the core to apply them. Idempotent: a retried or repeated job finds only what is
 * still pending, and a chunk never has more than one vector.
 */
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { CoreClient } from '../../core/client/core-client.js';
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { embeddingSpec, spladeSpec, type SpladeSpec } from '../../core/domain/dataset-config.js';
import { boostSparse, SpladeClient } from '../../core/embed/splade.js';
import { lexicalText } from '../../core/domain/lexical-text.js';
import type { EmbedJob } from '../../core/domain/queues.js';
import { semanticText } from '../../core/domain/semantic-text.js';
import type { EmbedderCache } from '../../core/embed/embedder-cache.js';
import type { Embedder } from '../../core/embed/embedder.js';
import type { Store } from '../../store/repository.js';

/** Chunks embedded per batch (one store transaction and one core apply per batch). */
const BATCH = 32;
/** Batches one job runs before it yields to other datasets (the sweep re-enqueues the rest). */
const MAX_BATCHES_PER_JOB = 200;

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

/**
 * Encodes a dataset's pending chunks into SPLADE vectors (the text fulltext indexes, with the
 * chunk's fulltext_boost applied: values of the phrase's indexes times the factor), stores them
 * and asks the core to apply them; returns how many were stored.
 */
async function encodeSparse(store: Store, core: CoreClient, client: SpladeClient, model: string, datasetId: string, logger: Logger, job: Job<EmbedJob>): Promise<number> {
  let encoded = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_JOB; batch++) {
    const pending = await store.sparseVectors.pending(datasetId, model, BATCH);
    if (pending.length === 0) break;
    const vectors = await client.encode(pending.map((p) => lexicalText(p.chunk)), 'doc');
    const boosted = pending.map((p, i) => ({ c: p.chunk, i })).filter(({ c }) => c.fulltextBoost && c.fulltextBoost.phrase.trim() !== '');
    if (boosted.length > 0) {
      const phrases = await client.encode(boosted.map(({ c }) => c.fulltextBoost!.phrase), 'doc');
      boosted.forEach(({ c, i }, j) => (vectors[i] = boostSparse(vectors[i]!, phrases[j]!, c.fulltextBoost!.boost_factor)));
    }
    encoded += await store.sparseVectors.put(datasetId, model, pending.map((p, i) => ({ chunkId: p.chunk.id, sourceUpdatedAt: p.sourceUpdatedAt, vector: vectors[i]! })));
    await core.apply(datasetId).catch((err: unknown) => logger.warn({ dataset: datasetId, err: (err as Error).message }, 'core apply after sparse encoding failed'));
    await job.updateProgress({ encoded });
  }
  if (encoded > 0) {
    await store.events.add(datasetId, 'chunks_sparse_encoded', { count: encoded, model });
    logger.info({ dataset: datasetId, encoded, model }, 'chunks sparse-encoded');
  }
  return encoded;
}

/** Builds the processor of the embed queue. */
export function embedProcessor(store: Store, core: CoreClient, embedders: EmbedderCache, logger: Logger) {
  return async (job: Job<EmbedJob>): Promise<{ embedded: number }> => {
    const { datasetId } = job.data;
    const dataset = await store.datasets.get(datasetId);
    if (!dataset) return { embedded: 0 };
    const spec = embeddingSpec(dataset.serverConfiguration);
    const embedder = embedders.get(spec);
    let embedded = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_JOB; batch++) {
      const pending = await store.vectors.pending(datasetId, spec.modelKey, BATCH);
      if (pending.length === 0) break;
      const vectors = await embedChunks(embedder, pending.map((p) => p.chunk));
      const stored = await store.vectors.put(
        datasetId,
        spec.modelKey,
        pending.map((p, i) => ({ chunkId: p.chunk.id, contentHash: p.contentHash, vector: vectors[i]! })),
      );
      embedded += stored;
      // Searchable by semantic search once the core has applied them; if it is down, it replays on start.
      await core.apply(datasetId).catch((err: unknown) => logger.warn({ dataset: datasetId, err: (err as Error).message }, 'core apply after embedding failed'));
      await job.updateProgress({ embedded });
    }
    if (embedded > 0) {
      await store.events.add(datasetId, 'chunks_embedded', { count: embedded, model: spec.modelKey });
      logger.info({ dataset: datasetId, embedded, model: spec.modelKey }, 'chunks embedded');
    }
    const splade = spladeSpec(dataset.serverConfiguration);
    const encoded = splade ? await encodeSparse(store, core, spladeClients.get(splade), splade.modelKey, datasetId, logger, job) : 0;
    return { embedded: embedded + encoded };
  };
}
