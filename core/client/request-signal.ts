/**
 * The signal of the request a core call is made for. The HTTP API aborts it when its client
 * goes away, and every core call made while serving that request is cancelled with it, so the
 * core stops work nobody waits for. It travels with the async context rather than through every
 * route's arguments: each call site would otherwise have to thread it by hand, and one forgotten
 * site would keep the core busy for a caller that is gone.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` so that core calls made inside it are cancelled when `signal` aborts. */
export function withRequestSignal<T>(signal: AbortSignal, fn: () => T): T {
  return current.run(signal, fn);
}

/** The signal of the request being served, if any. */
export function requestSignal(): AbortSignal | undefined {
  return current.getStore();
}
