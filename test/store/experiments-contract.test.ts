/**
 * Contract of the experiment repository on both stores: experiments created (404 for a dataset
 * that does not exist), read back by their dataset only, listed newest first, updated field by
 * field (404 unknown), deleted with their assignments (404 unknown); assignments sticky (the
 * stored arm wins over what the split now says), decided by assignArm when new, one row per user
 * however many first calls race, 404 for an experiment that is not the dataset's; purges take
 * experiments and assignments along. The SQLite writer thread runs the same writes, racing a
 * second connection.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { assignArm, type Experiment } from '../../core/domain/experiments.js';
import type { NewExperiment, Store } from '../../store/repository.js';
import { openDatabase } from '../../store/sqlite/database.js';
import { openSqliteStore, sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { withWriteThread } from '../../store/sqlite/threaded-store.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { countRows, queryStore, type StoreLocation } from '../helpers/store-snapshot.js';

/** Whether a promise rejected with a QuarryError of this HTTP status (and message, when given). */
const rejectsWith = (status: number, message?: RegExp) => (e: unknown) =>
  e instanceof QuarryError && e.httpStatus === status && (message === undefined || message.test(e.message));

/** An experiment of `datasetId`; `over` replaces fields. */
const input = (datasetId: string, over: Partial<NewExperiment> = {}): NewExperiment => ({
  datasetId,
  name: 'checkout button ü',
  area: 'search',
  controlName: 'blue',
  controlSplit: 0.5,
  t1Name: 'green',
  t1Split: 0.5,
  ...over,
});

/** The assignment rows of an experiment, by user. */
const assignmentRows = (loc: StoreLocation, experimentId: string) =>
  queryStore<{ user_id: string; treatment_name: string; dataset_id: string; created_at: number }>(
    loc,
    'SELECT user_id, treatment_name, dataset_id, created_at FROM experiment_assignments WHERE experiment_id = ? ORDER BY user_id',
    experimentId,
  );

