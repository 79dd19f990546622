/** sqlite experiments (`experiments`, `experiment_assignments`). SKELETON: to be implemented. */
import type { ExperimentRepository } from '../repository.js';

/** Builds the experiment repository. */
export function sqliteExperiments(_db: unknown): ExperimentRepository {
  const todo = (): never => {
    throw new Error('experiments: not implemented');
  };
  return { create: todo, get: todo, list: todo, update: todo, delete: todo, assign: todo };
}
