/**
 * Admission control: a bounded number of searches run at once; beyond that the core answers
 * RESOURCE_EXHAUSTED (HTTP 503 + Retry-After) at once instead of queueing without bound.
 */
import { QuarryError } from '../domain/errors.js';

/** Counting permits. */
export class Admission {
  private inFlight = 0;

  constructor(readonly limit: number) {}

  /** Runs `fn` holding a permit, or rejects with `overloaded` when none is free. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.limit) {
      throw new QuarryError('overloaded', `the search core is at its limit of ${this.limit} concurrent searches; retry shortly`, {
        retryAfterSeconds: 1,
      });
    }
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
    }
  }
}
