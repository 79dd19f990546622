/**
 * Fair shares of the HTTP API between organizations. Without it one tenant that keeps a few
 * heavy writes or searches in flight takes every core of a small machine, and another tenant's
 * search waits behind its work in each event loop and shard thread (measured on 2 cores: three
 * concurrent 100,000-word chunk writes raised another tenant's search p50 from 7 to 122 ms; one
 * at a time, 27 ms). So each organization may run at most a few reads and a few writes at once;
 * the rest wait in order (before their body is read, so waiting costs neither CPU nor memory
 * beyond the socket), and past a bounded queue the answer is 429 with Retry-After.
 *
 * The operator's ADMIN_API_KEY is not limited; keyless public reads share their dataset's slot.
 */
import type { Middleware } from 'koa';
import { QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

/** Limits of {@link tenantFairness}. */
export interface TenantFairnessLimits {
  /** Reads (searches, gets) one organization runs at once. */
  readonly reads: number;
  /** Writes one organization runs at once. */
  readonly writes: number;
  /** Requests of one organization and kind that may wait; beyond it, 429. */
  readonly queue: number;
}

/** POST routes that only read (everything else but GET/HEAD/OPTIONS is a write). */
const READ_POSTS: ReadonlySet<string> = new Set([
  '/api/chunk/search',
  '/api/chunk/autocomplete',
  '/api/chunk/count',
  '/api/chunk/recommend',
  '/api/chunk/split',
  '/api/chunks',
  '/api/chunks/tracking',
  '/api/chunks/scroll',
  '/api/chunk_group/recommend',
  '/api/chunk_group/search',
  '/api/chunk_group/group_oriented_search',
  '/api/chunk_group/group_oriented_autocomplete',
  '/api/chunk_group/chunks',
  '/api/dataset/get_all_tags',
  '/api/organization/usage/:organization_id',
]);

/** Whether a matched route (`METHOD /api/pattern`) only reads. */
export function isReadRoute(route: string): boolean {
  const space = route.indexOf(' ');
  const method = route.slice(0, space);
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  return method === 'POST' && READ_POSTS.has(route.slice(space + 1));
}

/** A counting semaphore with a bounded FIFO of waiters. */
class Slots {
  running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves when a slot is held; false when the queue is full (nothing is held then). */
  async acquire(): Promise<boolean> {
    if (this.running < this.limit) {
      this.running++;
      return true;
    }
    if (this.waiting.length >= this.maxWaiting) return false;
    // The releaser hands its slot over directly, so `running` stays counted.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return true;
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }
}

/** Middleware that runs at most `limits.reads` reads and `limits.writes` writes per organization at once. */
export function tenantFairness(limits: TenantFairnessLimits): Middleware<RequestState> {
  const slots = new Map<string, Slots>();
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    const route = ctx.state.route;
    if (!caller || caller.kind === 'admin' || route === undefined) return next();
    const tenant = caller.kind === 'key' ? caller.key.organizationId : `public:${caller.datasetId}`;
    const read = isReadRoute(route);
    const key = `${read ? 'r' : 'w'}:${tenant}`;
    let s = slots.get(key);
    if (!s) slots.set(key, (s = new Slots(read ? limits.reads : limits.writes, limits.queue)));
    if (!(await s.acquire())) {
      throw new QuarryError(
        'too_many_requests',
        `Too many ${read ? 'reads' : 'writes'} of this organization at once: ${read ? limits.reads : limits.writes} run and ${limits.queue} wait; retry shortly`,
        { retryAfterSeconds: 1 },
      );
    }
    try {
      await next();
    } finally {
      s.release();
      // Organizations come and go: keep no state for idle ones.
      if (s.idle) slots.delete(key);
    }
  };
}
