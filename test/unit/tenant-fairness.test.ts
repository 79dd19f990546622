/** Per-organization shares of the HTTP API: waits in order, 429 past the queue, other organizations unaffected. */
import { describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { isReadRoute, tenantFairness } from '../../facade/middleware/tenant-fairness.js';

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
    const mw = tenantFairness({ reads: 2, writes: 1, queue: 1 });
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

  it('counts reads apart from writes: a search is not queued behind the same organization\'s write', async () => {
    const mw = tenantFairness({ reads: 1, writes: 1, queue: 4 });
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

  it('leaves the operator key and unmatched routes unlimited', async () => {
    const mw = tenantFairness({ reads: 1, writes: 1, queue: 0 });
    let ran = 0;
    const admin = { state: { caller: { kind: 'admin' }, route: 'POST /api/chunk' } } as never;
    await Promise.all([mw(admin, async () => void ran++), mw(admin, async () => void ran++)]);
    expect(ran).toBe(2);
  });

  it('tells reads from writes by the matched route', () => {
    for (const route of ['GET /api/chunk/:chunk_id', 'POST /api/chunk/search', 'POST /api/chunks/scroll', 'POST /api/chunk_group/group_oriented_search', 'POST /api/organization/usage/:organization_id']) {
      expect(isReadRoute(route), route).toBe(true);
    }
    for (const route of ['POST /api/chunk', 'PUT /api/chunk', 'DELETE /api/chunk', 'POST /api/chunk_group', 'POST /api/dataset', 'PUT /api/dataset/clear/:dataset_id']) {
      expect(isReadRoute(route), route).toBe(false);
    }
  });
});
