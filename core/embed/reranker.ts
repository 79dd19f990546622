/**
 * Cross-encoder reranking over a text-embeddings-inference compatible `POST {baseUrl}/rerank`
 * (`{query, texts, truncate: true}` → `[{index, score}]`), in batches, each with a timeout;
 * 429, 5xx, network errors and timeouts are retried with backoff, other 4xx fail at once, and
 * every reply is checked (one finite score per text, indexes in range, none repeated).
 */
import { QuarryError } from '../domain/errors.js';
import { backoffDelayMs, parseRetryAfterMs, sleep } from './backoff.js';

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
    let base: URL;
    try {
      base = new URL(config.baseUrl);
    } catch {
      throw new QuarryError('bad_request', `RERANKER_BASE_URL ${JSON.stringify(config.baseUrl)} is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new QuarryError('bad_request', `RERANKER_BASE_URL must be http or https, got ${base.protocol}`);
    base.pathname = `${base.pathname.replace(/\/+$/, '')}/rerank`;
    this.url = base.toString();
    this.batchSize = config.batchSize ?? 20;
    this.timeoutMs = config.timeoutMs ?? 10_000;
    this.maxRetries = config.maxRetries ?? 2;
    this.retryBaseDelayMs = config.retryBaseDelayMs ?? 200;
  }

  /** One score per text, in input order. */
  async score(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]> {
    const out: number[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      out.push(...(await this.batch(query, texts.slice(start, start + this.batchSize), signal)));
    }
    return out;
  }

  private async batch(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]> {
    let lastError: QuarryError | undefined;
    for (let attempt = 0; attempt <= this.maxRetries; attempt++) {
      if (signal?.aborted) throw new QuarryError('timeout', 'the rerank request was cancelled (deadline passed)');
      const timeout = AbortSignal.timeout(this.timeoutMs);
      let res: Response;
      try {
        res = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
          body: JSON.stringify({ query, texts, truncate: true }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (err) {
        if (signal?.aborted) throw new QuarryError('timeout', 'the rerank request was cancelled (deadline passed)', { cause: err });
        lastError = timeout.aborted
          ? new QuarryError('timeout', `reranker ${this.url} did not answer within ${this.timeoutMs} ms`, { cause: err })
          : new QuarryError('unavailable', `reranker ${this.url} is unreachable: ${(err as Error).message}`, { cause: err });
        await sleep(backoffDelayMs(attempt, this.retryBaseDelayMs, 5_000), signal).catch(() => undefined);
        continue;
      }
      const text = await res.text().catch(() => '');
      if (res.status === 429 || res.status >= 500) {
        lastError = new QuarryError('unavailable', `reranker ${this.url} answered ${res.status}: ${text.slice(0, 300)}`, { retryAfterSeconds: 1 });
        const wait = parseRetryAfterMs(res.headers.get('retry-after')) ?? backoffDelayMs(attempt, this.retryBaseDelayMs, 5_000);
        await sleep(Math.min(wait, 5_000), signal).catch(() => undefined);
        continue;
      }
      if (!res.ok) throw new QuarryError('bad_request', `reranker ${this.url} refused the request (${res.status}): ${text.slice(0, 300)}`);
      return parseScores(text, texts.length, this.url);
    }
    throw lastError ?? new QuarryError('unavailable', `reranker ${this.url} failed`);
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
