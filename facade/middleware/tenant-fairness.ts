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
  /** Event writes ({@link EVENT_ROUTES}) one organization runs at once; beyond it, 429. */
  readonly events: number;
  /** Answers of chosen chunks ({@link ANSWER_ROUTES}) one organization starts or streams at once; beyond it, 429. */
  readonly answers: number;
}

/**
 * Writes of user events and ratings: small bodies (the default JSON limit), a few microseconds of
 * CPU each, and a store write shared with every other waiting event (facade/analytics/
 * event-writer.ts commits them together). Held to one at a time like chunk writes, a client
 * sending events in parallel got one commit per event (~280 events/s on 2 cores); they run side
 * by side instead, bounded per organization.
 */
export const EVENT_ROUTES: ReadonlySet<string> = new Set([
  'PUT /api/analytics/events',
  'PUT /api/analytics/ctr',
  'PUT /api/analytics/search',
  'PUT /api/analytics/rag',
]);

/**
 * Answers of chosen chunks: a start of about a millisecond here (the body, the chunks named,
 * the prompt, one enqueue), then only waiting for the job worker's tokens; the generation itself
 * competes in the job queue (QUARRY_RAG_CONCURRENCY). Taking write turns one at a time, 100
 * answers of one organization started 2.5 ms apart, so the last one's first byte came 250 ms
 * late (bench/rag-streams.ts); they run side by side instead, bounded per organization. Messages
 * search first, so they keep their turns (and give them back once enqueued).
 */
export const ANSWER_ROUTES: ReadonlySet<string> = new Set(['POST /api/chunk/generate']);

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
  // Analytics reports only read; counted as writes, one long report held the tenant's chunk writes back.
  '/api/analytics/search',
  '/api/analytics/rag',
  '/api/analytics/recommendations',
  '/api/analytics/events/ctr',
  '/api/analytics/events/all',
  '/api/analytics/top',
]);

/** Whether a matched route (`METHOD /api/pattern`) only reads. */
export function isReadRoute(route: string): boolean {
  const space = route.indexOf(' ');
  const method = route.slice(0, space);
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  return method === 'POST' && READ_POSTS.has(route.slice(space + 1));
}

/** Usage (ms of requests in flight) halves every this many ms. */
export const USAGE_HALF_LIFE_MS = 1000;
/** Under contention a tenant may be this many ms of usage above the least-using active one and still start. */
export const USAGE_SLACK_MS = 5;
/** Shortest a request may be held back for a tenant that used less, in ms (see {@link Tenant.patienceMs}). */
export const MIN_PATIENCE_MS = 2;
/**
 * Body bytes one ms of usage stands for (reading, checking and parsing a 1 MB body here takes
 * 4-5 ms of the event loop). Time in flight alone does not tell a tenant whose
 * requests wait their turn from one whose requests are the work: a light tenant that always had a
 * search in flight showed as much usage as one sending 1 MB bodies back to back, and was held
 * back behind it (its p50 rose from 1 to 9 ms).
 */
export const BODY_BYTES_PER_MS = 200_000;
/**
 * A tenant whose last request ended this recently (ms) still counts as active for the others'
 * share. A client that searches one request at a time has one in flight here for a fraction of
 * its latency (the rest is spent in the socket and the event loop's queue, behind the other
 * tenant's work): counted only while in flight, it looked absent, and a tenant sending three 1 MB
 * bodies at once ran all three (the light tenant's p50 rose from 1 to 10 ms).
 */
export const ACTIVE_GRACE_MS = 100;
/** Weight of the newest request in a tenant's average request duration. */
const DURATION_WEIGHT = 0.2;

interface Waiter {
  readonly read: boolean;
  readonly admit: () => void;
  /** When it began to wait (performance.now()). */
  readonly since: number;
}

/** One organization's (or public dataset's) requests in this process. */
class Tenant {
  running = { read: 0, write: 0 };
  readonly waiting: Waiter[] = [];
  /** Queued per kind, for the 429 bound. */
  queued = { read: 0, write: 0 };
  private usage = 0;
  private stamp = performance.now();
  /** When its last request ended (performance.now()). */
  lastEnd = Number.NEGATIVE_INFINITY;
  /** Average duration of this tenant's requests, in ms (decaying). */
  private averageMs = 0;

  /** Requests admitted or waiting. */
  get active(): number {
    return this.running.read + this.running.write + this.waiting.length;
  }

