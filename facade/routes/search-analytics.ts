/** Search analytics reports and ratings of searches and RAG answers. SKELETON: routes to be registered. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

/** Registers Search analytics reports and ratings of searches and RAG answers. */
export function searchAnalyticsRoutes(_router: QuarryRouter, _services: Services): void {}
