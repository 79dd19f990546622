/**
 * The errors every LLM provider throws: a provider failure is the caller's 400 with the
 * reference's message (the dataset's LLM configuration is the caller's), and an aborted signal
 * is the deadline's or the client's own error.
 */
import { QuarryError } from '../domain/errors.js';

/** Prefix of every provider failure, as the reference words it. */
export const PROVIDER_ERROR_PREFIX = 'Bad response from LLM server provider';

/** A provider failure (bad status, malformed or cut stream, unreachable server) as a 400. */
export function providerError(detail: string, cause?: unknown): QuarryError {
  return new QuarryError('bad_request', `${PROVIDER_ERROR_PREFIX}: ${detail}`, { cause });
}

/**
 * The error of an aborted `signal`: its reason when that is already a {@link QuarryError} (a
 * deadline or a cancel set by the caller), `timeout` for an `AbortSignal.timeout`, else
 * `cancelled` (the client went away).
 */
export function abortError(signal: AbortSignal): QuarryError {
  const reason: unknown = signal.reason;
  if (reason instanceof QuarryError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new QuarryError('timeout', 'the answer was not finished before its deadline', { cause: reason });
  }
  return new QuarryError('cancelled', 'the answer was cancelled', { cause: reason });
}

/** Throws {@link abortError} when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/**
 * `promise`, or a rejection with {@link abortError} as soon as `signal` aborts, whichever comes
 * first: the caller is released at once even when the work behind the promise (a retry's
 * backoff sleep) notices the abort only later.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