describe.each(STORE_KINDS)('%s store: experiments', (kind) => {
  let t: TestStore;
  let store: Store;
  let org: string;
  let ds: string;
  let other: string;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
    org = (await store.organizations.create({ name: 'o' })).id;
    ds = (await store.datasets.create({ organizationId: org, name: 'a', trackingId: null, serverConfiguration: {} })).id;
    other = (await store.datasets.create({ organizationId: org, name: 'b', trackingId: null, serverConfiguration: {} })).id;
  });
  afterEach(async () => {
    await t.dispose();
  });

  it('creates an experiment and reads it back from its dataset only; lists newest first', async () => {
    const before = Date.now();
    const a = await store.experiments.create(input(ds, { controlSplit: 0.3, t1Split: 0.7 }));
    expect(a).toEqual({ ...input(ds, { controlSplit: 0.3, t1Split: 0.7 }), id: a.id, createdAt: a.createdAt, updatedAt: a.createdAt });
    expect(a.createdAt).toBeGreaterThanOrEqual(before);
    expect(a.createdAt).toBeLessThanOrEqual(Date.now());
    expect(await store.experiments.get(ds, a.id)).toEqual(a);
    expect(await store.experiments.get(other, a.id)).toBeUndefined();
    expect(await store.experiments.get(ds, randomUUID())).toBeUndefined();

    const made: Experiment[] = [a];
    for (let i = 0; i < 4; i++) made.push(await store.experiments.create(input(ds, { name: `e${i}` })));
    await store.experiments.create(input(other, { name: 'elsewhere' }));
    const expected = [...made].sort((x, y) => y.createdAt - x.createdAt || (x.id < y.id ? -1 : 1));
    expect(await store.experiments.list(ds)).toEqual(expected);
    expect((await store.experiments.list(other)).map((e) => e.name)).toEqual(['elsewhere']);
    expect(await store.experiments.list(randomUUID())).toEqual([]);
  });

  it('refuses an experiment of a dataset that does not exist with a 404, storing nothing', async () => {
    await expect(store.experiments.create(input(randomUUID()))).rejects.toSatisfy(rejectsWith(404, /dataset/));
    expect(await countRows(t.loc, 'experiments')).toBe(0);
  });

  it('updates only the given fields, keeps the area, and 404s an experiment of another dataset', async () => {
    const a = await store.experiments.create(input(ds));
    const renamed = await store.experiments.update(ds, a.id, { name: 'renamed' });
    expect(renamed).toEqual({ ...a, name: 'renamed', updatedAt: renamed.updatedAt });
    expect(renamed.updatedAt).toBeGreaterThanOrEqual(a.updatedAt);
    const split = await store.experiments.update(ds, a.id, { controlName: 'red', controlSplit: 0.9, t1Name: 'amber', t1Split: 0.1 });
    expect(split).toEqual({ ...renamed, controlName: 'red', controlSplit: 0.9, t1Name: 'amber', t1Split: 0.1, updatedAt: split.updatedAt });
    expect(await store.experiments.get(ds, a.id)).toEqual(split);

    await expect(store.experiments.update(other, a.id, { name: 'x' })).rejects.toSatisfy(
      rejectsWith(404, new RegExp(`Experiment with id ${a.id} not found in dataset ${other}`)),
    );
    await expect(store.experiments.update(ds, randomUUID(), { name: 'x' })).rejects.toSatisfy(rejectsWith(404));
    expect(await store.experiments.get(ds, a.id)).toEqual(split);
  });

  it('deletes an experiment with its assignments, and nothing else; 404 when unknown', async () => {
    const a = await store.experiments.create(input(ds));
    const b = await store.experiments.create(input(ds, { name: 'kept' }));
    for (const user of ['u1', 'u2', 'u3']) {
      await store.experiments.assign(ds, a.id, user);
      await store.experiments.assign(ds, b.id, user);
    }
    await expect(store.experiments.delete(other, a.id)).rejects.toSatisfy(rejectsWith(404));
    await store.experiments.delete(ds, a.id);
    expect(await store.experiments.get(ds, a.id)).toBeUndefined();
    expect(await countRows(t.loc, 'experiment_assignments', 'experiment_id = ?', a.id)).toBe(0);
    expect(await countRows(t.loc, 'experiment_assignments', 'experiment_id = ?', b.id)).toBe(3);
    await expect(store.experiments.delete(ds, a.id)).rejects.toSatisfy(rejectsWith(404, /not found in dataset/));
    await expect(store.experiments.assign(ds, a.id, 'u1')).rejects.toSatisfy(rejectsWith(404));
  });

  it('assigns by assignArm when new, stores the arm, and answers the stored arm ever after', async () => {
    const a = await store.experiments.create(input(ds, { controlSplit: 0.5, t1Split: 0.5 }));
    const users = Array.from({ length: 200 }, (_, i) => `user-${i} ✓`);
    const before = Date.now();
    const first = [];
    for (const u of users) first.push(await store.experiments.assign(ds, a.id, u));
    first.forEach((got, i) => {
      expect(got).toEqual({ experimentId: a.id, datasetId: ds, userId: users[i], treatmentName: assignArm(a, users[i]!), createdAt: got.createdAt });
      expect(got.createdAt).toBeGreaterThanOrEqual(before);
    });
    // Both arms occur: the stickiness below is not that of a constant.
    expect(new Set(first.map((f) => f.treatmentName))).toEqual(new Set(['blue', 'green']));
    const rows = await assignmentRows(t.loc, a.id);
    expect(rows).toHaveLength(users.length);
    const byUser = new Map(rows.map((r) => [r.user_id, r]));
    first.forEach((got) => expect(byUser.get(got.userId)).toEqual({ user_id: got.userId, treatment_name: got.treatmentName, dataset_id: ds, created_at: got.createdAt }));

    // The split moves everyone to the treatment: assigned users keep their arm, new ones follow the split.
    await store.experiments.update(ds, a.id, { controlSplit: 0, t1Split: 1 });
    for (const [i, u] of users.entries()) expect(await store.experiments.assign(ds, a.id, u)).toEqual(first[i]);
    expect((await store.experiments.assign(ds, a.id, 'newcomer')).treatmentName).toBe('green');
    expect(await countRows(t.loc, 'experiment_assignments', 'experiment_id = ?', a.id)).toBe(users.length + 1);
  });

  it('stores one row when first calls race, and every caller answers it', async () => {
    const a = await store.experiments.create(input(ds));
    const users = Array.from({ length: 10 }, () => randomUUID());
    const answers = await Promise.all(users.flatMap((u) => Array.from({ length: 8 }, () => store.experiments.assign(ds, a.id, u))));
    for (const [i, u] of users.entries()) {
      const mine = answers.slice(i * 8, i * 8 + 8);
      expect(new Set(mine.map((m) => JSON.stringify(m))).size, u).toBe(1);
      expect(mine[0]!.treatmentName).toBe(assignArm(a, u));
    }
    const rows = await assignmentRows(t.loc, a.id);
    expect(rows.map((r) => r.user_id)).toEqual([...users].sort());
    expect(rows.map((r) => r.created_at).sort()).toEqual(answers.filter((_, i) => i % 8 === 0).map((x) => x.createdAt).sort());
  });

  it('404s an assignment in an experiment that is not the dataset’s, storing nothing', async () => {
    const a = await store.experiments.create(input(ds));
    await expect(store.experiments.assign(other, a.id, 'u')).rejects.toSatisfy(rejectsWith(404, new RegExp(`not found in dataset ${other}`)));
    await expect(store.experiments.assign(ds, randomUUID(), 'u')).rejects.toSatisfy(rejectsWith(404));
    expect(await countRows(t.loc, 'experiment_assignments')).toBe(0);
  });

  it('a dataset purge takes its experiments and their assignments along, and nothing of another dataset', async () => {
    const a = await store.experiments.create(input(ds));
    const b = await store.experiments.create(input(other));
    await store.experiments.assign(ds, a.id, 'u');
    await store.experiments.assign(other, b.id, 'u');
    await store.datasets.markDeleted(ds);
    expect(await store.datasets.purge(ds)).toBe(true);
    expect(await countRows(t.loc, 'experiments')).toBe(1);
    expect(await countRows(t.loc, 'experiment_assignments')).toBe(1);
    expect(await store.experiments.get(other, b.id)).toEqual(b);
  });
});

