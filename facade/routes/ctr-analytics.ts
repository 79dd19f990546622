/** Click-through reports and the organization's top datasets. SKELETON: routes to be registered. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

/** Registers Click-through reports and the organization's top datasets. */
export function ctrAnalyticsRoutes(_router: QuarryRouter, _services: Services): void {}
