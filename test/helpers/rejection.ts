/** The QuarryError a promise rejects with, for tests of code that must fail with one. */
import { expect } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';

/** The error `p` rejects with; fails the test when it resolves or rejects with something else. */
export async function failure(p: Promise<unknown>): Promise<QuarryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(QuarryError);
  return err as QuarryError;
}
