/** RAG and recommendation analytics reports. SKELETON: routes to be registered. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

/** Registers RAG and recommendation analytics reports. */
export function ragAnalyticsRoutes(_router: QuarryRouter, _services: Services): void {}
