/**
 * SPLADE sparse vectors over a text-embeddings-inference compatible `POST {base}/embed_sparse`
 * (`{inputs, truncate: true}` → one `[{index, value}]` list per input), as the reference calls
 * its query and document encoders. Batched; retries and timeouts as every model client
 * (post-json.ts); every reply is checked (one list per input, integer indexes, finite values).
 */
import { QuarryError } from '../domain/errors.js';
import type { SparseVector } from '../domain/sparse-vector.js';
import { endpointUrl, postJson } from './post-json.js';

export type { SparseVector };

/** Options of a {@link SpladeClient}. */
export interface SpladeConfig {
  /** Server root of the document encoder (`/embed_sparse` is appended). */
  readonly docUrl: string;
  /** Server root of the query encoder. @defaultValue docUrl */
  readonly queryUrl?: string;
  /** Bearer token. @defaultValue none */
  readonly apiKey?: string;
  /** Inputs per request. @defaultValue 32 */
  readonly batchSize?: number;
  /** Milliseconds one request may take. @defaultValue 30000 */
  readonly timeoutMs?: number;
  /** Retries of one request. @defaultValue 3 */
  readonly maxRetries?: number;
  /** First backoff delay in ms. @defaultValue 200 */
  readonly retryBaseDelayMs?: number;
}

/** Checks an `/embed_sparse` reply and returns one sorted sparse vector per input. */
export function parseSparse(body: string, count: number, source: string): SparseVector[] {
  const bad = (why: string) => new QuarryError('unavailable', `sparse encoder ${source} replied nonsense: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw bad('not JSON');
  }
  if (!Array.isArray(parsed)) throw bad('expected an array with one [{index, value}] list per input');
  if (parsed.length !== count) throw bad(`${parsed.length} vectors for ${count} inputs`);
  return parsed.map((list: unknown, i) => {
    if (!Array.isArray(list)) throw bad(`vector ${i} is not a list`);
    const byIndex = new Map<number, number>();
    for (const item of list as { index?: unknown; value?: unknown }[]) {
      const { index, value } = item ?? {};
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 0xffffffff) throw bad(`index ${String(index)} in vector ${i}`);
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad(`value ${String(value)} in vector ${i}`);
      byIndex.set(index, (byIndex.get(index) ?? 0) + value);
    }
    const sorted = [...byIndex].filter(([, v]) => v !== 0).sort((a, b) => a[0] - b[0]);
    return { indices: Uint32Array.from(sorted.map((e) => e[0])), values: Float32Array.from(sorted.map((e) => e[1])) };
  });
}

/** Encodes documents and queries into SPLADE vectors. */
export class SpladeClient {
  private readonly docUrl: string;
  private readonly queryUrl: string;

  constructor(private readonly config: SpladeConfig) {
    this.docUrl = endpointUrl(config.docUrl, '/embed_sparse', 'SPLADE_BASE_URL');
    this.queryUrl = endpointUrl(config.queryUrl ?? config.docUrl, '/embed_sparse', 'SPLADE_QUERY_BASE_URL');
  }

  /** One sparse vector per text, by the document or the query encoder. */
  async encode(texts: readonly string[], kind: 'doc' | 'query', signal?: AbortSignal): Promise<SparseVector[]> {
    const url = kind === 'doc' ? this.docUrl : this.queryUrl;
    const size = this.config.batchSize ?? 32;
    const opts = {
      apiKey: this.config.apiKey,
      timeoutMs: this.config.timeoutMs ?? 30_000,
      maxRetries: this.config.maxRetries ?? 3,
      retryBaseDelayMs: this.config.retryBaseDelayMs ?? 200,
      what: 'sparse encoder',
    };
    const out: SparseVector[] = [];
    for (let start = 0; start < texts.length; start += size) {
      const batch = texts.slice(start, start + size);
      out.push(...parseSparse(await postJson(url, { inputs: batch, truncate: true }, opts, signal), batch.length, url));
    }
    return out;
  }
}

/**
 * Query-time fulltext_boost on a SPLADE query (the reference's rule): the values of query indexes
 * that also occur in the phrase's vector are multiplied by the factor.
 */
export function boostSparse(query: SparseVector, phrase: SparseVector, factor: number): SparseVector {
  const inPhrase = new Set(phrase.indices);
  return { indices: query.indices, values: query.values.map((v, i) => (inPhrase.has(query.indices[i]!) ? v * factor : v)) };
}
