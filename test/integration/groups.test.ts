/** Chunk groups against the real stack: create, upsert, read, update, membership, pages, delete. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows, expectRejected, queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let t: Tenant;
let ds: Client;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
  ds = t.ds;
});
afterAll(async () => {
  await stack?.stop();
});

async function createGroup(body: Record<string, unknown>): Promise<any> {
  const res = await ds.post('/api/chunk_group', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}
async function createChunks(n: number, prefix: string, extra: Record<string, unknown> = {}): Promise<any[]> {
  const res = await ds.post(
    '/api/chunk',
    Array.from({ length: n }, (_, i) => ({ chunk_html: `${prefix} ${i}`, tracking_id: `${prefix}-${i}`, ...extra })),
  );
  expect(res.status, res.text).toBe(200);
  return res.body.chunk_metadata;
}
const members = async (groupId: string): Promise<string[]> =>
  (await queryStore<{ chunk_id: string }>(stack, 'SELECT chunk_id FROM chunk_group_members WHERE group_id = ? ORDER BY chunk_id', groupId)).map((r) => r.chunk_id);

describe('create', () => {
  it('a single group returns the group object', async () => {
    const g = await createGroup({ name: 'Shirts', description: 'all shirts', tracking_id: 'g-shirts', metadata: { color: 'black' }, tag_set: ['a', 'b'] });
    expect(Array.isArray(g)).toBe(false);
    expect(g).toMatchObject({ name: 'Shirts', description: 'all shirts', tracking_id: 'g-shirts', metadata: { color: 'black' }, tag_set: ['a', 'b'], dataset_id: t.datasetId });
    const got = await ds.get(`/api/chunk_group/${g.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...g, file_id: null });
  });

  it('a batch returns an array in request order', async () => {
    const gs = await ds.post('/api/chunk_group', [{ name: 'b1', tracking_id: 'gb-1' }, { name: 'b2' }, { name: 'b3', tracking_id: 'gb-3' }]);
    expect(gs.status, gs.text).toBe(200);
    expect(gs.body.map((g: any) => g.name)).toEqual(['b1', 'b2', 'b3']);
    expect(gs.body.map((g: any) => g.tracking_id)).toEqual(['gb-1', null, 'gb-3']);
  });

  it('accepts 1000 groups; 1001 is 413 and stores nothing', async () => {
    const ok = await ds.post('/api/chunk_group', Array.from({ length: 1000 }, (_, i) => ({ name: `many ${i}` })));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toHaveLength(1000);
    await expectRejected(stack, () => ds.post('/api/chunk_group', Array.from({ length: 1001 }, (_, i) => ({ name: `too many ${i}` }))), 413, /1000/);
  });

  it('a tracking_id repeated in the batch or already stored is 400 and stores nothing', async () => {
    await expectRejected(stack, () => ds.post('/api/chunk_group', [{ name: 'x', tracking_id: 'g-dup' }, { name: 'y', tracking_id: 'g-dup' }]), 400, /g-dup/);
    await expectRejected(
      stack,
      () => ds.post('/api/chunk_group', [{ name: 'x', tracking_id: 'g-fresh' }, { name: 'y', tracking_id: 'g-shirts' }]),
      400,
      /g-shirts/,
    );
    await expectRejected(
      stack,
      () => ds.post('/api/chunk_group', [{ name: 'x', tracking_id: 'g-dup2', upsert_by_tracking_id: true }, { name: 'y', tracking_id: 'g-dup2', upsert_by_tracking_id: true }]),
      400,
      /g-dup2/,
    );
  });

  it('upsert_by_tracking_id updates the existing group in place', async () => {
    const g = await createGroup({ name: 'orig', description: 'keep me', tracking_id: 'g-up', tag_set: ['t'] });
    const up = await createGroup({ name: 'renamed', tracking_id: 'g-up', upsert_by_tracking_id: true });
    expect(up.id).toBe(g.id);
    const got = (await ds.get('/api/chunk_group/tracking_id/g-up')).body;
    expect(got).toMatchObject({ id: g.id, name: 'renamed', tracking_id: 'g-up' });
    expect(await countRows(stack, 'chunk_groups', 'tracking_id = ?', 'g-up')).toBe(1);
  });
});

describe('read and update', () => {
  it('gets a group by id and by tracking id; unknown ones are 404', async () => {
    const g = await createGroup({ name: 'readable', tracking_id: 'g-read' });
    expect((await ds.get(`/api/chunk_group/${g.id}`)).body.name).toBe('readable');
    expect((await ds.get('/api/chunk_group/tracking_id/g-read')).body.id).toBe(g.id);
    await expectRejected(stack, () => ds.get(`/api/chunk_group/${MISSING}`), 404);
    await expectRejected(stack, () => ds.get('/api/chunk_group/tracking_id/g-nothing'), 404);
    await expectRejected(stack, () => ds.get('/api/chunk_group/not-a-uuid'), 400, /group_id/);
  });

  it('update keeps every absent field', async () => {
    const g = await createGroup({ name: 'n', description: 'd', tracking_id: 'g-keep', metadata: { m: 1 }, tag_set: ['k'] });
    const cases: [string, unknown][] = [
      ['name', 'n2'],
      ['description', 'd2'],
      ['metadata', { m: 2 }],
      ['tag_set', ['k2']],
    ];
    for (const [field, value] of cases) {
      const before = (await ds.get(`/api/chunk_group/${g.id}`)).body;
      const res = await ds.put('/api/chunk_group', { group_id: g.id, [field]: value });
      expect(res.status, res.text).toBe(204);
      const after = (await ds.get(`/api/chunk_group/${g.id}`)).body;
      expect(after[field]).toEqual(value);
      for (const key of Object.keys(before)) if (key !== field && key !== 'updated_at') expect(after[key], key).toEqual(before[key]);
    }
    // By tracking id, and via the tracking-id route.
    expect((await ds.put('/api/chunk_group', { tracking_id: 'g-keep', name: 'n3' })).status).toBe(204);
    expect((await ds.put('/api/chunk_group/tracking_id/g-keep', { description: 'd3' })).status).toBe(204);
    expect((await ds.get(`/api/chunk_group/${g.id}`)).body).toMatchObject({ name: 'n3', description: 'd3', tracking_id: 'g-keep', metadata: { m: 2 }, tag_set: ['k2'] });
  });

  it('update with group_id and tracking_id renames the tracking id; a taken one is 400', async () => {
    const g = await createGroup({ name: 'ren', tracking_id: 'g-ren' });
    await createGroup({ name: 'taken', tracking_id: 'g-taken' });
    expect((await ds.put('/api/chunk_group', { group_id: g.id, tracking_id: 'g-ren2' })).status).toBe(204);
    expect((await ds.get(`/api/chunk_group/${g.id}`)).body.tracking_id).toBe('g-ren2');
    await expectRejected(stack, () => ds.put('/api/chunk_group', { group_id: g.id, tracking_id: 'g-taken', name: 'no' }), 400, /g-taken/);
  });

  it('update of an unknown group is 404; without an identifier 400', async () => {
    await expectRejected(stack, () => ds.put('/api/chunk_group', { group_id: MISSING, name: 'x' }), 404);
    await expectRejected(stack, () => ds.put('/api/chunk_group', { tracking_id: 'g-none', name: 'x' }), 404);
    await expectRejected(stack, () => ds.put('/api/chunk_group', { name: 'x' }), 400, /group_id|tracking_id/);
  });
});

describe('membership', () => {
  let group: any;
  let chunks: any[];
  beforeAll(async () => {
    group = await createGroup({ name: 'members', tracking_id: 'g-members' });
    chunks = await createChunks(3, 'mem');
  });

  it('adds chunks by id and by tracking id, to a group by id and by tracking id', async () => {
    expect((await ds.post(`/api/chunk_group/chunk/${group.id}`, { chunk_id: chunks[0].id })).status).toBe(204);
    expect((await ds.post(`/api/chunk_group/chunk/${group.id}`, { chunk_tracking_id: 'mem-1' })).status).toBe(204);
    expect((await ds.post('/api/chunk_group/tracking_id/g-members', { chunk_id: chunks[2].id })).status).toBe(204);
    // Adding again is harmless.
    expect((await ds.post(`/api/chunk_group/chunk/${group.id}`, { chunk_id: chunks[0].id })).status).toBe(204);
    expect(await members(group.id)).toEqual(chunks.map((c) => c.id).sort());
  });

  it('removes chunks by id and by tracking id', async () => {
    expect((await ds.del(`/api/chunk_group/chunk/${group.id}`, { chunk_id: chunks[0].id })).status).toBe(204);
    expect((await ds.del(`/api/chunk_group/chunk/${group.id}`, { chunk_tracking_id: 'mem-1' })).status).toBe(204);
    expect(await members(group.id)).toEqual([chunks[2].id]);
    // The chunks themselves remain.
    expect((await ds.get(`/api/chunk/${chunks[0].id}`)).status).toBe(200);
  });

  it('unknown groups or chunks are 404 and change nothing', async () => {
    await expectRejected(stack, () => ds.post(`/api/chunk_group/chunk/${MISSING}`, { chunk_id: chunks[0].id }), 404);
    await expectRejected(stack, () => ds.post(`/api/chunk_group/chunk/${group.id}`, { chunk_id: MISSING }), 404);
    await expectRejected(stack, () => ds.post(`/api/chunk_group/chunk/${group.id}`, { chunk_tracking_id: 'nope' }), 404);
    await expectRejected(stack, () => ds.post('/api/chunk_group/tracking_id/g-nope', { chunk_id: chunks[0].id }), 404);
    await expectRejected(stack, () => ds.del(`/api/chunk_group/chunk/${MISSING}`, { chunk_id: chunks[0].id }), 404);
    await expectRejected(stack, () => ds.del(`/api/chunk_group/chunk/${group.id}`, { chunk_id: MISSING }), 404);
    await expectRejected(stack, () => ds.post(`/api/chunk_group/chunk/${group.id}`, {}), 400, /chunk_id/);
  });

  it('POST /api/chunk_group/chunks lists the groups of chunks by id and tracking id', async () => {
    const g2 = await createGroup({ name: 'second', tracking_id: 'g-second' });
    expect((await ds.post(`/api/chunk_group/chunk/${g2.id}`, { chunk_id: chunks[2].id })).status).toBe(204);
    const res = await ds.post('/api/chunk_group/chunks', { chunk_ids: [chunks[2].id, MISSING], chunk_tracking_ids: ['mem-0'] });
    expect(res.status, res.text).toBe(200);
    const byChunk = Object.fromEntries(res.body.map((e: any) => [e.chunk_uuid, e.slim_groups.map((g: any) => g.id).sort()]));
    expect(byChunk).toEqual({ [chunks[2].id]: [group.id, g2.id].sort(), [chunks[0].id]: [] });
    await expectRejected(stack, () => ds.post('/api/chunk_group/chunks', { chunk_ids: [MISSING] }), 404);
  });
});

describe('pages', () => {
  it("lists a group's chunks 10 per page with total_pages, by id and by tracking id", async () => {
    const g = await createGroup({ name: 'paged', tracking_id: 'g-paged' });
    const chunks = await createChunks(23, 'paged', { group_ids: [g.id] });
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const res = await ds.get(`/api/chunk_group/${g.id}/${page}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.total_pages).toBe(3);
      expect(res.body.group.id).toBe(g.id);
      expect(res.body.chunks).toHaveLength(page === 3 ? 3 : 10);
      seen.push(...res.body.chunks.map((c: any) => c.id));
      const byTid = await ds.get(`/api/chunk_group/tracking_id/g-paged/${page}`);
      expect(byTid.body.chunks.map((c: any) => c.id)).toEqual(res.body.chunks.map((c: any) => c.id));
    }
    expect(new Set(seen).size).toBe(23);
    expect([...seen].sort()).toEqual(chunks.map((c) => c.id).sort());
    const empty = await ds.get(`/api/chunk_group/${g.id}/4`);
    expect(empty.body.chunks).toEqual([]);
    const v1 = await ds.get(`/api/chunk_group/${g.id}/1`, { 'x-api-version': 'V1' });
    expect(v1.status).toBe(200);
    await expectRejected(stack, () => ds.get(`/api/chunk_group/${g.id}/abc`), 400, /page/);
    await expectRejected(stack, () => ds.get(`/api/chunk_group/${MISSING}/1`), 404);
  });

  it("lists the dataset's groups with total_pages", async () => {
    const other = await createTenant(stack);
    const names = Array.from({ length: 12 }, (_, i) => `list ${i}`);
    const created = await other.ds.post('/api/chunk_group', names.map((name) => ({ name })));
    expect(created.status).toBe(200);
    const p1 = await other.ds.get(`/api/dataset/groups/${other.datasetId}/1`);
    const p2 = await other.ds.get(`/api/dataset/groups/${other.datasetId}/2`);
    expect(p1.status, p1.text).toBe(200);
    expect(p1.body.total_pages).toBe(2);
    expect(p1.body.groups).toHaveLength(10);
    expect(p2.body.groups).toHaveLength(2);
    expect([...p1.body.groups, ...p2.body.groups].map((g: any) => g.name).sort()).toEqual([...names].sort());
  });
});

describe('delete', () => {
  it('without delete_chunks removes the group and keeps its chunks', async () => {
    const g = await createGroup({ name: 'del-keep', tracking_id: 'g-del-keep' });
    const chunks = await createChunks(2, 'keepme', { group_ids: [g.id] });
    expect((await ds.del(`/api/chunk_group/${g.id}`)).status).toBe(204);
    await expectRejected(stack, () => ds.get(`/api/chunk_group/${g.id}`), 404);
    for (const c of chunks) expect((await ds.get(`/api/chunk/${c.id}`)).status).toBe(200);
    expect(await members(g.id)).toEqual([]);
  });

  it('with delete_chunks=true removes the group and its chunks', async () => {
    const g = await createGroup({ name: 'del-all', tracking_id: 'g-del-all' });
    const chunks = await createChunks(2, 'dropme', { group_ids: [g.id] });
    const bystander = (await createChunks(1, 'bystander'))[0];
    expect((await ds.del(`/api/chunk_group/${g.id}?delete_chunks=true`)).status).toBe(204);
    for (const c of chunks) await expectRejected(stack, () => ds.get(`/api/chunk/${c.id}`), 404);
    expect((await ds.get(`/api/chunk/${bystander.id}`)).status).toBe(200);
  });

  it('by tracking id, with and without delete_chunks', async () => {
    const g = await createGroup({ name: 'del-tid', tracking_id: 'g-del-tid' });
    const [c] = await createChunks(1, 'tidchunk', { group_ids: [g.id] });
    expect((await ds.del('/api/chunk_group/tracking_id/g-del-tid?delete_chunks=true')).status).toBe(204);
    await expectRejected(stack, () => ds.get('/api/chunk_group/tracking_id/g-del-tid'), 404);
    await expectRejected(stack, () => ds.get(`/api/chunk/${c.id}`), 404);
    const g2 = await createGroup({ name: 'del-tid2', tracking_id: 'g-del-tid2' });
    const [c2] = await createChunks(1, 'tidchunk2', { group_ids: [g2.id] });
    expect((await ds.del('/api/chunk_group/tracking_id/g-del-tid2')).status).toBe(204);
    expect((await ds.get(`/api/chunk/${c2.id}`)).status).toBe(200);
  });

  it('unknown groups are 404; a bad delete_chunks value is 400', async () => {
    await expectRejected(stack, () => ds.del(`/api/chunk_group/${MISSING}`), 404);
    await expectRejected(stack, () => ds.del('/api/chunk_group/tracking_id/never'), 404);
    const g = await createGroup({ name: 'flag' });
    await expectRejected(stack, () => ds.del(`/api/chunk_group/${g.id}?delete_chunks=maybe`), 400, /delete_chunks/);
  });

  it("groups of another dataset are invisible (404) and untouched", async () => {
    const other = await createTenant(stack);
    const g = await createGroup({ name: 'mine' });
    await expectRejected(stack, () => other.ds.get(`/api/chunk_group/${g.id}`), 404);
    await expectRejected(stack, () => other.ds.del(`/api/chunk_group/${g.id}`), 404);
    await expectRejected(stack, () => other.ds.put('/api/chunk_group', { group_id: g.id, name: 'stolen' }), 404);
  });
});
