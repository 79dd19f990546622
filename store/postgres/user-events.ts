/** postgres user events (`user_events`). SKELETON: to be implemented. */
import type { UserEventRepository } from '../repository.js';

/** Builds the user event repository. */
export function pgUserEvents(_db: unknown): UserEventRepository {
  const todo = (): never => {
    throw new Error('user events: not implemented');
  };
  return { insertMany: todo, get: todo, list: todo };
}
