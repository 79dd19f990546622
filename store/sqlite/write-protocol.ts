/** Messages between an HTTP process and its store writer thread, and how errors cross. */
import { QuarryError, type ErrorCode } from '../../core/domain/errors.js';
import type { Store } from '../repository.js';

/** A repository of the store (every member but `ping` and `close`). */
export type RepositoryName = Exclude<keyof Store, 'ping' | 'pinReads' | 'watchChanges' | 'indexReads' | 'close'>;

/** One write for the thread to run. */
export interface WriteCall {
  readonly id: number;
  readonly repository: RepositoryName;
  readonly method: string;
  readonly args: readonly unknown[];
}

/** An error as it crosses the thread boundary (structured clone keeps neither class nor code). */
export interface EncodedError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly retryAfterSeconds?: number;
  readonly stack?: string;
}

/** The thread's answer to a {@link WriteCall}. */
export type WriteReply = { readonly id: number; readonly value: unknown } | { readonly id: number; readonly error: EncodedError };

/** An error thrown by a write, as data. */
export function encodeError(err: unknown): EncodedError {
  if (err instanceof QuarryError) return { name: err.name, message: err.message, code: err.code, retryAfterSeconds: err.retryAfterSeconds, stack: err.stack };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, code: typeof code === 'string' ? code : undefined, stack: err.stack };
  }
  return { name: 'Error', message: String(err) };
}

/** The error the writer threw, rebuilt on this side: a QuarryError stays one, with its code. */
export function decodeError(e: EncodedError): Error {
  const err =
    e.name === 'QuarryError' && e.code !== undefined
      ? new QuarryError(e.code as ErrorCode, e.message, { retryAfterSeconds: e.retryAfterSeconds })
      : Object.assign(new Error(e.message), { name: e.name, ...(e.code !== undefined ? { code: e.code } : {}) });
  if (e.stack) err.stack = e.stack;
  return err;
}
