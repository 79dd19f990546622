/**
 * Errors shared by the embedders (re-exported by embedder.ts). They live apart from the factory
 * so that the embedder implementations can import them without an import cycle.
 */
import { QuarryError } from '../domain/errors.js';

/** Error for a vector whose length is not the configured EMBEDDING_SIZE (a configuration error). */
export function dimensionMismatch(actual: number, expected: number, source: string): QuarryError {
  return new QuarryError('bad_request', `${source}: embedding of length ${actual}, but EMBEDDING_SIZE is ${expected}`);
}

/** Error for a call on an embedder after `close()`. */
export function embedderClosed(model: string): QuarryError {
  return new QuarryError('unavailable', `embedder ${model} is closed`);
}

/**
 * The error to throw when the caller's signal aborted: its reason when that is already a
 * {@link QuarryError} (a deadline set upstream), else a `timeout`.
 */
export function abortedError(signal: AbortSignal, what: string): QuarryError {
  const reason: unknown = signal.reason;
  if (reason instanceof QuarryError) return reason;
  return new QuarryError('timeout', `${what} was aborted before it finished`, { cause: reason });
}
