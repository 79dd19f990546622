/**
 * Durability of acknowledged writes across restarts and crashes of the real processes:
 * (a) SIGTERM restart of every process, (b) kill -9 of the facade under 4 concurrent writers,
 * (c) kill -9 of every process, (d) health naming the core while it is down.
 * Oracle: the store (read-only) and the API after restart.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/api.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { waitHealthy, startStack, type ProcessName, type Stack } from '../helpers/stack.js';
import { queryStore, snapshotStore, type StoreSnapshot } from '../helpers/store-snapshot.js';

let stack: Stack;
let t: Tenant;

/** The tables that hold tenants' data (other components may keep their own bookkeeping). */
const DATA_TABLES = ['organizations', 'users', 'memberships', 'api_keys', 'datasets', 'chunks', 'chunk_groups', 'chunk_group_members', 'change_log'];
const dataOf = (s: StoreSnapshot) => Object.fromEntries(DATA_TABLES.map((name) => [name, s[name]]));
/**
 * Batches (b) sent without getting an answer. Their outcome is unknown by design: a commit cut
 * by kill -9 after its WAL frames were synced but before the shared WAL index was updated stays
 * invisible until every connection has closed, then reappears (whole) after a full restart.
 */
const unacknowledged: string[][] = [];

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false' } });
  t = await createTenant(stack);
  const seeded = await t.ds.post(
    '/api/chunk',
    Array.from({ length: 30 }, (_, i) => ({
      chunk_html: `<p>seed ${i} ünïcode ✓</p>`,
      tracking_id: `seed-${i}`,
      tag_set: [`t${i % 3}`],
      metadata: { i, nested: { even: i % 2 === 0 } },
      time_stamp: '2024-01-31T10:00:00Z',
      group_tracking_ids: [`g${i % 4}`],
    })),
  );
  expect(seeded.status, seeded.text).toBe(200);
});
afterAll(async () => {
  await stack?.stop();
});

/** Restarts all processes in dependency order and waits for health 200. */
async function startAll(): Promise<void> {
  await stack.start('core');
  await stack.start('jobs');
  await stack.start('facade');
}

async function expectSeedIntact(): Promise<void> {
  const res = await t.ds.post('/api/chunks/tracking', { tracking_ids: Array.from({ length: 30 }, (_, i) => `seed-${i}`) });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toHaveLength(30);
  res.body.forEach((c: any, i: number) => {
    expect(c).toMatchObject({ chunk_html: `<p>seed ${i} ünïcode ✓</p>`, tracking_id: `seed-${i}`, tag_set: [`t${i % 3}`], metadata: { i, nested: { even: i % 2 === 0 } } });
  });
  const group = await t.ds.get('/api/chunk_group/tracking_id/g1/1');
  expect(group.status, group.text).toBe(200);
  expect(group.body.chunks.map((c: any) => c.tracking_id).sort()).toEqual(['seed-1', 'seed-13', 'seed-17', 'seed-21', 'seed-25', 'seed-29', 'seed-5', 'seed-9']);
}

