/** A/B experiments: create, list, get, update, delete, and sticky assignment. SKELETON: routes to be registered. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

/** Registers A/B experiments: create, list, get, update, delete, and sticky assignment. */
export function experimentRoutes(_router: QuarryRouter, _services: Services): void {}
