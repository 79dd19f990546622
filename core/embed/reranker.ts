/**
 * Cross-encoder reranking over a text-embeddings-inference compatible `POST {baseUrl}/rerank`
 * (`{query, texts, truncate: true}` → `[{index, score}]`), in batches, each with a timeout;
 * 429, 5xx, network errors and timeouts are retried with backoff, other 4xx fail at once, and
 * every reply is checked (one finite score per text, indexes in range, none repeated).
 */
import { QuarryError } from '../domain/errors.js';
import { endpointUrl, postJson } from './post-json.js';

/** Options of a {@link Reranker}. */
export interface RerankerConfig {
  /** API root, e.g. `http://host:8080` (`/rerank` is appended). */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when non-empty. @defaultValue none */
  readonly apiKey?: string;
  /** Texts per request (the reference implementation sends 20). @defaultValue 20 */
  readonly batchSize?: number;
  /** Milliseconds one request may take. @defaultValue 10000 */
  readonly timeoutMs?: number;
  /** Retries of one request after 429/5xx/network errors/timeouts. @defaultValue 2 */
  readonly maxRetries?: number;
  /** First backoff delay in ms (full jitter, doubling). @defaultValue 200 */
  readonly retryBaseDelayMs?: number;
}

/** Scores (query, text) pairs with a cross-encoder; higher is more relevant. */
export class Reranker {
  private readonly url: string;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;

  constructor(private readonly config: RerankerConfig) {
    this.url = endpointUrl(config.baseUrl, '/rerank', 'RERANKER_BASE_URL');
    this.batchSize = config.batchSize ?? 20;
    this.timeoutMs = config.timeoutMs ?? 10_000;
    this.maxRetries = config.maxRetries ?? 2;
    this.retryBaseDelayMs = config.retryBaseDelayMs ?? 200;
  }

  /** One score per text, in input order. */
  async score(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]> {
    const out: number[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = texts.slice(start, start + this.batchSize);
      const opts = { apiKey: this.config.apiKey, timeoutMs: this.timeoutMs, maxRetries: this.maxRetries, retryBaseDelayMs: this.retryBaseDelayMs, what: 'reranker' };
      out.push(...parseScores(await postJson(this.url, { query, texts: batch, truncate: true }, opts, signal), batch.length, this.url));
    }
    return out;
  }
}

/** Checks a `/rerank` reply and returns the scores in input order. */
export function parseScores(body: string, count: number, source: string): number[] {
  const bad = (why: string) => new QuarryError('unavailable', `reranker ${source} replied nonsense: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw bad('not JSON');
  }
  if (!Array.isArray(parsed)) throw bad('expected an array of {index, score}');
  if (parsed.length !== count) throw bad(`${parsed.length} scores for ${count} texts`);
  const scores = new Array<number>(count).fill(Number.NaN);
  for (const item of parsed as { index?: unknown; score?: unknown }[]) {
    const { index, score } = item ?? {};
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) throw bad(`index ${String(index)} out of range`);
    if (typeof score !== 'number' || !Number.isFinite(score)) throw bad(`score ${String(score)} is not a number`);
    if (!Number.isNaN(scores[index]!)) throw bad(`index ${index} repeated`);
    scores[index] = score;
  }
  return scores;
}
