/**
 * Chunk create / update / read / delete against the real stack. Oracles: the API's own reads and
 * the SQLite file (every refused request leaves every row of every table unchanged).
 */
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

const chunkCount = (): Promise<number> => countRows(stack, 'chunks', 'dataset_id = ?', t.datasetId);

async function create(body: unknown): Promise<any> {
  const res = await ds.post('/api/chunk', body);
  expect(res.status, res.text).toBe(200);
  return res.body.chunk_metadata;
}

async function get(id: string): Promise<any> {
  const res = await ds.get(`/api/chunk/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const FULL = {
  chunk_html: '<p>Hello <b>world</b></p>',
  link: 'https://example.com/a',
  metadata: { a: 1, nested: { list: [1, 'two', null, { deep: true }] } },
  tag_set: ['x', 'y'],
  time_stamp: '2024-01-31T10:00:00Z',
  weight: 1.5,
  image_urls: ['https://example.com/i.png'],
  location: { lat: 52.5, lon: 13.4 },
  num_value: 42.25,
  semantic_content: 'semantic text',
  fulltext_content: 'fulltext text',
};

describe('create', () => {
  it('a single payload returns chunk_metadata as an object with the stored fields', async () => {
    const m = await create({ ...FULL, tracking_id: 'single-1' });
    expect(Array.isArray(m)).toBe(false);
    expect(m).toMatchObject({
      tracking_id: 'single-1',
      chunk_html: FULL.chunk_html,
      content: 'Hello world',
      link: FULL.link,
      metadata: FULL.metadata,
      tag_set: FULL.tag_set,
      time_stamp: '2024-01-31 10:00:00.000',
      weight: 1.5,
      image_urls: FULL.image_urls,
      location: FULL.location,
      num_value: 42.25,
      dataset_id: t.datasetId,
    });
    expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await get(m.id);
    const { content: _content, ...withoutContent } = m;
    expect(stored).toEqual(withoutContent);
    const row = await queryStore(stack, 'SELECT semantic_content, fulltext_content FROM chunks WHERE id = ?', m.id);
    expect(row).toEqual([{ semantic_content: 'semantic text', fulltext_content: 'fulltext text' }]);
  });

  it('a batch returns chunk_metadata as an array in request order', async () => {
    const m = await create([{ chunk_html: 'b1', tracking_id: 'batch-1' }, { chunk_html: 'b2' }, { chunk_html: 'b3', tracking_id: 'batch-3' }]);
    expect(Array.isArray(m)).toBe(true);
    expect(m.map((c: any) => c.chunk_html)).toEqual(['b1', 'b2', 'b3']);
    expect(m.map((c: any) => c.tracking_id)).toEqual(['batch-1', null, 'batch-3']);
    for (const c of m) expect((await get(c.id)).chunk_html).toBe(c.chunk_html);
  });

  it('accepts exactly 120 chunks; 121 is 413 and stores nothing', async () => {
    const before = await chunkCount();
    const ok = await create(Array.from({ length: 120 }, (_, i) => ({ chunk_html: `bulk ${i}`, tracking_id: `bulk-${i}` })));
    expect(ok).toHaveLength(120);
    expect(await chunkCount()).toBe(before + 120);
    await expectRejected(
      stack,
      () => ds.post('/api/chunk', Array.from({ length: 121 }, (_, i) => ({ chunk_html: `over ${i}`, tracking_id: `over-${i}` }))),
      413,
      /120/,
    );
    expect(await countRows(stack, 'chunks', "tracking_id LIKE 'over-%'")).toBe(0);
  });

  it('a tracking_id repeated within a batch is 400 and stores nothing', async () => {
    await expectRejected(
      stack,
      () => ds.post('/api/chunk', [{ chunk_html: 'd1', tracking_id: 'dup-new' }, { chunk_html: 'fresh', tracking_id: 'fresh-1' }, { chunk_html: 'd2', tracking_id: 'dup-new' }]),
      400,
      /dup-new/,
    );
  });

  it('an existing tracking_id is 400 naming it and stores nothing of the batch', async () => {
    await create({ chunk_html: 'original', tracking_id: 'exists-1' });
    const res = await expectRejected(
      stack,
      () =>
        ds.post('/api/chunk', [
          { chunk_html: 'new A', tracking_id: 'new-a', group_tracking_ids: ['would-be-created'] },
          { chunk_html: 'clash', tracking_id: 'exists-1' },
          { chunk_html: 'new B' },
        ]),
      400,
      /exists-1/,
    );
    expect(res.body.message).toMatch(/exists-1/);
    expect((await ds.get('/api/chunk/tracking_id/exists-1')).body.chunk_html).toBe('original');
    expect(await countRows(stack, 'chunk_groups', 'tracking_id = ?', 'would-be-created')).toBe(0);
    await expectRejected(stack, () => ds.post('/api/chunk', { chunk_html: 'again', tracking_id: 'exists-1' }), 400, /exists-1/);
  });

  it('upsert_by_tracking_id replaces the stored chunk (same id, new content)', async () => {
    const first = await create({ chunk_html: 'v1', tracking_id: 'up-1', metadata: { old: true }, tag_set: ['old'], num_value: 1 });
    const second = await create({ chunk_html: 'v2', tracking_id: 'up-1', metadata: { new: true }, upsert_by_tracking_id: true });
    expect(second.id).toBe(first.id);
    const stored = await get(first.id);
    expect(stored.chunk_html).toBe('v2');
    expect(stored.metadata).toEqual({ new: true });
    expect(stored.tag_set).toEqual([]);
    expect(stored.num_value).toBeNull();
    expect(await countRows(stack, 'chunks', 'tracking_id = ?', 'up-1')).toBe(1);
    // Upsert of an unknown tracking id creates.
    const created = await create({ chunk_html: 'v1', tracking_id: 'up-new', upsert_by_tracking_id: true });
    expect((await get(created.id)).tracking_id).toBe('up-new');
  });

  it('an empty tracking_id is treated as none', async () => {
    const m = await create([{ chunk_html: 'e1', tracking_id: '' }, { chunk_html: 'e2', tracking_id: '' }]);
    expect(m.map((c: any) => c.tracking_id)).toEqual([null, null]);
    for (const c of m) expect((await get(c.id)).tracking_id).toBeNull();
    expect(await countRows(stack, 'chunks', "tracking_id = ''")).toBe(0);
  });

  it('group_tracking_ids that do not exist create the groups and join them', async () => {
    const m = await create({ chunk_html: 'grouped', tracking_id: 'grp-chunk', group_tracking_ids: ['auto-g1', 'auto-g2'] });
    const groups = await queryStore<{ id: string; tracking_id: string }>(
      stack,
      "SELECT id, tracking_id FROM chunk_groups WHERE dataset_id = ? AND tracking_id IN ('auto-g1', 'auto-g2') ORDER BY tracking_id",
      t.datasetId,
    );
    expect(groups.map((g) => g.tracking_id)).toEqual(['auto-g1', 'auto-g2']);
    const members = await queryStore<{ group_id: string }>(stack, 'SELECT group_id FROM chunk_group_members WHERE chunk_id = ? ORDER BY group_id', m.id);
    expect(members.map((r) => r.group_id)).toEqual(groups.map((g) => g.id).sort());
    // A second chunk naming an existing group joins it rather than creating another.
    const m2 = await create({ chunk_html: 'grouped 2', group_tracking_ids: ['auto-g1'] });
    expect(await countRows(stack, 'chunk_groups', 'tracking_id = ?', 'auto-g1')).toBe(1);
    expect(await countRows(stack, 'chunk_group_members', 'chunk_id = ? AND group_id = ?', m2.id, groups[0]!.id)).toBe(1);
  });

  it('unknown group_ids are 404 and store nothing', async () => {
    await expectRejected(
      stack,
      () => ds.post('/api/chunk', [{ chunk_html: 'ok', tracking_id: 'gid-ok' }, { chunk_html: 'bad', group_ids: [MISSING] }]),
      404,
      new RegExp(MISSING),
    );
  });
});

describe('timestamps, locations, metadata', () => {
  it.each([
    ['2024-01-31T10:00:00Z', '2024-01-31 10:00:00.000'],
    ['2024-01-31 10:00:00', '2024-01-31 10:00:00.000'],
    ['2024-01-31T10:00:00', '2024-01-31 10:00:00.000'],
    ['2024-01-31', '2024-01-31 00:00:00.000'],
    ['2024-01-31T12:30:00+02:30', '2024-01-31 10:00:00.000'],
    ['2024-01-31T05:00:00-05:00', '2024-01-31 10:00:00.000'],
    ['2024-01-31 10:00:00.123456', '2024-01-31 10:00:00.123'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29 23:59:59.999'],
  ])('time_stamp %s is stored and returned as %s', async (input, output) => {
    const m = await create({ chunk_html: 'ts', time_stamp: input });
    expect(m.time_stamp).toBe(output);
    expect((await get(m.id)).time_stamp).toBe(output);
    expect((await get(m.id)).created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });

  it.each(['yesterday', '2024-13-01', '2024-02-30', '2023-02-29', '31/01/2024', '2024-01-31T25:00:00', ''])('invalid time_stamp %j is 400', async (bad) => {
    await expectRejected(stack, () => ds.post('/api/chunk', { chunk_html: 'bad ts', time_stamp: bad }), 400, /time_stamp/);
  });

  it('accepts locations at the edges and refuses out-of-range or incomplete ones', async () => {
    for (const location of [{ lat: 90, lon: 180 }, { lat: -90, lon: -180 }, { lat: 0, lon: 0 }]) {
      const m = await create({ chunk_html: 'loc', location });
      expect((await get(m.id)).location).toEqual(location);
    }
    for (const location of [{ lat: 90.01, lon: 0 }, { lat: 0, lon: -180.5 }, { lat: 10 }, { lat: '1', lon: 2 }, [1, 2]]) {
      await expectRejected(stack, () => ds.post('/api/chunk', { chunk_html: 'bad loc', location }), 400, /location/);
    }
  });

  it('round-trips nested and unicode metadata exactly', async () => {
    const metadata = {
      'ключ': 'значение',
      emoji: '🦀 and 👩🏽‍💻',
      cjk: '日本語のテキスト',
      nested: { deeper: { deepest: [1, 2.5, -3e-7, true, false, null, { '': '' }] } },
      quote: 'he said "hi" \\ and \n newline',
      big: 9007199254740991,
    };
    const m = await create({ chunk_html: 'Ünïcödé <i>html</i> ✓', metadata });
    const stored = await get(m.id);
    expect(stored.metadata).toEqual(metadata);
    expect(stored.chunk_html).toBe('Ünïcödé <i>html</i> ✓');
    expect(m.content).toBe('Ünïcödé html ✓');
    // Non-object metadata values round-trip as well.
    for (const value of ['plain string', 12, [1, 2]]) {
      const c = await create({ chunk_html: 'm', metadata: value });
      expect((await get(c.id)).metadata).toEqual(value);
    }
  });
});

describe('update', () => {
  const FIELDS: [string, unknown][] = [
    ['chunk_html', '<p>changed</p>'],
    ['link', 'https://example.com/changed'],
    ['metadata', { changed: ['yes'] }],
    ['tag_set', ['changed']],
    ['time_stamp', '2020-05-05 05:05:05'],
    ['weight', 3.25],
    ['image_urls', ['https://example.com/changed.png']],
    ['location', { lat: -1.5, lon: 2.5 }],
    ['num_value', -7],
  ];
  const wire = (field: string, value: unknown) => (field === 'time_stamp' ? '2020-05-05 05:05:05.000' : value);

  it.each(FIELDS)('changing only %s keeps every other field (API and stored row)', async (field, value) => {
    const m = await create({ ...FULL, tracking_id: `upd-${field}`, convert_html_to_text: false });
    const before = await get(m.id);
    const rowBefore = (await queryStore(stack, 'SELECT * FROM chunks WHERE id = ?', m.id))[0] as Record<string, unknown>;
    const res = await ds.put('/api/chunk', { chunk_id: m.id, [field]: value });
    expect(res.status, res.text).toBe(204);
    const after = await get(m.id);
    expect(after[field]).toEqual(wire(field, value));
    for (const key of Object.keys(before)) {
      if (key === field || key === 'updated_at') continue;
      expect(after[key], key).toEqual(before[key]);
    }
    const rowAfter = (await queryStore(stack, 'SELECT * FROM chunks WHERE id = ?', m.id))[0] as Record<string, unknown>;
    const columnsOf: Record<string, string[]> = { location: ['lat', 'lon'] };
    const changed = new Set([...(columnsOf[field] ?? [field]), 'updated_at']);
    for (const col of Object.keys(rowBefore)) if (!changed.has(col)) expect(rowAfter[col], col).toEqual(rowBefore[col]);
    expect(rowAfter.semantic_content).toBe('semantic text');
    expect(rowAfter.convert_html_to_text).toBe(0);
  });

  it('identifies by tracking_id alone', async () => {
    const m = await create({ chunk_html: 'by tid', tracking_id: 'upd-by-tid', num_value: 1 });
    expect((await ds.put('/api/chunk', { tracking_id: 'upd-by-tid', chunk_html: 'changed by tid' })).status).toBe(204);
    const after = await get(m.id);
    expect(after.chunk_html).toBe('changed by tid');
    expect(after.num_value).toBe(1);
  });

  it('chunk_id wins over tracking_id, which becomes the new tracking id', async () => {
    const a = await create({ chunk_html: 'A', tracking_id: 'win-a' });
    const b = await create({ chunk_html: 'B', tracking_id: 'win-b' });
    const res = await ds.put('/api/chunk', { chunk_id: a.id, tracking_id: 'win-renamed', chunk_html: 'A2' });
    expect(res.status, res.text).toBe(204);
    expect(await get(a.id)).toMatchObject({ tracking_id: 'win-renamed', chunk_html: 'A2' });
    expect(await get(b.id)).toMatchObject({ tracking_id: 'win-b', chunk_html: 'B' });
    expect((await ds.get('/api/chunk/tracking_id/win-a')).status).toBe(404);
    expect((await ds.get('/api/chunk/tracking_id/win-renamed')).body.id).toBe(a.id);
  });

  it("changing a tracking_id to another chunk's is 400 and changes nothing", async () => {
    const a = await create({ chunk_html: 'A', tracking_id: 'clash-a' });
    await create({ chunk_html: 'B', tracking_id: 'clash-b' });
    await expectRejected(stack, () => ds.put('/api/chunk', { chunk_id: a.id, tracking_id: 'clash-b', chunk_html: 'A2' }), 400, /clash-b/);
  });

  it('unknown chunk_id or tracking_id is 404; neither is 400; all change nothing', async () => {
    await expectRejected(stack, () => ds.put('/api/chunk', { chunk_id: MISSING, chunk_html: 'x' }), 404, new RegExp(MISSING));
    await expectRejected(stack, () => ds.put('/api/chunk', { tracking_id: 'never-was', chunk_html: 'x' }), 404, /never-was/);
    await expectRejected(stack, () => ds.put('/api/chunk', { chunk_html: 'x' }), 400, /chunk_id|tracking_id/);
  });

  it('group_ids on update replace membership; unknown group_ids are 404 and change nothing', async () => {
    const m = await create({ chunk_html: 'member', group_tracking_ids: ['upd-g1'] });
    const g2 = await ds.post('/api/chunk_group', { name: 'g2', tracking_id: 'upd-g2' });
    expect(g2.status, g2.text).toBe(200);
    expect((await ds.put('/api/chunk', { chunk_id: m.id, group_ids: [g2.body.id] })).status).toBe(204);
    expect(await queryStore(stack, 'SELECT group_id FROM chunk_group_members WHERE chunk_id = ?', m.id)).toEqual([{ group_id: g2.body.id }]);
    await expectRejected(stack, () => ds.put('/api/chunk', { chunk_id: m.id, chunk_html: 'no', group_ids: [MISSING] }), 404);
  });

  it('the legacy tracking_id/update route updates by tracking id', async () => {
    const m = await create({ chunk_html: 'legacy', tracking_id: 'legacy-1', link: 'keep' });
    expect((await ds.put('/api/chunk/tracking_id/update', { tracking_id: 'legacy-1', chunk_html: 'legacy 2' })).status).toBe(204);
    expect(await get(m.id)).toMatchObject({ chunk_html: 'legacy 2', link: 'keep' });
    await expectRejected(stack, () => ds.put('/api/chunk/tracking_id/update', { tracking_id: 'nope-legacy', chunk_html: 'x' }), 404);
  });
});

describe('read and delete', () => {
  let ids: string[];
  beforeAll(async () => {
    const m = await create([
      { chunk_html: 'r0', tracking_id: 'read-0' },
      { chunk_html: 'r1', tracking_id: 'read-1' },
      { chunk_html: 'r2', tracking_id: 'read-2' },
    ]);
    ids = m.map((c: any) => c.id);
  });

  it('gets one chunk by id and by tracking id', async () => {
    expect((await get(ids[1]!)).chunk_html).toBe('r1');
    const byTid = await ds.get('/api/chunk/tracking_id/read-1');
    expect(byTid.status).toBe(200);
    expect(byTid.body.id).toBe(ids[1]);
    await expectRejected(stack, () => ds.get(`/api/chunk/${MISSING}`), 404);
    await expectRejected(stack, () => ds.get('/api/chunk/tracking_id/missing-tid'), 404);
    await expectRejected(stack, () => ds.get('/api/chunk/not-a-uuid'), 400, /chunk_id/);
  });

  it('POST /api/chunks keeps the order asked and drops unknown ids; all unknown is 404', async () => {
    const res = await ds.post('/api/chunks', { ids: [ids[2], MISSING, ids[0], ids[1]] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((c: any) => c.chunk_html)).toEqual(['r2', 'r0', 'r1']);
    await expectRejected(stack, () => ds.post('/api/chunks', { ids: [MISSING] }), 404);
    await expectRejected(stack, () => ds.post('/api/chunks', { ids: ['nope'] }), 400, /ids/);
  });

  it('POST /api/chunks/tracking keeps the order asked and drops unknown ids; all unknown is 404', async () => {
    const res = await ds.post('/api/chunks/tracking', { tracking_ids: ['read-1', 'absent', 'read-2', 'read-0'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((c: any) => c.tracking_id)).toEqual(['read-1', 'read-2', 'read-0']);
    await expectRejected(stack, () => ds.post('/api/chunks/tracking', { tracking_ids: ['absent'] }), 404);
  });

  it('chunks of another dataset are invisible', async () => {
    const other = await createTenant(stack);
    await expectRejected(stack, () => other.ds.get(`/api/chunk/${ids[0]}`), 404);
    await expectRejected(stack, () => other.ds.post('/api/chunks', { ids }), 404);
    await expectRejected(stack, () => other.ds.del(`/api/chunk/${ids[0]}`), 404);
  });

  it('deletes by id and by tracking id; then both are 404', async () => {
    expect((await ds.del(`/api/chunk/${ids[0]}`)).status).toBe(204);
    expect((await ds.del('/api/chunk/tracking_id/read-1')).status).toBe(204);
    await expectRejected(stack, () => ds.get(`/api/chunk/${ids[0]}`), 404);
    await expectRejected(stack, () => ds.get(`/api/chunk/${ids[1]}`), 404);
    await expectRejected(stack, () => ds.del(`/api/chunk/${ids[0]}`), 404);
    await expectRejected(stack, () => ds.del('/api/chunk/tracking_id/read-1'), 404);
    expect(await countRows(stack, 'chunks', 'id IN (?, ?)', ids[0], ids[1])).toBe(0);
    expect((await get(ids[2]!)).chunk_html).toBe('r2');
    // The tracking id is free again.
    expect((await create({ chunk_html: 'reborn', tracking_id: 'read-1' })).tracking_id).toBe('read-1');
  });
});