describe('sqlite store with its writes in a thread: experiments', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it("runs every experiment write on the writer thread, with the plain store's answers and errors, racing another connection", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-experiments-threaded-'));
    dirs.push(dir);
    const db = openDatabase(dir);
    const threaded = await withWriteThread(sqliteStoreOn(db, { readCacheBytes: 1 << 20 }), dir);
    stores.push(threaded);
    const changes = (): number => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const org = await threaded.organizations.create({ name: 'o' });
    const ds = (await threaded.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} })).id;
    const before = changes();

    const a = await threaded.experiments.create(input(ds));
    expect(await threaded.experiments.get(ds, a.id)).toEqual(a);
    const updated = await threaded.experiments.update(ds, a.id, { name: 'n2' });
    expect(updated.name).toBe('n2');
    // Errors cross the thread with their status.
    await expect(threaded.experiments.create(input(randomUUID()))).rejects.toSatisfy(rejectsWith(404));
    await expect(threaded.experiments.update(ds, randomUUID(), {})).rejects.toSatisfy(rejectsWith(404, /Experiment with id/));
    await expect(threaded.experiments.assign(ds, randomUUID(), 'u')).rejects.toSatisfy(rejectsWith(404));

    // The thread's connection and a second one race for the same first calls.
    const plain = openSqliteStore(dir);
    stores.push(plain);
    const users = Array.from({ length: 50 }, (_, i) => `racer-${i}`);
    const answers = await Promise.all(users.flatMap((u) => [threaded.experiments.assign(ds, a.id, u), plain.experiments.assign(ds, a.id, u)]));
    users.forEach((u, i) => {
      expect(answers[2 * i]).toEqual(answers[2 * i + 1]);
      expect(answers[2 * i]!.treatmentName).toBe(assignArm(a, u));
    });
    const loc = { dataDir: dir, databaseUrl: null };
    expect(await countRows(loc, 'experiment_assignments')).toBe(users.length);

    const doomed = await threaded.experiments.create(input(ds, { name: 'doomed' }));
    await threaded.experiments.assign(ds, doomed.id, 'u');
    await threaded.experiments.delete(ds, doomed.id);
    expect(await countRows(loc, 'experiment_assignments', 'experiment_id = ?', doomed.id)).toBe(0);
    // Not one row changed through the caller's own connection.
    expect(changes() - before).toBe(0);
    expect(await plain.experiments.get(ds, a.id)).toEqual(updated);
  });
});
