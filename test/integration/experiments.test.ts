/**
 * A/B experiments end to end against the real processes: CRUD with every refusal (404s with the
 * reference's message, the area fixed, bad splits and names, admin vs owner), sticky assignment
 * over a thousand users through HTTP that survives a restart of every process and a change of
 * the split, and the per-arm results route against an oracle computed from the events and
 * searches the test stores (through the store API: their HTTP routes are tested elsewhere).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { assignArm } from '../../core/domain/experiments.js';
import type { SearchRecord } from '../../core/domain/analytics.js';
import type { UserEvent } from '../../core/domain/user-events.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/repository.js';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows, expectRejected, queryStore } from '../helpers/store-snapshot.js';
import { userEvent } from '../helpers/user-event.js';

let stack: Stack;
let t: Tenant;
/** Role 1 (admin) and role 0 (read) keys of the tenant's organization, on its dataset. */
let admin: Client;
let reader: Client;
/** The tenant's second dataset (an owner-key client on it). */
let elsewhere: Client;
let otherDatasetId: string;
/** The stack's store, opened by the test to seed events and searches. */
let store: Store;

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false' } });
  t = await createTenant(stack);
  const headers = { 'tr-dataset': t.datasetId };
  admin = client(stack.baseUrl, { authorization: await createKey(stack, t.orgId, { role: 1 }), ...headers });
  reader = client(stack.baseUrl, { authorization: await createKey(stack, t.orgId, { role: 0 }), ...headers });
  otherDatasetId = await createDataset(stack, t.orgId, t.ownerKey);
  elsewhere = t.ds.with({ 'tr-dataset': otherDatasetId });
  store = await openStore({ dataDir: stack.dataDir, databaseUrl: stack.databaseUrl, poolSize: 2 });
}, 120_000);

afterAll(async () => {
  await store?.close();
  await stack?.stop();
});

/** A create body; `config` replaces fields of experiment_config. */
const createBody = (config: Record<string, unknown> = {}, name: unknown = 'checkout button') => ({
  name,
  experiment_config: { area: 'search', t1_name: 'green', t1_split: 0.3, control_name: 'blue', control_split: 0.7, ...config },
});