describe('durability', () => {
  it('(a) every process exits 0 on SIGTERM and the data is intact after a restart', async () => {
    const before = dataOf(await snapshotStore(stack));
    for (const name of ['facade', 'jobs', 'core'] as ProcessName[]) {
      expect(await stack.kill(name, 'SIGTERM'), `${name} exit\n${stack.output().slice(-2000)}`).toBe(0);
    }
    expect(dataOf(await snapshotStore(stack))).toEqual(before);
    await startAll();
    expect(dataOf(await snapshotStore(stack))).toEqual(before);
    await expectSeedIntact();
  });

  it('(b) kill -9 of the facade under 4 concurrent writers loses no acknowledged write and half-writes nothing', async () => {
    interface Attempt {
      items: { tracking_id: string; chunk_html: string; metadata: unknown; tag_set: string[] }[];
      acked: boolean;
    }
    const attempts: Attempt[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let b = 0; !stop; b++) {
        // Batches of 1 to 4 chunks, so single and bulk creates are both in flight.
        const size = (b % 4) + 1;
        const items = Array.from({ length: size }, (_, i) => ({
          tracking_id: `w${w}-b${b}-${i}`,
          chunk_html: `<p>writer ${w} batch ${b} item ${i} ${'x'.repeat((b * 37 + i) % 500)}</p>`,
          metadata: { w, b, i },
          tag_set: [`w${w}`],
        }));
        const attempt: Attempt = { items, acked: false };
        attempts.push(attempt);
        try {
          const res = await request(stack.baseUrl, 'POST', '/api/chunk', {
            body: size === 1 ? items[0] : items,
            headers: { authorization: t.ownerKey, 'tr-dataset': t.datasetId },
          });
          if (res.status === 200) attempt.acked = true;
          else if (res.status !== 503) throw new Error(`unexpected ${res.status} ${res.text}`);
        } catch (err) {
          if ((err as Error).message.startsWith('unexpected')) throw err;
          // Connection refused or reset: the facade is gone; this attempt is unacknowledged.
          return;
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    // Let the writers get going, then pull the plug.
    const warmup = Date.now() + 15_000;
    while (attempts.filter((a) => a.acked).length < 40 && Date.now() < warmup) await new Promise((r) => setTimeout(r, 10));
    expect(await stack.kill('facade', 'SIGKILL')).toBe('SIGKILL');
    await Promise.all(writers);
    stop = true;
    const acked = attempts.filter((a) => a.acked);
    expect(acked.length).toBeGreaterThanOrEqual(40);

    await stack.start('facade');
    const rows = await queryStore<{ tracking_id: string; chunk_html: string; metadata: string; tag_set: string }>(
      stack,
      "SELECT tracking_id, chunk_html, metadata, tag_set FROM chunks WHERE dataset_id = ? AND tracking_id LIKE 'w%-b%'",
      t.datasetId,
    );
    const stored = new Map(rows.map((r) => [r.tracking_id, r]));
    let unackedPresent = 0;
    for (const a of attempts) {
      const present = a.items.map((item) => stored.get(item.tracking_id));
      const count = present.filter(Boolean).length;
      // All or nothing per request.
      expect(count === 0 || count === a.items.length, `batch ${a.items[0]!.tracking_id} has ${count}/${a.items.length}`).toBe(true);
      if (a.acked) expect(count, `acknowledged ${a.items[0]!.tracking_id} lost`).toBe(a.items.length);
      if (!a.acked && count > 0) unackedPresent++;
      a.items.forEach((item, i) => {
        const row = present[i];
        if (!row) return;
        expect(row.chunk_html).toBe(item.chunk_html);
        expect(JSON.parse(row.metadata)).toEqual(item.metadata);
        expect(JSON.parse(row.tag_set)).toEqual(item.tag_set);
      });
    }
    // At most the in-flight requests (one per writer) can have committed without an answer.
    expect(unackedPresent).toBeLessThanOrEqual(4);
    for (const a of attempts) if (!a.acked) unacknowledged.push(a.items.map((i) => i.tracking_id));
    // The API agrees with the file for the acknowledged chunks.
    const sample = acked.flatMap((a) => a.items).slice(0, 100);
    const res = await t.ds.post('/api/chunks/tracking', { tracking_ids: sample.map((i) => i.tracking_id) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((c: any) => [c.tracking_id, c.chunk_html, c.metadata])).toEqual(sample.map((i) => [i.tracking_id, i.chunk_html, i.metadata]));
    await expectSeedIntact();
  });

  it('(c) kill -9 of core and jobs too: health 200 again and the data intact', async () => {
    const before = dataOf(await snapshotStore(stack));
    for (const name of ['core', 'jobs', 'facade'] as ProcessName[]) expect(await stack.kill(name, 'SIGKILL')).toBe('SIGKILL');
    await startAll();
    const after = dataOf(await snapshotStore(stack));
    // Rows of (b)'s unanswered batches may surface now (see `unacknowledged`): each batch whole
    // or not at all, and nothing else may differ.
    const tracking = new Map(
      (await queryStore<{ id: string; tracking_id: string }>(stack, 'SELECT id, tracking_id FROM chunks WHERE dataset_id = ?', t.datasetId)).map((r) => [r.tracking_id, r.id]),
    );
    const surfaced = new Set<string>();
    for (const batch of unacknowledged) {
      const present = batch.filter((tid) => tracking.has(tid));
      expect(present.length === 0 || present.length === batch.length, batch.join(',')).toBe(true);
      for (const tid of present) surfaced.add(tracking.get(tid)!);
    }
    const without = (snap: Record<string, unknown[] | undefined>) => ({
      ...snap,
      chunks: snap.chunks!.filter((r) => !surfaced.has((r as { id: string }).id)),
      change_log: snap.change_log!.filter((r) => !surfaced.has((r as { chunk_id: string }).chunk_id)),
    });
    expect(surfaced.size).toBeLessThanOrEqual(16);
    expect(without(after)).toEqual(without(before));
    await expectSeedIntact();
    // And the stack still takes writes.
    const created = await t.ds.post('/api/chunk', { chunk_html: 'after the crash', tracking_id: 'after-crash' });
    expect(created.status, created.text).toBe(200);
    expect((await t.ds.get('/api/chunk/tracking_id/after-crash')).body.chunk_html).toBe('after the crash');
  });

  it('(d) health is 503 naming core while the core is down, and 200 after it returns', async () => {
    await stack.kill('core', 'SIGKILL');
    let last: { status: number; body: any } = { status: 0, body: undefined };
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      last = await request(stack.baseUrl, 'GET', '/api/health');
      if (last.status === 503) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(last.status, JSON.stringify(last.body)).toBe(503);
    expect(last.body.message).toMatch(/core/);
    expect(last.body.checks.core).not.toBe('ok');
    expect(last.body.checks.store).toBe('ok');
    expect(last.body.checks.redis).toBe('ok');
    // Reads that need only the store keep working without the core.
    expect((await t.ds.get('/api/chunk/tracking_id/seed-1')).status).toBe(200);
    await stack.start('core');
    await waitHealthy(stack.baseUrl, 15_000, () => stack.output().slice(-3000));
    const ok = await request(stack.baseUrl, 'GET', '/api/health');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'ok', checks: { core: 'ok', store: 'ok', redis: 'ok' } });
  });

  it('(e) processes opening a fresh data dir at the same moment all migrate it without error', async () => {
    const entry = path.resolve(import.meta.dirname, '../../dist/store/sqlite/database.js');
    const script = `const m = await import(${JSON.stringify(entry)}); const db = m.openDatabase(process.argv[1]); db.close();`;
    for (let round = 0; round < 4; round++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-migrate-'));
      try {
        const results = await Promise.all(
          Array.from({ length: 6 }, () => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            child.stderr.on('data', (d: Buffer) => (err += d.toString()));
            return new Promise<{ code: number | null; err: string }>((resolve) => child.on('exit', (code) => resolve({ code, err })));
          }),
        );
        for (const r of results) expect(r.code, r.err).toBe(0);
        const tables = await queryStore<{ name: string }>({ dataDir: dir, databaseUrl: null }, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'chunks'");
        expect(tables).toHaveLength(1);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
