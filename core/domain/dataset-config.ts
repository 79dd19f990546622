/**
 * A dataset's `server_configuration` (UPPER_SNAKE keys, as on the wire). Stored as given; read
 * with these defaults filled in. Unknown keys are kept so that clients of the reference
 * implementation can round-trip their settings.
 */
import { distanceMetricOf, type DistanceMetric } from './distance-metric.js';
import { trimTrailingSlashes } from './trim-slashes.js';

/** Defaults of every known key. */
export const DATASET_CONFIG_DEFAULTS = Object.freeze({
  /** OpenAI-compatible chat endpoint for RAG; empty uses the embedded extractive answerer. */
  LLM_BASE_URL: '',
  /** Bearer key sent to LLM_BASE_URL (never shown back: see facade/present/tenancy.ts); empty sends a placeholder. */
  LLM_API_KEY: '',
  /** Chat model name sent to LLM_BASE_URL. */
  LLM_DEFAULT_MODEL: 'gpt-4o',
  /** OpenAI-compatible /v1/embeddings endpoint; empty uses the embedded USE-Lite model. */
  EMBEDDING_BASE_URL: '',
  /** Embedding model name. */
  EMBEDDING_MODEL_NAME: 'use-lite',
  /** Dimension of the dense vectors. */
  EMBEDDING_SIZE: 512,
  /** Prefix added to queries before embedding. */
  EMBEDDING_QUERY_PREFIX: '',
  /** Dense distance: cosine, dot, euclidean or manhattan. */
  DISTANCE_METRIC: 'cosine',
  /** Prompt placed before the last user message in RAG. */
  RAG_PROMPT: 'Use the following retrieved documents to respond briefly and accurately:',
  /** System prompt of RAG conversations. */
  SYSTEM_PROMPT: 'You are a helpful assistant',
  /** Chunks retrieved into a topic message's context. */
  N_RETRIEVALS_TO_INCLUDE: 5,
  /** Sampling temperature of RAG. */
  TEMPERATURE: 0.5,
  /** Whether bm25 search is enabled. */
  BM25_ENABLED: true,
  /** BM25 length normalisation. */
  BM25_B: 0.4,
  /** BM25 term-frequency saturation. */
  BM25_K: 0.9,
  /** Whether fulltext (sparse) search is enabled. */
  FULLTEXT_ENABLED: true,
  /** Whether semantic (dense) search is enabled. */
  SEMANTIC_ENABLED: true,
  /** Largest number of results any one search may page through. */
  MAX_LIMIT: 10000,
  /** Whether the dataset is publicly searchable without a key. */
  PUBLIC_DATASET: false,
  /** text-embeddings-inference compatible /rerank endpoint for hybrid search; empty uses score fusion. */
  RERANKER_BASE_URL: '',
  /**
   * text-embeddings-inference compatible /embed_sparse endpoint (a SPLADE model) for fulltext
   * search; empty uses the embedded fulltext (BM25 with proximity pairs).
   */
  SPLADE_BASE_URL: '',
  /** Separate /embed_sparse endpoint for queries (SPLADE query encoders differ); empty uses SPLADE_BASE_URL. */
  SPLADE_QUERY_BASE_URL: '',
});

/** The configuration with defaults for every absent known key. */
export function withConfigDefaults(stored: Record<string, unknown>): Record<string, unknown> {
  // A spread, not withFields: `stored` is the user's JSON, whose `__proto__` key must stay a key. Read at most once per write to the store.
  // eslint-disable-next-line no-restricted-syntax
  return { ...DATASET_CONFIG_DEFAULTS, ...stored };
}

/** How a dataset's chunks and queries are embedded, from its configuration. */
export interface EmbeddingSpec {
  readonly baseUrl: string;
  readonly model: string;
  readonly dimension: number;
  readonly queryPrefix: string;
  readonly apiKey: string;
  /** DISTANCE_METRIC. */
  readonly distance: DistanceMetric;
  /** Identity stored with every vector: vectors of two different keys are never mixed. */
  readonly modelKey: string;
}

const str = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);
const int = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback);

