/**
 * One JSON POST to a model server with the retry policy every HTTP model client here shares:
 * each attempt has a timeout; 429, 5xx, network errors and timeouts are retried with backoff
 * (honouring Retry-After); other 4xx fail at once as a bad request; the caller's signal (the
 * query deadline) cancels everything.
 */
import { QuarryError } from '../domain/errors.js';
import { backoffDelayMs, parseRetryAfterMs, sleep } from './backoff.js';
import { trimTrailingSlashes } from '../domain/trim-slashes.js';

/** Retry policy and identity of one client. */
export interface PostJsonOptions {
  /** Sent as `Authorization: Bearer <apiKey>` when non-empty. */
  readonly apiKey?: string;
  /** Milliseconds one request may take. */
  readonly timeoutMs: number;
  /** Retries after 429/5xx/network errors/timeouts. */
  readonly maxRetries: number;
  /** First backoff delay in ms (full jitter, doubling, capped at 5 s). */
  readonly retryBaseDelayMs: number;
  /** What the server is, for messages (e.g. "reranker"). */
  readonly what: string;
}

/** Checks that `raw` is an http(s) URL and returns it with `path` appended to its path. */
export function endpointUrl(raw: string, path: string, setting: string): string {
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new QuarryError('bad_request', `${setting} ${JSON.stringify(raw)} is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new QuarryError('bad_request', `${setting} must be http or https, got ${base.protocol}`);
  base.pathname = `${trimTrailingSlashes(base.pathname)}${path}`;
  return base.toString();
}

/** POSTs `body` as JSON and returns the 2xx reply's text. */
export async function postJson(url: string, body: unknown, o: PostJsonOptions, signal?: AbortSignal): Promise<string> {
  let lastError: QuarryError | undefined;
  for (let attempt = 0; attempt <= o.maxRetries; attempt++) {
    if (signal?.aborted) throw new QuarryError('timeout', `the ${o.what} request was cancelled (deadline passed)`);
    const timeout = AbortSignal.timeout(o.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw new QuarryError('timeout', `the ${o.what} request was cancelled (deadline passed)`, { cause: err });
      lastError = timeout.aborted
        ? new QuarryError('timeout', `${o.what} ${url} did not answer within ${o.timeoutMs} ms`, { cause: err })
        : new QuarryError('unavailable', `${o.what} ${url} is unreachable: ${(err as Error).message}`, { cause: err });
      await sleep(backoffDelayMs(attempt, o.retryBaseDelayMs, 5_000), signal).catch(() => undefined);
      continue;
    }
    const text = await res.text().catch(() => '');
    if (res.status === 429 || res.status >= 500) {
      lastError = new QuarryError('unavailable', `${o.what} ${url} answered ${res.status}: ${text.slice(0, 300)}`, { retryAfterSeconds: 1 });
      const wait = parseRetryAfterMs(res.headers.get('retry-after')) ?? backoffDelayMs(attempt, o.retryBaseDelayMs, 5_000);
      await sleep(Math.min(wait, 5_000), signal).catch(() => undefined);
      continue;
    }
    if (!res.ok) throw new QuarryError('bad_request', `${o.what} ${url} refused the request (${res.status}): ${text.slice(0, 300)}`);
    return text;
  }
  throw lastError ?? new QuarryError('unavailable', `${o.what} ${url} failed`);
}
