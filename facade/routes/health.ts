/** GET /api/health: 200 when the store, Redis and the core answer; 503 naming what does not. */
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

const within = <T>(ms: number, p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

/** Registers the health route. */
export function healthRoutes(router: QuarryRouter, services: Services): void {
  router.get('/api/health', async (ctx) => {
    const checks = {
      store: services.store.ping(),
      redis: services.jobs.ping(),
      core: services.core.health(1000).then(() => undefined),
    };
    const results = await Promise.allSettled(Object.values(checks).map((p) => within(2000, p)));
    const names = Object.keys(checks);
    const status: Record<string, string> = {};
    const failing: string[] = [];
    results.forEach((r, i) => {
      const name = names[i]!;
      if (r.status === 'fulfilled') {
        status[name] = 'ok';
      } else {
        status[name] = (r.reason as Error).message;
        failing.push(`${name} (${(r.reason as Error).message})`);
      }
    });
    ctx.status = failing.length === 0 ? 200 : 503;
    ctx.body =
      failing.length === 0
        ? { status: 'ok', checks: status }
        : { message: `Service Unavailable: ${failing.join('; ')}`, checks: status };
  });
}
