/** Per-organization shares of the HTTP API: waits in order, 429 past the queue, other organizations unaffected. */
import { describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { ACTIVE_GRACE_MS, BODY_BYTES_PER_MS, isReadRoute, tenantFairness } from '../../facade/middleware/tenant-fairness.js';

/** A request's context as the middleware sees it, and a `next` that finishes when told to. */
function request(org: string, route: string) {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  let started = false;
  const ctx = { state: { caller: { kind: 'key', key: { organizationId: org }, user: null }, route } } as never;
  const next = async () => {
    started = true;
    await finished;
  };
  return { ctx, next, finish, get started() {
    return started;
  } };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('tenantFairness', () => {
  it('runs one write per organization, queues the next in order, refuses past the queue, and leaves other organizations alone', async () => {
    const mw = tenantFairness({ reads: 2, writes: 1, queue: 1, events: 2, answers: 2 });
    const a1 = request('a', 'POST /api/chunk');
    const a2 = request('a', 'PUT /api/chunk');
    const a3 = request('a', 'DELETE /api/chunk/:chunk_id');
    const b1 = request('b', 'POST /api/chunk');
    const p1 = mw(a1.ctx, a1.next);
    const p2 = mw(a2.ctx, a2.next);
    const p3 = mw(a3.ctx, a3.next).then(() => null, (e: unknown) => e);
    const pb = mw(b1.ctx, b1.next);
    await tick();
    expect([a1.started, a2.started, b1.started]).toEqual([true, false, true]);
    const refused = await p3;
    expect(refused).toBeInstanceOf(QuarryError);
    expect((refused as QuarryError).httpStatus).toBe(429);
    expect((refused as QuarryError).retryAfterSeconds).toBe(1);
    expect((refused as QuarryError).message).toMatch(/writes of this organization/);
    a1.finish();
    await p1;
    await tick();
    expect(a2.started).toBe(true);
    a2.finish();
    b1.finish();
    await Promise.all([p2, pb]);
  });

  it('runs event writes side by side up to their own bound, apart from the one-at-a-time writes', async () => {
    const mw = tenantFairness({ reads: 2, writes: 1, queue: 1, events: 2, answers: 2 });
    const w = request('a', 'POST /api/chunk');
    const e1 = request('a', 'PUT /api/analytics/events');
    const e2 = request('a', 'PUT /api/analytics/search');
    const e3 = request('a', 'PUT /api/analytics/events');
    const other = request('b', 'PUT /api/analytics/events');
    const pw = mw(w.ctx, w.next);
    const p1 = mw(e1.ctx, e1.next);
    const p2 = mw(e2.ctx, e2.next);
    const p3 = mw(e3.ctx, e3.next).then(() => null, (e: unknown) => e);
    const po = mw(other.ctx, other.next);
    await tick();
    // The chunk write does not hold the events back, nor they it; the third event of `a` is refused, `b`'s runs.
    expect([w.started, e1.started, e2.started, other.started]).toEqual([true, true, true, true]);
    const refused = await p3;
    expect((refused as QuarryError).httpStatus).toBe(429);
    expect((refused as QuarryError).message).toMatch(/event writes of this organization/);
    e1.finish();
    await p1;
    // A slot is free again.
    const e4 = request('a', 'PUT /api/analytics/rag');
    const p4 = mw(e4.ctx, e4.next);
    await tick();
    expect(e4.started).toBe(true);
    for (const r of [w, e2, e4, other]) r.finish();
    await Promise.all([pw, p2, p4, po]);
  });

  it('runs answers of chosen chunks side by side up to their own bound, counted apart from event writes', async () => {
    const mw = tenantFairness({ reads: 2, writes: 1, queue: 1, events: 1, answers: 2 });
    const w = request('a', 'POST /api/chunk');
    const e = request('a', 'PUT /api/analytics/events');
    const g1 = request('a', 'POST /api/chunk/generate');
    const g2 = request('a', 'POST /api/chunk/generate');
    const g3 = request('a', 'POST /api/chunk/generate');
    const m = request('a', 'POST /api/message');
    const pw = mw(w.ctx, w.next);
    const pe = mw(e.ctx, e.next);
    const p1 = mw(g1.ctx, g1.next);
    const p2 = mw(g2.ctx, g2.next);
    const p3 = mw(g3.ctx, g3.next).then(() => null, (err: unknown) => err);
    const pm = mw(m.ctx, m.next);
    await tick();
    // Two answers run beside the write and the event; the third is refused; a message (it searches first) waits for the write turn.
    expect([w.started, e.started, g1.started, g2.started, m.started]).toEqual([true, true, true, true, false]);
    const refused = await p3;
    expect((refused as QuarryError).httpStatus).toBe(429);
    expect((refused as QuarryError).message).toMatch(/answers of this organization at once: 2 run/);
    g1.finish();
    await p1;
    const g4 = request('a', 'POST /api/chunk/generate');
    const p4 = mw(g4.ctx, g4.next);
    await tick();
    expect(g4.started).toBe(true);
    w.finish();
    await pw;
    await tick();
    expect(m.started).toBe(true);
    for (const r of [e, g2, g4, m]) r.finish();
    await Promise.all([pe, p2, p4, pm]);
  });

  it('starts the next request when the running one yields its turn (a topic message waiting on the job worker), and counts it once', async () => {
    const mw = tenantFairness({ reads: 1, writes: 1, queue: 4, events: 2, answers: 2 });
    const a1 = request('a', 'POST /api/message');
    const a2 = request('a', 'POST /api/message');
    const a3 = request('a', 'POST /api/message');
    const p1 = mw(a1.ctx, a1.next);
    const p2 = mw(a2.ctx, a2.next);
    const p3 = mw(a3.ctx, a3.next);
    await tick();
    expect([a1.started, a2.started, a3.started]).toEqual([true, false, false]);
    const yieldTurn = (a1.ctx as { state: { yieldTurn?: () => void } }).state.yieldTurn!;
    yieldTurn();
    yieldTurn();
    await tick();
    // Yielded twice, released once: the second waiter starts, the third still waits for it.
    expect([a2.started, a3.started]).toEqual([true, false]);
    a1.finish();
    await p1;
    await tick();
    expect(a3.started).toBe(false);
    a2.finish();
    await p2;
    await tick();
    expect(a3.started).toBe(true);
    a3.finish();
    await p3;
  });

  it('counts reads apart from writes: a search is not queued behind the same organization\'s write', async () => {
    const mw = tenantFairness({ reads: 1, writes: 1, queue: 4, events: 2, answers: 2 });
    const w = request('a', 'POST /api/chunk');
    const r = request('a', 'POST /api/chunk/search');
    const pw = mw(w.ctx, w.next);
    const pr = mw(r.ctx, r.next);
    await tick();
    expect([w.started, r.started]).toEqual([true, true]);
    w.finish();
    r.finish();
    await Promise.all([pw, pr]);
  });

  it('runs one read per organization while another organization is active, its full share once alone again', async () => {
    const mw = tenantFairness({ reads: 3, writes: 1, queue: 8, events: 2, answers: 2 });
    const a = [0, 1, 2, 3].map(() => request('a', 'POST /api/chunk/search'));
    const pa = a.slice(0, 3).map((r) => mw(r.ctx, r.next));
    await tick();
    // Alone, organization a runs its three.
    expect(a.map((r) => r.started)).toEqual([true, true, true, false]);
    const b = request('b', 'POST /api/chunk/search');
    const pb = mw(b.ctx, b.next);
    const pa3 = mw(a[3]!.ctx, a[3]!.next);
    await tick();
    // b is served at once; a's next waits until a runs fewer than one (contended share).
    expect([b.started, a[3]!.started]).toEqual([true, false]);
    a[0]!.finish();
    a[1]!.finish();
    await Promise.all([pa[0], pa[1]]);
    await tick();
    expect(a[3]!.started).toBe(false);
    a[2]!.finish();
    await pa[2];
    // a now runs none, so a[3] starts: at once if a has not used more than b (b's search is
    // still in flight, uncharged), else once a's patience runs out. Which one depends on how long
    // a's three searches took here (a loaded machine stretches the ticks above past
    // USAGE_SLACK_MS), so wait a bounded time rather than one tick.
    const waitedFrom = performance.now();
    while (!a[3]!.started && performance.now() - waitedFrom < 500) await new Promise((r) => setTimeout(r, 1));
    expect(a[3]!.started).toBe(true);
    // b leaves: a is alone and may run its full three again.
    const more = [0, 1].map(() => request('a', 'POST /api/chunk/search'));
    const pm = more.map((r) => mw(r.ctx, r.next));
    await tick();
    expect(more.map((r) => r.started)).toEqual([false, false]);
    b.finish();
    await pb;
    await tick();
    // b may send its next search any moment: a keeps one at a time for ACTIVE_GRACE_MS.
    expect(more.map((r) => r.started)).toEqual([false, false]);
    await new Promise((r) => setTimeout(r, ACTIVE_GRACE_MS + 30));
    expect(more.map((r) => r.started)).toEqual([true, true]);
    a[3]!.finish();
    for (const r of more) r.finish();
    await Promise.all([pa3, ...pm]);
  });

  it('runs its writes side by side while alone, one at a time once another organization is active', async () => {
    const mw = tenantFairness({ reads: 2, writes: 2, queue: 8, events: 2, answers: 2 });
    const a = [0, 1, 2].map(() => request('a', 'POST /api/chunk'));
    const pa = a.map((r) => mw(r.ctx, r.next));
    await tick();
    // Alone: two writes at once (one's store transaction beside the other's indexing), the third waits.
    expect(a.map((r) => r.started)).toEqual([true, true, false]);
    const b = request('b', 'POST /api/chunk');
    const pb = mw(b.ctx, b.next);
    await tick();
    expect(b.started).toBe(true);
    // Contended: a's third write waits until a runs none, not merely fewer than two.
    a[0]!.finish();
    await pa[0];
    await tick();
    expect(a[2]!.started).toBe(false);
    a[1]!.finish();
    await pa[1];
    const waitedFrom = performance.now();
    while (!a[2]!.started && performance.now() - waitedFrom < 500) await new Promise((r) => setTimeout(r, 1));
    expect(a[2]!.started).toBe(true);
    a[2]!.finish();
    b.finish();
    await Promise.all([pa[2], pb]);
  });

  it('under contention starts the tenant that used less first: the heavy one waits while the light one runs', async () => {
    const mw = tenantFairness({ reads: 4, writes: 1, queue: 8, events: 2, answers: 2 });
    // a spends 200 ms in a request: its usage is now far above b's, and its patience (a fifth of
    // its average request, 40 ms) outlasts a tick even on a loaded machine.
    const a1 = request('a', 'POST /api/chunk/search');
    const pa1 = mw(a1.ctx, a1.next);
    await tick();
    await new Promise((r) => setTimeout(r, 200));
    a1.finish();
    await pa1;
    const b1 = request('b', 'POST /api/chunk/search');
    const pb1 = mw(b1.ctx, b1.next);
    const a2 = request('a', 'POST /api/chunk/search');
    const pa2 = mw(a2.ctx, a2.next);
    await tick();
    // a runs nothing, yet waits: b, which used less, has a request in flight.
    expect([b1.started, a2.started]).toEqual([true, false]);
    b1.finish();
    await pb1;
    await tick();
    expect(a2.started).toBe(true);
    a2.finish();
    await pa2;
  });

  it('counts the body a request sent as usage: a tenant of quick but large requests waits for one of slower small ones', async () => {
    const mw = tenantFairness({ reads: 4, writes: 1, queue: 8, events: 2, answers: 2 });
    const run = async (org: string, ms: number, bodyLength: number): Promise<void> => {
      const r = request(org, 'POST /api/chunk/search');
      const p = mw(r.ctx, async () => {
        // As the body middleware (inside this one) records it.
        (r.ctx as { state: { bodyLength?: number } }).state.bodyLength = bodyLength;
        await r.next();
      });
      await tick();
      await new Promise((res) => setTimeout(res, ms));
      r.finish();
      await p;
    };
    // a: ~1 ms in flight with 60 MB of body (300 ms of usage); b: 100 ms in flight, no body.
    // (Large enough that a's patience, a fifth of that, outlasts a tick on a loaded machine.)
    await run('a', 1, 300 * BODY_BYTES_PER_MS);
    await run('b', 100, 0);
    const b2 = request('b', 'POST /api/chunk/search');
    const a2 = request('a', 'POST /api/chunk/search');
    const pb2 = mw(b2.ctx, b2.next);
    const pa2 = mw(a2.ctx, a2.next);
    await tick();
    // By time in flight alone a would have used less, and started beside b.
    expect([a2.started, b2.started]).toEqual([false, true]);
    b2.finish();
    await pb2;
    await tick();
    expect(a2.started).toBe(true);
    a2.finish();
    await pa2;
  });

  it('keeps a tenant whose request just ended in the share: another runs one read at a time until ACTIVE_GRACE_MS passes', async () => {
    const mw = tenantFairness({ reads: 4, writes: 1, queue: 8, events: 2, answers: 2 });
    const b1 = request('b', 'POST /api/chunk/search');
    const pb1 = mw(b1.ctx, b1.next);
    await tick();
    b1.finish();
    await pb1;
    // b has nothing in flight (its next search is on its way): a runs one read at a time.
    const a1 = request('a', 'POST /api/chunk/search');
    const a2 = request('a', 'POST /api/chunk/search');
    const pa1 = mw(a1.ctx, a1.next);
    const pa2 = mw(a2.ctx, a2.next);
    await tick();
    expect([a1.started, a2.started]).toEqual([true, false]);
    a1.finish();
    await pa1;
    await tick();
    expect(a2.started).toBe(true);
    // Once b has been quiet for the grace period, a has its full share again.
    await new Promise((r) => setTimeout(r, ACTIVE_GRACE_MS + 20));
    const a3 = request('a', 'POST /api/chunk/search');
    const pa3 = mw(a3.ctx, a3.next);
    await tick();
    expect(a3.started).toBe(true);
    a2.finish();
    a3.finish();
    await Promise.all([pa2, pa3]);
  });

  it('holds a light tenant back for a tenant that used less only about as long as its own requests take', async () => {
    const mw = tenantFairness({ reads: 4, writes: 1, queue: 8, events: 2, answers: 2 });
    // b has searched a lot, each search short: high usage, short requests.
    for (let i = 0; i < 10; i++) {
      const r = request('b', 'POST /api/chunk/search');
      const p = mw(r.ctx, r.next);
      await tick();
      await new Promise((res) => setTimeout(res, 4));
      r.finish();
      await p;
    }
    // a arrives fresh (no usage) with a long request and keeps it in flight.
    const a1 = request('a', 'POST /api/chunk/search');
    const pa1 = mw(a1.ctx, a1.next);
    await tick();
    expect(a1.started).toBe(true);
    const b = request('b', 'POST /api/chunk/search');
    const started = performance.now();
    const pb = mw(b.ctx, b.next);
    // Ordered by usage alone, b would wait for a's request to end (here: never).
    while (!b.started && performance.now() - started < 1000) await new Promise((res) => setTimeout(res, 1));
    expect(b.started).toBe(true);
    expect(performance.now() - started).toBeLessThan(100);
    b.finish();
    a1.finish();
    await Promise.all([pa1, pb]);
  });

  it('leaves the operator key and unmatched routes unlimited', async () => {
    const mw = tenantFairness({ reads: 1, writes: 1, queue: 0, events: 2, answers: 2 });
    let ran = 0;
    const admin = { state: { caller: { kind: 'admin' }, route: 'POST /api/chunk' } } as never;
    await Promise.all([mw(admin, async () => void ran++), mw(admin, async () => void ran++)]);
    expect(ran).toBe(2);
  });

  it('tells reads from writes by the matched route', () => {
    for (const route of ['GET /api/chunk/:chunk_id', 'POST /api/chunk/search', 'POST /api/chunks/scroll', 'POST /api/chunk_group/group_oriented_search', 'POST /api/organization/usage/:organization_id', 'POST /api/analytics/search', 'POST /api/analytics/events/ctr', 'POST /api/analytics/top']) {
      expect(isReadRoute(route), route).toBe(true);
    }
    for (const route of ['POST /api/chunk', 'PUT /api/chunk', 'DELETE /api/chunk', 'POST /api/chunk_group', 'POST /api/dataset', 'PUT /api/dataset/clear/:dataset_id', 'PUT /api/analytics/search', 'POST /api/experiment/ab-test']) {
      expect(isReadRoute(route), route).toBe(false);
    }
  });
});
