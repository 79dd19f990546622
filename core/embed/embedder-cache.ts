/** One embedder per embedding configuration per process: each owns threads or connections. */
import type { EmbeddingSpec } from '../domain/dataset-config.js';
import { createEmbedder, type Embedder } from './embedder.js';

/** Embedders shared by a whole process (the core's queries, the workers' jobs), one per configuration. */
export class EmbedderCache {
  private readonly byKey = new Map<string, Embedder>();

  /** `threads`: worker threads of the embedded model (ignored by HTTP embedders). */
  constructor(private readonly threads = 1) {}

  /** The embedder of a dataset's embedding settings. */
  get(spec: EmbeddingSpec): Embedder {
    const key = JSON.stringify([spec.baseUrl, spec.model, spec.dimension, spec.queryPrefix, spec.apiKey]);
    let e = this.byKey.get(key);
    if (!e) {
      e = createEmbedder({ baseUrl: spec.baseUrl, model: spec.model, dimension: spec.dimension, queryPrefix: spec.queryPrefix, apiKey: spec.apiKey, threads: this.threads });
      this.byKey.set(key, e);
    }
    return e;
  }

  /** Closes every embedder. */
  async close(): Promise<void> {
    await Promise.all([...this.byKey.values()].map((e) => e.close()));
    this.byKey.clear();
  }
}