const WIRE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** Runs `fn` over `items`, `width` at a time, answers in order. */
async function pooled<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** The experiment as the wire shows it, from what created it. */
async function create(body: unknown = createBody(), as: Client = admin): Promise<any> {
  const res = await as.post('/api/experiment', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('experiment CRUD', () => {
  it('creates (admin), reads, lists newest first, and refuses a read-only key', async () => {
    const before = Date.now() - 1000;
    const e = await create();
    expect(e).toEqual({
      id: expect.any(String),
      name: 'checkout button',
      area: 'search',
      t1_name: 'green',
      t1_split: 0.3,
      control_name: 'blue',
      control_split: 0.7,
      dataset_id: t.datasetId,
      created_at: expect.stringMatching(WIRE_TIME),
      updated_at: e.created_at,
    });
    expect(Date.parse(e.created_at)).toBeGreaterThanOrEqual(before - (before % 1000));
    expect((await admin.get(`/api/experiment/${e.id}`)).body).toEqual(e);
    const second = await create(createBody({ t1_split: 1, control_split: 0 }, 'all in'));
    const list = await admin.get('/api/experiment');
    expect(list.status, list.text).toBe(200);
    const stored = await queryStore<{ id: string; created_at: number }>(stack, 'SELECT id, created_at FROM experiments WHERE dataset_id = ?', t.datasetId);
    const newestFirst = [...stored].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((r) => r.id);
    expect(list.body.map((x: any) => x.id)).toEqual(newestFirst);
    expect(list.body.map((x: any) => x.id)).toEqual(expect.arrayContaining([e.id, second.id]));
    // The other dataset sees none of them.
    expect((await elsewhere.get('/api/experiment')).body).toEqual([]);

    await expectRejected(stack, () => reader.post('/api/experiment', createBody()), 403);
    expect((await reader.get('/api/experiment')).status).toBe(403);
    expect((await reader.get(`/api/experiment/${e.id}`)).status).toBe(403);
  });

  it('refuses bad bodies with a 400 naming the field, storing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /name/],
      [{ name: 'x' }, /experiment_config/],
      [createBody({ t1_split: 0.5, control_split: 0.6 }), /t1_split and experiment_config\.control_split must sum to 1/],
      [createBody({ t1_split: -0.1, control_split: 1.1 }), /t1_split: must be a fraction between 0 and 1/],
      [createBody({ t1_split: '0.3' }), /t1_split/],
      [createBody({ control_split: null }), /control_split/],
      [createBody({ t1_name: 'same', control_name: 'same' }), /must differ/],
      [createBody({ t1_name: '' }), /t1_name: must not be empty/],
      [createBody({ area: undefined }), /area/],
      [createBody({}, 'n'.repeat(257)), /name: must be at most 256 characters/],
      [createBody({ control_name: 'a\u0000b' }), /control_name: must not contain the NUL/],
    ];
    for (const [body, message] of cases) await expectRejected(stack, () => admin.post('/api/experiment', body), 400, message);
  });

  it('404s an unknown experiment with the reference message, and 400s a bad id', async () => {
    const unknown = randomUUID();
    const message = new RegExp(`^Not Found: Experiment with id ${unknown} not found in dataset ${t.datasetId}$`);
    expect((await admin.get(`/api/experiment/${unknown}`)).body.message).toMatch(message);
    await expectRejected(stack, () => admin.del(`/api/experiment/${unknown}`), 404, message);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: unknown, name: 'x' }), 404, message);
    await expectRejected(stack, () => t.ds.post('/api/experiment/ab-test', { experiment_id: unknown, user_id: 'u' }), 404, message);
    expect((await admin.get(`/api/experiment/${unknown}/results`)).status).toBe(404);
    expect((await admin.get('/api/experiment/not-a-uuid')).status).toBe(400);
    // Another dataset's experiment is unknown here.
    const e = await create();
    const there = await elsewhere.get(`/api/experiment/${e.id}`);
    expect(there.status, there.text).toBe(404);
    expect(there.body.message).toBe(`Not Found: Experiment with id ${e.id} not found in dataset ${otherDatasetId}`);
  });

  it('updates (owner only) the fields sent; the area cannot change', async () => {
    const e = await create();
    await expectRejected(stack, () => admin.put('/api/experiment', { id: e.id, name: 'x' }), 403);
    const renamed = await t.ds.put('/api/experiment', { id: e.id, name: 'renamed' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toEqual({ ...e, name: 'renamed', updated_at: expect.stringMatching(WIRE_TIME) });
    const config = { area: 'search', t1_name: 'amber', t1_split: 0.9, control_name: 'red', control_split: 0.1 };
    const split = await t.ds.put('/api/experiment', { id: e.id, experiment_config: config });
    expect(split.status, split.text).toBe(200);
    expect(split.body).toEqual({ ...renamed.body, t1_name: 'amber', t1_split: 0.9, control_name: 'red', control_split: 0.1, updated_at: expect.stringMatching(WIRE_TIME) });
    // The area may be left out (it cannot change anyway).
    const noArea = await t.ds.put('/api/experiment', { id: e.id, name: null, experiment_config: { ...config, area: undefined, t1_name: 'teal' } });
    expect(noArea.status, noArea.text).toBe(200);
    expect(noArea.body.t1_name).toBe('teal');
    expect((await admin.get(`/api/experiment/${e.id}`)).body).toEqual(noArea.body);

    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: e.id, experiment_config: { ...config, area: 'recommendations' } }), 400, /area cannot be updated/);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: e.id, experiment_config: { ...config, t1_split: 0.5 } }), 400, /must sum to 1/);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: e.id, experiment_config: { ...config, t1_split: Number.MAX_VALUE } }), 400, /t1_split/);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: e.id, name: '   ' }), 400, /name: must not be empty/);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { id: 'nope', name: 'x' }), 400, /id: must be a UUID/);
    await expectRejected(stack, () => t.ds.put('/api/experiment', { name: 'x' }), 400, /id/);
  });

  it('deletes (admin) with its assignments; then it is unknown', async () => {
    const e = await create();
    for (const user of ['a', 'b', 'c']) expect((await t.ds.post('/api/experiment/ab-test', { experiment_id: e.id, user_id: user })).status).toBe(200);
    expect(await countRows(stack, 'experiment_assignments', 'experiment_id = ?', e.id)).toBe(3);
    await expectRejected(stack, () => reader.del(`/api/experiment/${e.id}`), 403);
    const gone = await admin.del(`/api/experiment/${e.id}`);
    expect(gone.status, gone.text).toBe(204);
    expect(gone.text).toBe('');
    expect(await countRows(stack, 'experiment_assignments', 'experiment_id = ?', e.id)).toBe(0);
    expect((await admin.get(`/api/experiment/${e.id}`)).status).toBe(404);
    expect((await admin.del(`/api/experiment/${e.id}`)).status).toBe(404);
  });

  it('assigns only for an owner, and refuses bad ab-test bodies', async () => {
    const e = await create();
    await expectRejected(stack, () => admin.post('/api/experiment/ab-test', { experiment_id: e.id, user_id: 'u' }), 403);
    const cases: [unknown, RegExp][] = [
      [{ experiment_id: e.id }, /user_id/],
      [{ user_id: 'u' }, /experiment_id/],
      [{ experiment_id: e.id, user_id: '' }, /user_id: must not be empty/],
      [{ experiment_id: e.id, user_id: 'u'.repeat(1025) }, /user_id: must be at most 1024 characters/],
      [{ experiment_id: e.id, user_id: 7 }, /user_id/],
      [{ experiment_id: 'x', user_id: 'u' }, /experiment_id: must be a UUID/],
    ];
    for (const [body, message] of cases) await expectRejected(stack, () => t.ds.post('/api/experiment/ab-test', body), 400, message);
  });
});