  usageAt(now: number): number {
    return this.usage * Math.pow(0.5, (now - this.stamp) / USAGE_HALF_LIFE_MS);
  }

  charge(ms: number, now: number): void {
    this.usage = this.usageAt(now) + ms;
    this.stamp = now;
    this.averageMs += DURATION_WEIGHT * (ms - this.averageMs);
  }

  /**
   * Longest one of its requests is held back for a tenant that used less: about as long as its
   * own requests take. Usage is wall time in flight, so a light tenant that always has a search
   * in flight can show more usage than a heavy one that just began; ordering by usage alone then
   * held the light tenant's 5 ms searches back for the ~400 ms the heavy one needed to catch up.
   * Bounded this way, a light request waits a few ms and a heavy one up to its own length.
   */
  patienceMs(): number {
    return Math.max(MIN_PATIENCE_MS, this.averageMs);
  }
}

/** Requests of one class that run side by side, at most `limit` per organization; beyond it, 429. */
class SideBySide {
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly what: string,
  ) {}

  async run(name: string, next: () => Promise<unknown>): Promise<void> {
    const n = this.inFlight.get(name) ?? 0;
    if (n >= this.limit) {
      throw new QuarryError('too_many_requests', `Too many ${this.what} of this organization at once: ${this.limit} run; retry shortly`, { retryAfterSeconds: 1 });
    }
    this.inFlight.set(name, n + 1);
    try {
      await next();
    } finally {
      const left = this.inFlight.get(name)! - 1;
      if (left === 0) this.inFlight.delete(name);
      else this.inFlight.set(name, left);
    }
  }
}

/**
 * Middleware that runs at most `limits.reads` reads and `limits.writes` writes per organization at
 * once while it is the only one with requests. While several are (or another had one end within
 * {@link ACTIVE_GRACE_MS}), an event loop serves their
 * ready requests in turn and a tenant with many in flight would take most turns (measured on 2
 * cores: 1 MB autocomplete queries sent three at a time raised another tenant's search p50 from 2
 * to 26 ms), so each runs one read and one write at a time, and the one that has used the least
 * (time its requests were in flight, decayed) starts first: a light tenant's request then waits
 * for at most the heavy one's request already running, not for a stream of them. A request is
 * held back for a tenant that used less at most about as long as its own tenant's requests take
 * ({@link Tenant.patienceMs}): wall time in flight is what is counted, and it does not tell a
 * light tenant that always has a search in flight from a heavy one.
 */
