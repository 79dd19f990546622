/**
 * PostgreSQL's reads by a key unique within a dataset (store/postgres/keyed-reads.ts) take the
 * key's unique index while the table's statistics say nothing of the dataset: statistics taken
 * before the dataset existed, then thousands of its rows written through the store, autovacuum off
 * so that they stay that way (as they do for up to a minute, or until a tenth of the table
 * changed, on a live server). The control, the same read with the dataset's value in view, takes
 * the dataset's (dataset_id, id) index there and reads every row of the dataset for each key:
 * without it this test could not tell the trap from a setup that never springs it.
 *
 * SQLite needs no such care: its planner takes a unique index whose every column is bound
 * (one row) before any other, with or without statistics.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BY_TRACKING_ID } from '../../store/postgres/chunks.js';
import { GROUP_BY_TRACKING_ID } from '../../store/postgres/groups.js';
import { byKeys } from '../../store/postgres/keyed-reads.js';
import type { Store } from '../../store/repository.js';
import { openTestStore, type TestStore } from '../helpers/both-stores.js';

const ROWS = 5_000;
const BATCH = 250;

let t: TestStore;
let store: Store;
let client: pg.Client;
let fresh: string;

async function newDataset(): Promise<string> {
  const org = await store.organizations.create({ name: 'org' });
  return (await store.datasets.create({ organizationId: org.id, name: 'ds', trackingId: null, serverConfiguration: {} })).id;
}

/** Writes `n` chunks and n/10 groups into `datasetId` through the store, in import-sized batches. */
async function fill(datasetId: string, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i += BATCH) {
    await store.chunks.createMany(
      datasetId,
      Array.from({ length: BATCH }, (_, j) => ({ trackingId: `${prefix}|${i + j}`, chunkHtml: `row ${i + j} alpine boot canvas` })),
    );
  }
  await store.groups.createMany(
    datasetId,
    Array.from({ length: n / 10 }, (_, j) => ({ name: `g${j}`, trackingId: `${prefix}-group|${j}` })),
    false,
  );
}

/** The plan of `sql` with `params`, as text. */
async function plan(sql: string, params: unknown[]): Promise<string> {
  const res = await client.query(`EXPLAIN ${sql}`, params);
  return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
}

const keys = (prefix: string, from: number): string[] => Array.from({ length: BATCH }, (_, j) => `${prefix}|${from + j}`);

beforeAll(async () => {
  t = await openTestStore('postgres');
  store = t.store;
  client = new pg.Client({ connectionString: t.loc.databaseUrl! });
  await client.connect();
  for (const table of ['chunks', 'chunk_groups']) await client.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  const old = await newDataset();
  await fill(old, 4 * ROWS, 'old');
  await client.query('ANALYZE chunks');
  await client.query('ANALYZE chunk_groups');
  fresh = await newDataset();
  await fill(fresh, ROWS, 'fresh');
}, 120_000);

afterAll(async () => {
  await client?.end();
  await t?.dispose();
});

describe('PostgreSQL reads by a key unique within a dataset, with statistics older than the dataset', () => {
  it('the control: with the dataset in view the planner reads the whole dataset per key', async () => {
    const inView = `SELECT id FROM chunks WHERE dataset_id = $1 AND tracking_id = $2`;
    expect(await plan(inView, [fresh, 'fresh|4100'])).toMatch(/using chunks_dataset on chunks[\s\S]*Filter: \(tracking_id = /);
  });

  it('a chunk by tracking id, alone and in a batch, probes chunks_tracking', async () => {
    expect(await plan(CHUNK_BY_TRACKING_ID, [fresh, 'fresh|4100'])).toMatch(/using chunks_tracking on chunks/);
    const batch = await plan(byKeys('id, tracking_id, created_at, updated_at', 'chunks', 'tracking_id'), [fresh, keys('fresh', ROWS - BATCH)]);
    expect(batch).toMatch(/using chunks_tracking on chunks/);
    expect(batch).not.toMatch(/Filter:/);
  });

  it('a group by tracking id, alone and in a batch, probes groups_tracking', async () => {
    expect(await plan(GROUP_BY_TRACKING_ID, [fresh, 'fresh-group|100'])).toMatch(/using groups_tracking on chunk_groups/);
    expect(await plan(byKeys('id, tracking_id', 'chunk_groups', 'tracking_id'), [fresh, keys('fresh-group', 0)])).toMatch(/using groups_tracking on chunk_groups/);
  });

  it('the reads answer as before: every key found once, an unknown key not at all', async () => {
    const asked = [...keys('fresh', ROWS - BATCH), 'fresh|nope', 'old|3'];
    const found = await store.chunks.getManyByTrackingIds(fresh, asked);
    expect(found.map((c) => c.trackingId)).toEqual(keys('fresh', ROWS - BATCH));
    expect((await store.chunks.get(fresh, { trackingId: 'fresh|4100' }))?.chunkHtml).toBe('row 4100 alpine boot canvas');
    expect(await store.chunks.get(fresh, { trackingId: 'old|4100' })).toBeUndefined();
    expect((await store.groups.getByTrackingId(fresh, 'fresh-group|7'))?.name).toBe('g7');
  });
});
