/**
 * Client of any OpenAI-compatible `POST {baseUrl}/embeddings` endpoint (OpenAI,
 * text-embeddings-inference, Ollama, vLLM). Requests `{model, input, encoding_format: 'float'}`,
 * in batches, each with its own timeout; 429, 5xx, network errors and timeouts are retried with
 * backoff, other 4xx are the caller's problem and fail at once. Every reply is checked: a
 * provider that answers nonsense must not put garbage vectors into an index.
 */
import { QuarryError } from '../domain/errors.js';
import { backoffDelayMs, parseRetryAfterMs, sleep } from './backoff.js';
import { abortedError, dimensionMismatch, embedderClosed } from './embed-errors.js';
import type { Embedder, EmbedKind, ResolvedEmbedderConfig } from './embedder.js';
import { trimTrailingSlashes } from '../domain/trim-slashes.js';

/** Longest provider message quoted in an error. */
const MAX_QUOTED_CHARS = 300;

/** One attempt's outcome: vectors, or a failure worth retrying (after `retryAfterMs` if given). */
type Attempt = { vectors: Float32Array[] } | { retry: QuarryError; retryAfterMs: number | undefined };

/** An OpenAI-compatible embeddings endpoint; configured through createEmbedder(). */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimension: number;
  /** The full endpoint URL, `{baseUrl}/embeddings`. */
  readonly url: string;
  /** Names the provider in errors, without any credentials of the URL. */
  private readonly source: string;
  private readonly inflight = new Set<AbortController>();
  private closed = false;

  constructor(private readonly config: ResolvedEmbedderConfig) {
    let base: URL;
    try {
      base = new URL(config.baseUrl);
    } catch {
      throw new QuarryError('bad_request', `EMBEDDING_BASE_URL ${JSON.stringify(config.baseUrl)} is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new QuarryError('bad_request', `EMBEDDING_BASE_URL must be http or https, got ${base.protocol}`);
    }
    if (config.model === '') throw new QuarryError('bad_request', 'EMBEDDING_MODEL_NAME must not be empty with an EMBEDDING_BASE_URL');
    base.pathname = `${trimTrailingSlashes(base.pathname)}/embeddings`;
    this.url = base.toString();
    base.username = '';
    base.password = '';
    this.source = `embedding provider ${base.toString()}`;
    this.model = config.model;
    this.dimension = config.dimension;
  }

  async embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) throw embedderClosed(this.model);
    if (signal?.aborted) throw abortedError(signal, `${this.source} request`);
    const prefix = kind === 'query' ? this.config.queryPrefix : '';
    const inputs = prefix === '' ? texts : texts.map((t) => prefix + t);
    const out: Float32Array[] = [];
    // Batches go one after another: a provider's rate limit is shared by all of them anyway.
    for (let start = 0; start < inputs.length; start += this.config.batchSize) {
      out.push(...(await this.embedBatch(inputs.slice(start, start + this.config.batchSize), signal)));
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.inflight) c.abort();
    this.inflight.clear();
  }

  private async embedBatch(batch: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const { maxRetries, retryBaseDelayMs, maxRetryDelayMs } = this.config;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(batch, signal);
      if ('vectors' in outcome) return outcome.vectors;
      const { retry, retryAfterMs } = outcome;
      const retryAfterSeconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
      if (attempt >= maxRetries || (retryAfterMs !== undefined && retryAfterMs > maxRetryDelayMs)) {
        const tries = attempt + 1;
        throw new QuarryError(retry.code, `${retry.message} (${tries} attempt${tries === 1 ? '' : 's'})`, {
          cause: retry.cause,
          ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        });
      }
      try {
        await sleep(retryAfterMs ?? backoffDelayMs(attempt, retryBaseDelayMs, maxRetryDelayMs), signal);
      } catch {
        throw abortedError(signal!, `${this.source} request`);
      }
      if (this.closed) throw embedderClosed(this.model);
    }
  }

  /** One HTTP request. Throws what must not be retried; returns what may be. */
  private async attempt(batch: readonly string[], signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const closer = new AbortController();
    this.inflight.add(closer);
    const signals = signal ? [signal, timeout, closer.signal] : [timeout, closer.signal];
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.config.apiKey !== '') headers.authorization = `Bearer ${this.config.apiKey}`;
    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.model, input: batch, encoding_format: 'float' }),
        signal: AbortSignal.any(signals),
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      // The body is read under the same signals: a reply that stalls midway times out too.
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw abortedError(signal, `${this.source} request`);
      if (this.closed) throw embedderClosed(this.model);
      if (timeout.aborted) {
        return { retry: new QuarryError('timeout', `${this.source}: no reply within ${this.config.timeoutMs} ms`, { cause: err }), retryAfterMs: undefined };
      }
      return { retry: new QuarryError('unavailable', `${this.source}: ${networkErrorText(err)}`, { cause: err }), retryAfterMs: undefined };
    } finally {
      this.inflight.delete(closer);
    }

    if (status < 200 || status > 299) {
      const message = `${this.source} answered HTTP ${status}: ${providerMessage(text)}`;
      if (status === 429 || status >= 500) {
        return { retry: new QuarryError('unavailable', message), retryAfterMs: parseRetryAfterMs(retryAfter) };
      }
      throw new QuarryError('bad_request', message);
    }
    return { vectors: this.parseReply(text, batch.length) };
  }

  /** Checks a 2xx body and returns its vectors in input order. */
  private parseReply(text: string, expected: number): Float32Array[] {
    const malformed = (why: string): QuarryError => new QuarryError('unavailable', `${this.source} sent a malformed reply: ${why}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed(`not JSON: ${quote(text)}`);
    }
    const data = isRecord(body) ? body.data : undefined;
    if (!Array.isArray(data)) throw malformed('no "data" array');
    if (data.length !== expected) throw malformed(`${data.length} embeddings for ${expected} inputs`);
    const out = new Array<Float32Array | undefined>(expected);
    data.forEach((item: unknown, position) => {
      if (!isRecord(item)) throw malformed(`data[${position}] is not an object`);
      // Some servers omit `index`; then the position is the index.
      const index = item.index ?? position;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
        throw malformed(`data[${position}].index is ${JSON.stringify(index)}, expected an integer in [0, ${expected})`);
      }
      if (out[index] !== undefined) throw malformed(`index ${index} appears twice`);
      const embedding = item.embedding;
      if (typeof embedding === 'string') throw malformed('embedding is a base64 string; only encoding_format "float" is supported');
      if (!Array.isArray(embedding)) throw malformed(`data[${position}].embedding is not an array`);
      if (embedding.length !== this.dimension) throw dimensionMismatch(embedding.length, this.dimension, this.source);
      const vector = new Float32Array(embedding.length);
      for (let d = 0; d < embedding.length; d++) {
        const x: unknown = embedding[d];
        if (typeof x !== 'number' || !Number.isFinite(x)) throw malformed(`data[${position}].embedding[${d}] is ${JSON.stringify(x)}, not a finite number`);
        vector[d] = x;
      }
      out[index] = vector;
    });
    // data.length === expected and no index repeats, so every slot is filled.
    return out as Float32Array[];
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function quote(text: string): string {
  const t = text.trim();
  if (t === '') return '(empty body)';
  return t.length > MAX_QUOTED_CHARS ? `${t.slice(0, MAX_QUOTED_CHARS)}...` : t;
}

/** The provider's own words: OpenAI `{error: {message}}`, TEI `{error}`, `{message}` or `{detail}`, else the body. */
function providerMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isRecord(body)) {
      const e = body.error;
      if (isRecord(e) && typeof e.message === 'string') return quote(e.message);
      if (typeof e === 'string') return quote(e);
      if (typeof body.message === 'string') return quote(body.message);
      if (typeof body.detail === 'string') return quote(body.detail);
    }
  } catch {
    // Not JSON: quote the body as it is.
  }
  return quote(text);
}

/** undici reports `fetch failed` with the useful part (ECONNREFUSED, ...) in `cause`. */
function networkErrorText(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const detail = e.cause?.code ?? e.cause?.message;
  return detail ? `${e.message ?? 'request failed'} (${detail})` : (e.message ?? String(err));
}