describe('sticky assignment', () => {
  it('answers each of 1,000 users the arm assignArm gives, again after the split changes and every process restarts', async () => {
    const e = await create(createBody({ t1_name: 'B', t1_split: 0.3, control_name: 'A', control_split: 0.7 }));
    const arm = (user: string) => assignArm({ id: e.id, t1Name: 'B', t1Split: 0.3, controlName: 'A' }, user);
    const users = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? `user-${i}` : randomUUID()));
    const ask = (user: string) => t.ds.post('/api/experiment/ab-test', { experiment_id: e.id, user_id: user });
    const first = await pooled(users, 16, ask);
    first.forEach((res, i) => {
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ experiment_id: e.id, treatment_name: arm(users[i]!), user_id: users[i] });
    });
    const expectedB = users.filter((u) => arm(u) === 'B').length;
    expect(expectedB).toBeGreaterThan(0);
    expect(expectedB).toBeLessThan(users.length);
    expect(await countRows(stack, 'experiment_assignments', 'experiment_id = ? AND treatment_name = ?', e.id, 'B')).toBe(expectedB);
    expect(await countRows(stack, 'experiment_assignments', 'experiment_id = ?', e.id)).toBe(users.length);
    // The split the service draws from: 100,000 further ids for this very experiment (the HTTP
    // answers above are exactly these draws; 1,000 users alone cannot pin a share within 1%).
    let inB = 0;
    for (let i = 0; i < 100_000; i++) if (arm(`split-${i}`) === 'B') inB++;
    expect(Math.abs(inB / 100_000 - 0.3)).toBeLessThan(0.01);

    // Everyone would now be drawn into B: only new users are.
    const moved = await t.ds.put('/api/experiment', { id: e.id, experiment_config: { area: 'search', t1_name: 'B', t1_split: 1, control_name: 'A', control_split: 0 } });
    expect(moved.status, moved.text).toBe(200);
    const stored = () =>
      queryStore(stack, 'SELECT user_id, treatment_name, created_at FROM experiment_assignments WHERE experiment_id = ? ORDER BY user_id', e.id);
    const before = await stored();
    // Every process stops (at once: none of them waits for another to go) and starts again on the same data.
    const exits = await Promise.all((['facade', 'jobs', 'core'] as const).map((name) => stack.kill(name, 'SIGTERM')));
    expect(exits, stack.output().slice(-2000)).toEqual([0, 0, 0]);
    await stack.start('core');
    await stack.start('jobs');
    await stack.start('facade');

    // Every stored arm is as it was, and a sample of users (both id kinds) is answered it again.
    expect(await stored()).toEqual(before);
    const sample = users.filter((_, i) => i % 5 === 0);
    const again = await pooled(sample, 12, ask);
    again.forEach((res, i) => {
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(first[i * 5]!.body);
    });
    const newcomer = await ask('newcomer');
    expect(newcomer.body).toEqual({ experiment_id: e.id, treatment_name: 'B', user_id: 'newcomer' });
    expect(await countRows(stack, 'experiment_assignments', 'experiment_id = ?', e.id)).toBe(users.length + 1);
  }, 120_000);
});

/** An event of the tenant's dataset; `over` replaces fields. */
const event = (over: Partial<UserEvent>): UserEvent => userEvent({ datasetId: t.datasetId, eventType: 'view', eventName: 'seen', createdAt: Date.now(), ...over });