/** The embedding settings of a stored configuration (defaults filled in); a 400 for an unknown DISTANCE_METRIC. */
export function embeddingSpec(stored: Record<string, unknown>): EmbeddingSpec {
  const baseUrl = trimTrailingSlashes(str(stored.EMBEDDING_BASE_URL, DATASET_CONFIG_DEFAULTS.EMBEDDING_BASE_URL).trim());
  const model = baseUrl === '' ? 'use-lite' : str(stored.EMBEDDING_MODEL_NAME, DATASET_CONFIG_DEFAULTS.EMBEDDING_MODEL_NAME).trim();
  const dimension = baseUrl === '' ? 512 : int(stored.EMBEDDING_SIZE, DATASET_CONFIG_DEFAULTS.EMBEDDING_SIZE);
  return {
    baseUrl,
    model,
    dimension,
    queryPrefix: str(stored.EMBEDDING_QUERY_PREFIX, ''),
    apiKey: str(stored.EMBEDDING_API_KEY, ''),
    distance: distanceMetricOf(stored.DISTANCE_METRIC ?? DATASET_CONFIG_DEFAULTS.DISTANCE_METRIC),
    // The endpoint is part of the identity: the same model name on two servers may not be the same model.
    modelKey: baseUrl === '' ? 'use-lite@512' : `${model}@${dimension}@${baseUrl}`,
  };
}

/**
 * Whether the job workers give the dataset's chunks dense vectors: not when SEMANTIC_ENABLED is
 * false, since every reader of them (semantic and hybrid search, semantic recommendations and
 * reranking) is then refused, and embedding would only spend the embedder's time or money.
 */
export function embedsDense(stored: Record<string, unknown>): boolean {
  return stored.SEMANTIC_ENABLED !== false;
}

/** A dataset's SPLADE encoder for fulltext search. */
export interface SpladeSpec {
  /** Root of the document encoder (`/embed_sparse` is appended). */
  readonly docUrl: string;
  /** Root of the query encoder. */
  readonly queryUrl: string;
  /** Bearer token for both. */
  readonly apiKey: string;
  /** Identity stored with every sparse vector (the document encoder's endpoint). */
  readonly modelKey: string;
}

/** The SPLADE encoder of a dataset (SPLADE_BASE_URL, SPLADE_QUERY_BASE_URL, SPLADE_API_KEY), or null. */
export function spladeSpec(stored: Record<string, unknown>): SpladeSpec | null {
  const docUrl = trimTrailingSlashes(str(stored.SPLADE_BASE_URL, '').trim());
  if (docUrl === '') return null;
  const queryUrl = trimTrailingSlashes(str(stored.SPLADE_QUERY_BASE_URL, '').trim()) || docUrl;
  return { docUrl, queryUrl, apiKey: str(stored.SPLADE_API_KEY, ''), modelKey: `splade@${docUrl}` };
}

/** The cross-encoder of a dataset (RERANKER_BASE_URL, RERANKER_API_KEY), or null when none is configured. */
export function rerankerSpec(stored: Record<string, unknown>): { baseUrl: string; apiKey: string } | null {
  const baseUrl = trimTrailingSlashes(str(stored.RERANKER_BASE_URL, '').trim());
  return baseUrl === '' ? null : { baseUrl, apiKey: str(stored.RERANKER_API_KEY, '') };
}

/** A dataset's MAX_LIMIT: the most results any search may page through. */
export function maxLimitOf(config: Record<string, unknown>): number {
  const v = config.MAX_LIMIT;
  return typeof v === 'number' && v > 0 ? v : DATASET_CONFIG_DEFAULTS.MAX_LIMIT;
}

/** A dataset's RAG settings, defaults filled in. */
export interface LlmSpec {
  /** LLM_BASE_URL (trailing slashes dropped; empty: the extractive answerer) and LLM_API_KEY. */
  readonly endpoint: { readonly baseUrl: string; readonly apiKey: string };
  /** LLM_DEFAULT_MODEL. */
  readonly model: string;
  /** TEMPERATURE, when within 0..2; else the default. */
  readonly temperature: number;
  readonly systemPrompt: string;
  readonly ragPrompt: string;
}

/** The RAG settings of a stored configuration (LLM_BASE_URL, LLM_API_KEY, LLM_DEFAULT_MODEL, TEMPERATURE, SYSTEM_PROMPT, RAG_PROMPT). */
export function llmSpec(stored: Record<string, unknown>): LlmSpec {
  const d = DATASET_CONFIG_DEFAULTS;
  const t = stored.TEMPERATURE;
  return {
    endpoint: { baseUrl: trimTrailingSlashes(str(stored.LLM_BASE_URL, d.LLM_BASE_URL).trim()), apiKey: str(stored.LLM_API_KEY, d.LLM_API_KEY) },
    model: str(stored.LLM_DEFAULT_MODEL, d.LLM_DEFAULT_MODEL),
    temperature: typeof t === 'number' && t >= 0 && t <= 2 ? t : d.TEMPERATURE,
    systemPrompt: str(stored.SYSTEM_PROMPT, d.SYSTEM_PROMPT),
    ragPrompt: str(stored.RAG_PROMPT, d.RAG_PROMPT),
  };
}