export function tenantFairness(limits: TenantFairnessLimits): Middleware<RequestState> {
  const tenants = new Map<string, Tenant>();
  let pumpTimer: NodeJS.Timeout | null = null;

  /**
   * The two least usages among tenants with requests, and whose the least is; of the tenants
   * without requests whose last one ended within {@link ACTIVE_GRACE_MS}: how many, one of them,
   * and when the first of their grace periods ends (the caller leaves itself out).
   */
  const lowest = (
    now: number,
  ): { first: number; firstOf: Tenant | null; second: number; recent: number; recentOne: Tenant | null; graceEndsAt: number } => {
    let first = Number.POSITIVE_INFINITY;
    let second = Number.POSITIVE_INFINITY;
    let firstOf: Tenant | null = null;
    let recent = 0;
    let recentOne: Tenant | null = null;
    let graceEndsAt = Number.POSITIVE_INFINITY;
    for (const o of tenants.values()) {
      if (o.active === 0) {
        if (now - o.lastEnd < ACTIVE_GRACE_MS) {
          recent++;
          recentOne = o;
          graceEndsAt = Math.min(graceEndsAt, o.lastEnd + ACTIVE_GRACE_MS);
        }
        continue;
      }
      const u = o.usageAt(now);
      if (u < first) {
        second = first;
        first = u;
        firstOf = o;
      } else if (u < second) second = u;
    }
    return { first, firstOf, second, recent, recentOne, graceEndsAt };
  };

  /**
   * Whether `t` may start a request of this kind now (`low`: {@link lowest} at `now`; `since`:
   * when the request began to wait).
   */
  const mayStart = (t: Tenant, read: boolean, now: number, low = lowest(now), since = now): boolean => {
    // The least usage among the other tenants with requests (none: not contended).
    const others = low.firstOf === t ? low.second : low.first;
    const running = read ? t.running.read : t.running.write;
    if (others === Number.POSITIVE_INFINITY) {
      // Nobody else has a request now; one that just had one keeps its share (one at a time here).
      const contended = low.recent > 1 || (low.recent === 1 && low.recentOne !== t);
      return running < (contended ? 1 : read ? limits.reads : limits.writes);
    }
    return running < 1 && (t.usageAt(now) <= others + USAGE_SLACK_MS || now - since >= t.patienceMs());
  };

  /** Starts every waiting request that may start, first come first served within a tenant. */
  const pump = (): void => {
    const now = performance.now();
    let waiting = false;
    // When the first held-back request runs out of patience (it then starts without a request ending).
    let wakeAt = now + 20;
    for (const t of tenants.values()) {
      for (let i = 0; i < t.waiting.length; ) {
        const w = t.waiting[i]!;
        // Recomputed per start: each start can end the contention or change who is least.
        if (!mayStart(t, w.read, now, lowest(now), w.since)) {
          i++;
          waiting = true;
          // Held back by usage (its tenant runs none of its kind): it may start once patience runs
          // out. One waiting behind its own tenant's running request starts when that one ends.
          if ((w.read ? t.running.read : t.running.write) === 0) wakeAt = Math.min(wakeAt, w.since + t.patienceMs());
          continue;
        }
        t.waiting.splice(i, 1);
        if (w.read) {
          t.queued.read--;
          t.running.read++;
        } else {
          t.queued.write--;
          t.running.write++;
        }
        w.admit();
      }
    }
    // Usage decays, patience and grace periods run out with time alone: look again then even if no request ends.
    if (waiting) {
      wakeAt = Math.min(wakeAt, lowest(now).graceEndsAt);
      if (pumpTimer !== null) clearTimeout(pumpTimer);
      pumpTimer = setTimeout(() => {
        pumpTimer = null;
        pump();
      }, Math.max(1, wakeAt - now));
      pumpTimer.unref();
    }
  };

  const events = new SideBySide(limits.events, 'event writes');
  const answers = new SideBySide(limits.answers, 'answers');

  return async (ctx, next) => {
    const caller = ctx.state.caller;
    const route = ctx.state.route;
    if (!caller || caller.kind === 'admin' || route === undefined) return next();
    const name = caller.kind === 'key' ? caller.key.organizationId : `public:${caller.datasetId}`;
    const sideBySide = EVENT_ROUTES.has(route) ? events : ANSWER_ROUTES.has(route) ? answers : null;
    if (sideBySide) return sideBySide.run(name, next);
    const read = isReadRoute(route);
    let t = tenants.get(name);
    if (!t) tenants.set(name, (t = new Tenant()));
    const tenant = t;
    const sameKindWaiting = tenant.waiting.some((w) => w.read === read);
    if (!sameKindWaiting && mayStart(tenant, read, performance.now())) {
      if (read) tenant.running.read++;
      else tenant.running.write++;
    } else {
      if ((read ? tenant.queued.read : tenant.queued.write) >= limits.queue) {
        if (tenant.active === 0 && tenant.usageAt(performance.now()) < 1e-3) tenants.delete(name);
        throw new QuarryError(
          'too_many_requests',
          `Too many ${read ? 'reads' : 'writes'} of this organization at once: ${read ? limits.reads : limits.writes} run and ${limits.queue} wait; retry shortly`,
          { retryAfterSeconds: 1 },
        );
      }
      if (read) tenant.queued.read++;
      else tenant.queued.write++;
      await new Promise<void>((admit) => {
        tenant.waiting.push({ read, admit, since: performance.now() });
        // Its arrival may be what makes others wait, or may find them all idle.
        pump();
      });
    }
    const started = performance.now();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const now = performance.now();
      tenant.lastEnd = now;
      tenant.charge(now - started + (ctx.state.bodyLength ?? 0) / BODY_BYTES_PER_MS, now);
      if (read) tenant.running.read--;
      else tenant.running.write--;
      pump();
      // Organizations come and go: keep no state for idle ones whose usage has decayed.
      for (const [key, o] of tenants) if (o.active === 0 && o.usageAt(now) < 0.01) tenants.delete(key);
    };
    // A request that from some point on only waits for another service (a RAG answer waiting for
    // the job worker's tokens) gives its turn back then: it uses none of this process's CPU.
    ctx.state.yieldTurn = release;
    try {
      await next();
    } finally {
      release();
    }
  };
}