/** A search of the tenant's dataset; `over` replaces fields. */
const search = (over: Partial<SearchRecord>): SearchRecord => ({
  id: randomUUID(),
  datasetId: t.datasetId,
  kind: 'search',
  searchMethod: 'hybrid',
  query: 'q',
  requestParams: {},
  latencyMs: 1,
  topScore: 0,
  results: [],
  resultCount: 0,
  userId: null,
  metadata: null,
  createdAt: Date.now(),
  ...over,
});

interface Arm {
  treatment_name: string;
  users: number;
  converted_users: number;
  conversion_rate: number;
  searches: number;
  events: number;
  revenue: number;
}

/**
 * The results by the rule of store/reports/experiment-reports.ts: assigned users count their
 * records at or after the assignment; unassigned users count records tagged with a current arm
 * name, in that arm; records without a user count nowhere.
 */
function oracle(
  arms: readonly [control: string, t1: string],
  assigned: ReadonlyMap<string, { arm: string; since: number }>,
  events: readonly UserEvent[],
  searches: readonly SearchRecord[],
): Arm[] {
  const members = new Map<string, Set<string>>();
  const converted = new Map<string, Set<string>>();
  const figures = new Map<string, { events: number; searches: number; revenue: number }>();
  const of = (arm: string) => {
    if (!figures.has(arm)) figures.set(arm, { events: 0, searches: 0, revenue: 0 });
    if (!members.has(arm)) members.set(arm, new Set());
    if (!converted.has(arm)) converted.set(arm, new Set());
    return figures.get(arm)!;
  };
  for (const [user, a] of assigned) {
    of(a.arm);
    members.get(a.arm)!.add(user);
  }
  const armOf = (r: { datasetId: string; userId: string | null; metadata: unknown; createdAt: number }): string | undefined => {
    if (r.datasetId !== t.datasetId || r.userId === null) return undefined;
    const a = assigned.get(r.userId);
    if (a) return r.createdAt >= a.since ? a.arm : undefined;
    const tag = (r.metadata as { treatment?: unknown } | null)?.treatment;
    return typeof tag === 'string' && arms.includes(tag) ? tag : undefined;
  };
  for (const e of events) {
    const arm = armOf(e);
    if (arm === undefined) continue;
    const f = of(arm);
    members.get(arm)!.add(e.userId!);
    f.events++;
    f.revenue += e.revenue;
    if (e.isConversion) converted.get(arm)!.add(e.userId!);
  }
  for (const s of searches) {
    const arm = armOf(s);
    if (arm === undefined) continue;
    of(arm).searches++;
    members.get(arm)!.add(s.userId!);
  }
  for (const arm of arms) of(arm);
  const names = [...arms, ...[...figures.keys()].filter((n) => !arms.includes(n)).sort()];
  return names.map((name) => {
    const users = members.get(name)!.size;
    const conv = converted.get(name)!.size;
    return { treatment_name: name, users, converted_users: conv, conversion_rate: users === 0 ? 0 : conv / users, ...figures.get(name)! };
  });
}

