/**
 * QUARRY_SNAPSHOT_IDLE_MS: a dataset whose writes stop is snapshotted that long after the last
 * one, without another write or a shutdown (the count and clock rules only run when a change is
 * applied). A kill -9 after it then replays nothing from the change log; a write after it makes
 * the next idle snapshot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';

const IDLE_MS = 400;
let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  // Info: the core's load line says how many changes it replayed.
  stack = await startStack({ env: { QUARRY_SNAPSHOT_IDLE_MS: String(IDLE_MS), QUARRY_LOG_LEVEL: 'info' } });
  tenant = await createTenant(stack);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The dataset's shard snapshot file (one inline shard), or null while there is none. */
function snapshotFile(): string | null {
  const root = path.join(stack.dataDir, 'index', tenant.datasetId);
  if (!fs.existsSync(root)) return null;
  for (const layout of fs.readdirSync(root)) {
    const file = path.join(root, layout, 'shard-0.bin');
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/** The sequence a snapshot file records (an f64 after the 8-byte magic and the u32 version). */
const seqOf = (file: string): number => fs.readFileSync(file).readDoubleLE(12);

/** The core's load lines for this dataset, as logged. */
const loads = (): { replayed: number }[] =>
  stack
    .output()
    .split('\n')
    .filter((l) => l.startsWith('[core] {') && l.includes(tenant.datasetId) && l.includes('"replayed"'))
    .map((l) => JSON.parse(l.slice('[core] '.length)) as { replayed: number });

it('snapshots a dataset once its writes stop, so that a crash replays nothing', async () => {
  expect((await tenant.ds.post('/api/chunk', randomChunks(30, 1).map((c, i) => ({ ...c, tracking_id: `a${i}` })))).status).toBe(200);
  const file = await eventually({ what: 'the idle snapshot', timeoutMs: 15_000, context: () => stack.output() }, async () => snapshotFile() ?? undefined);
  const first = seqOf(file);
  expect(first).toBeGreaterThan(0);
  // Another write: the next idle snapshot records a later sequence.
  expect((await tenant.ds.post('/api/chunk', randomChunks(10, 2).map((c, i) => ({ ...c, tracking_id: `b${i}` })))).status).toBe(200);
  await eventually({ what: 'the second idle snapshot', timeoutMs: 15_000 }, async () => seqOf(file) > first);
  const loadsBefore = loads().length;
  // No shutdown snapshot: the process is killed.
  await stack.kill('core', 'SIGKILL');
  await stack.start('core');
  // Every chunk is searchable by its tracking id's filter after the restart: all 40 come back.
  const res = await eventually({ what: 'the restarted core', timeoutMs: 30_000, context: () => stack.output() }, async () => {
    const r = await tenant.ds.post('/api/chunks/scroll', { page_size: 100 });
    return r.status === 200 && r;
  });
  expect(res.body.chunks).toHaveLength(40);
  const after = await eventually({ what: 'the load line', timeoutMs: 10_000 }, async () => loads().length > loadsBefore && loads().at(-1));
  expect(after).toMatchObject({ replayed: 0 });
}, 90_000);
