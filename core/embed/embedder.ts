/**
 * Dense text embedders behind one interface. A dataset's `server_configuration` picks one: an
 * empty EMBEDDING_BASE_URL means the embedded Universal Sentence Encoder Lite (no network, 512
 * dimensions), anything else an OpenAI-compatible `POST {baseUrl}/embeddings` endpoint.
 * Vectors of two models must never be mixed in one index, so {@link Embedder.model} is stored
 * beside the index by the caller.
 */
import { QuarryError } from '../domain/errors.js';
import { OpenAiEmbedder } from './openai.js';
import { USE_LITE_DIMENSION, USE_LITE_MODEL, UseLiteEmbedder } from './use-lite.js';

/** Errors shared by the embedders (defined in embed-errors.ts to avoid an import cycle). */
export { abortedError, dimensionMismatch, embedderClosed } from './embed-errors.js';

/** Whether a text is a search query (gets the query prefix) or a document to index. */
export type EmbedKind = 'query' | 'doc';

/** Turns texts into dense vectors of one fixed dimension. */
export interface Embedder {
  /** Model id; store it with the index and never mix vectors of two models. */
  readonly model: string;
  /** Length of every vector returned. */
  readonly dimension: number;
  /**
   * Texts per background batch when it differs from the job workers' default: the embedded
   * model is CPU-bound, so its batches stay small enough that one takes about a second and a
   * busy dataset never holds the worker long (see workers/jobs/embed.ts).
   */
  readonly batchHint?: number;
  /**
   * One vector per text, in input order. Rejects with a {@link QuarryError}: `bad_request` for a
   * misconfiguration or a request the provider refused, `unavailable` when the provider is down
   * or replied nonsense, `timeout` when a deadline passed or `signal` aborted, `internal` for a
   * failure of the embedded model.
   */
  embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases threads and sockets; `embed` fails afterwards. */
  close(): Promise<void>;
}

/**
 * How to build an {@link Embedder}. Mirrors the dataset keys EMBEDDING_BASE_URL,
 * EMBEDDING_MODEL_NAME, EMBEDDING_SIZE and EMBEDDING_QUERY_PREFIX; the other options are
 * operational and come from the process configuration.
 */
export interface EmbedderConfig {
  /**
   * OpenAI-compatible API root such as `http://host:8080/v1` (`/embeddings` is appended); empty
   * selects the embedded USE-Lite model.
   * @defaultValue `''` (EMBEDDING_BASE_URL)
   */
  baseUrl: string;
  /**
   * Model name sent to the endpoint; with an empty `baseUrl` it must be `use-lite` (or empty).
   * @defaultValue `'use-lite'` (EMBEDDING_MODEL_NAME)
   */
  model: string;
  /**
   * Expected vector length; every returned vector is checked against it. USE-Lite is 512.
   * @defaultValue `512` (EMBEDDING_SIZE)
   */
  dimension: number;
  /**
   * Sent as `Authorization: Bearer <apiKey>` when non-empty (OpenAI-compatible endpoints only).
   * @defaultValue none (no Authorization header)
   */
  apiKey?: string;
  /**
   * Prepended to every text embedded with kind `'query'` (e5/bge-style instructions).
   * @defaultValue `''` (EMBEDDING_QUERY_PREFIX)
   */
  queryPrefix?: string;
  /**
   * Milliseconds one HTTP request may take before it is aborted (and retried).
   * @defaultValue `30000`
   */
  timeoutMs?: number;
  /**
   * Texts per HTTP request; larger inputs are split into sequential requests.
   * @defaultValue `64`
   */
  batchSize?: number;
  /**
   * Retries of one request after a 429, a 5xx, a network error or a timeout (0 = try once).
   * @defaultValue `4`
   */
  maxRetries?: number;
  /**
   * First backoff delay in milliseconds; attempt `n` waits a random time in
   * `[0, min(maxRetryDelayMs, retryBaseDelayMs * 2^n)]` (full jitter) unless `Retry-After` says.
   * @defaultValue `500`
   */
  retryBaseDelayMs?: number;
  /**
   * Longest wait between two attempts in milliseconds; a `Retry-After` above it ends the retries
   * at once (the error carries the provider's delay for the caller).
   * @defaultValue `30000`
   */
  maxRetryDelayMs?: number;
  /**
   * Worker threads running the embedded model (each loads its own copy, ~30 MB, on first use).
   * @defaultValue `1`
   */
  threads?: number;
}

/** Defaults of every optional {@link EmbedderConfig} field, in one place. */
export const EMBEDDER_DEFAULTS = Object.freeze({
  baseUrl: '',
  model: USE_LITE_MODEL,
  dimension: USE_LITE_DIMENSION,
  apiKey: '',
  queryPrefix: '',
  timeoutMs: 30_000,
  batchSize: 64,
  maxRetries: 4,
  retryBaseDelayMs: 500,
  maxRetryDelayMs: 30_000,
  threads: 1,
});

/** {@link EmbedderConfig} with every default filled in. */
export type ResolvedEmbedderConfig = Readonly<Required<EmbedderConfig>>;

function positiveInt(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new QuarryError('bad_request', `embedder option ${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

/** Fills defaults and validates ranges; throws `bad_request` naming the bad option. */
export function resolveEmbedderConfig(config: EmbedderConfig): ResolvedEmbedderConfig {
  const d = EMBEDDER_DEFAULTS;
  return Object.freeze({
    baseUrl: config.baseUrl.trim(),
    model: config.model.trim(),
    dimension: positiveInt('EMBEDDING_SIZE', config.dimension, 1),
    apiKey: config.apiKey ?? d.apiKey,
    queryPrefix: config.queryPrefix ?? d.queryPrefix,
    timeoutMs: positiveInt('timeoutMs', config.timeoutMs ?? d.timeoutMs, 1),
    batchSize: positiveInt('batchSize', config.batchSize ?? d.batchSize, 1),
    maxRetries: positiveInt('maxRetries', config.maxRetries ?? d.maxRetries, 0),
    retryBaseDelayMs: positiveInt('retryBaseDelayMs', config.retryBaseDelayMs ?? d.retryBaseDelayMs, 0),
    maxRetryDelayMs: positiveInt('maxRetryDelayMs', config.maxRetryDelayMs ?? d.maxRetryDelayMs, 0),
    threads: positiveInt('threads', config.threads ?? d.threads, 1),
  });
}

/**
 * Builds the embedder a configuration names. Cheap: the embedded model's threads start and load
 * on the first `embed`. Create one per process per configuration and share it.
 */
export function createEmbedder(config: EmbedderConfig): Embedder {
  const resolved = resolveEmbedderConfig(config);
  if (resolved.baseUrl === '') return new UseLiteEmbedder(resolved);
  return new OpenAiEmbedder(resolved);
}