describe('per-arm results', () => {
  it('counts users, conversions, searches, events and revenue per arm, as the oracle does', async () => {
    const e = await create(createBody({ t1_name: 'new', t1_split: 0.5, control_name: 'ctrl', control_split: 0.5 }, 'results'));
    const buyers = Array.from({ length: 40 }, (_, i) => `buyer-${i}`);
    for (const u of buyers) expect((await t.ds.post('/api/experiment/ab-test', { experiment_id: e.id, user_id: u })).status).toBe(200);
    const rows = await queryStore<{ user_id: string; treatment_name: string; created_at: number }>(
      stack,
      'SELECT user_id, treatment_name, created_at FROM experiment_assignments WHERE experiment_id = ?',
      e.id,
    );
    const assigned = new Map(rows.map((r) => [r.user_id, { arm: r.treatment_name, since: Number(r.created_at) }]));
    expect(new Set(rows.map((r) => r.treatment_name))).toEqual(new Set(['ctrl', 'new']));

    const events: UserEvent[] = [];
    const searches: SearchRecord[] = [];
    buyers.forEach((u, i) => {
      const since = assigned.get(u)!.since;
      // Before the assignment: never counted.
      events.push(event({ userId: u, eventType: 'purchase', isConversion: true, revenue: 100, createdAt: since - 60_000 }));
      searches.push(search({ userId: u, createdAt: since - 1 }));
      for (let j = 0; j < i % 4; j++) {
        const purchase = (i + j) % 5 === 0;
        events.push(
          event({
            userId: u,
            eventType: purchase ? 'purchase' : 'click',
            isConversion: purchase && i % 3 === 0,
            revenue: purchase ? (i % 7) * 1.25 : 0,
            // The first at the very millisecond of the assignment: it counts.
            createdAt: since + j * 1000,
          }),
        );
      }
      for (let j = 0; j < i % 3; j++) searches.push(search({ userId: u, createdAt: since + j }));
      // A tag naming the other arm does not move an assigned user.
      if (i % 6 === 0) events.push(event({ userId: u, metadata: { treatment: assigned.get(u)!.arm === 'new' ? 'ctrl' : 'new' }, createdAt: since + 5 }));
      // Another dataset's records of the same user: never counted.
      events.push(event({ datasetId: otherDatasetId, userId: u, isConversion: true, revenue: 50, createdAt: since + 10 }));
      searches.push(search({ datasetId: otherDatasetId, userId: u, createdAt: since + 10 }));
    });
    const now = Date.now();
    for (let i = 0; i < 12; i++) {
      const u = `tagged-${i}`;
      const arm = i % 2 === 0 ? 'new' : 'ctrl';
      // Converting users in both arms whatever the buyers' random arms (i % 3: tagged-0 and -6 in `new`, -3 and -9 in `ctrl`).
      events.push(event({ userId: u, metadata: { treatment: arm }, isConversion: i % 3 === 0, eventType: 'purchase', revenue: i * 0.5, createdAt: now - i * 1000 }));
      // Untagged, or tagged with no arm of this experiment: not counted.
      events.push(event({ userId: u, isConversion: true, revenue: 9, createdAt: now }));
      events.push(event({ userId: u, metadata: { treatment: 'other', n: 1 }, createdAt: now }));
      if (i % 3 === 0) searches.push(search({ userId: u, metadata: { treatment: arm }, createdAt: now }));
      searches.push(search({ userId: u, metadata: { component_name: 'x' }, createdAt: now }));
    }
    // Tagged both ways: in both arms, each with its own records.
    events.push(event({ userId: 'two-faced', metadata: { treatment: 'new' }, isConversion: true, revenue: 2.5 }));
    events.push(event({ userId: 'two-faced', metadata: { treatment: 'ctrl' } }));
    // A user seen only through a tagged search is in the arm too.
    searches.push(search({ userId: 'searcher', metadata: { treatment: 'ctrl' } }));
    // No user: counted nowhere.
    events.push(event({ userId: null, metadata: { treatment: 'new' }, isConversion: true, revenue: 1000 }));
    searches.push(search({ userId: null, metadata: { treatment: 'new' } }));
    // Metadata that is not an object.
    events.push(event({ userId: 'scalar', metadata: 'new' }));
    events.push(event({ userId: 'list', metadata: ['new'] }));

    expect(await store.userEvents.insertMany(events)).toBe(events.length);
    expect(await store.analytics.insertSearches(searches)).toBe(searches.length);

    const res = await admin.get(`/api/experiment/${e.id}/results`);
    expect(res.status, res.text).toBe(200);
    const expected = oracle(['ctrl', 'new'], assigned, events, searches);
    expect(res.body).toEqual({ experiment_id: e.id, arms: expected });
    // The oracle is not trivial: both arms have users, conversions, searches and revenue.
    for (const a of expected) {
      expect(a.users).toBeGreaterThan(10);
      expect(a.converted_users).toBeGreaterThan(0);
      expect(a.searches).toBeGreaterThan(0);
      expect(a.revenue).toBeGreaterThan(0);
    }
    expect((await reader.get(`/api/experiment/${e.id}/results`)).status).toBe(403);

    // Renaming an arm: its assigned users keep the old name, reported beside the new, empty one.
    const renamed = await t.ds.put('/api/experiment', {
      id: e.id,
      experiment_config: { area: 'search', t1_name: 'newer', t1_split: 0.5, control_name: 'ctrl', control_split: 0.5 },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const after = await admin.get(`/api/experiment/${e.id}/results`);
    expect(after.status, after.text).toBe(200);
    const expectedAfter = oracle(['ctrl', 'newer'], assigned, events, searches);
    expect(after.body).toEqual({ experiment_id: e.id, arms: expectedAfter });
    expect(after.body.arms.map((a: Arm) => a.treatment_name)).toEqual(['ctrl', 'newer', 'new']);
  });
});
