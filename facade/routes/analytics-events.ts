/** User events: send, list, get one, and the deprecated CTR click. SKELETON: routes to be registered. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

/** Registers User events: send, list, get one, and the deprecated CTR click. */
export function analyticsEventRoutes(_router: QuarryRouter, _services: Services): void {}
