/** Waiting in tests for something that happens in another process: one poll loop for all. */

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** What is awaited, for the timeout's message. */
  readonly what: string;
  /** Longest wait in ms. @defaultValue `30000` */
  readonly timeoutMs?: number;
  /** Pause between probes in ms. @defaultValue `100` */
  readonly intervalMs?: number;
  /** More text for the timeout's message (a process's output, a log). */
  readonly context?: () => string;
}

/**
 * Polls `probe` until it returns something other than undefined or false, and returns that. A
 * probe that throws counts as "not yet" (its last error goes into the message). After
 * `timeoutMs` it throws, naming what was awaited and the last value seen.
 */
export async function eventually<T>(options: EventuallyOptions, probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const { what, timeoutMs = 30_000, intervalMs = 100, context } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const error = lastError === undefined ? '' : `; last error: ${(lastError as Error).message}`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last value: ${JSON.stringify(last)}${error})${context ? `\n${context()}` : ''}`);
}
