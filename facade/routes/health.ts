/**
 * GET /api/health: 200 when the store, Redis and the core answer and every loaded dataset's
 * shards are in place; 503 naming what does not (a core whose shard thread died answers 503
 * until the datasets it held are reloaded, rather than serving empty results as healthy).
 */
import type { HealthReply } from '../../core/client/core-client.js';
import type { Services } from '../context.js';
import type { QuarryRouter } from './router.js';

const within = <T>(ms: number, p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

/** The shard part of the body: datasets by state and shard thread restarts. */
function shardsOf(h: HealthReply): Record<string, number> {
  return {
    datasets_loaded: h.datasets_loaded,
    datasets_loading: h.datasets_loading,
    datasets_failed: h.datasets_failed,
    datasets_lost: h.datasets_lost,
    thread_restarts: h.shard_thread_restarts,
  };
}

/** Registers the health route. */
export function healthRoutes(router: QuarryRouter, services: Services): void {
  router.get('/api/health', async (ctx) => {
    let shards: Record<string, number> | undefined;
    const checks = {
      store: services.store.ping(),
      redis: services.jobs.ping(),
      core: services.core.health(1000).then((h) => {
        shards = shardsOf(h);
        if (h.status !== 'ok') {
          throw new Error(`${h.status}: ${h.datasets_lost} dataset(s) lost shards with a shard thread restart and are not reloaded yet`);
        }
      }),
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
    if (failing.length > 0) ctx.set('Retry-After', '1');
    const extra = shards ? { shards } : {};
    ctx.body =
      failing.length === 0
        ? { status: 'ok', checks: status, ...extra }
        : { message: `Service Unavailable: ${failing.join('; ')}`, checks: status, ...extra };
  });
}
