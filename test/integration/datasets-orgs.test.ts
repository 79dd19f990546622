/**
 * Datasets, organizations and users against the real stack, including the asynchronous purge of
 * a deleted organization by the job worker (oracle: the SQLite file).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../core/domain/limits.js';
import { client, request, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, unique, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows, expectRejected, queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let t: Tenant;
const MISSING = '00000000-0000-4000-8000-000000000000';
const as = (key: string, headers: Record<string, string> = {}): Client => client(stack.baseUrl, { authorization: key, ...headers });

/** Polls until `check` is true (the job worker purges asynchronously). */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stack.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  stack = await startStack();
  t = await createTenant(stack);
});
afterAll(async () => {
  await stack?.stop();
});

describe('datasets', () => {
  it('creates, gets, updates and deletes a dataset; a deleted dataset is 404 at once and purged later', async () => {
    const created = await t.org.post('/api/dataset', {
      dataset_name: 'My DS',
      tracking_id: 'ds-life',
      server_configuration: { BM25_K: 1.1, CUSTOM_KEY: 'kept', LLM_API_KEY: 'secret' },
    });
    expect(created.status, created.text).toBe(200);
    const d = created.body;
    expect(d).toMatchObject({ name: 'My DS', tracking_id: 'ds-life', organization_id: t.orgId, deleted: 0 });
    expect(d.server_configuration).toMatchObject({ BM25_K: 1.1, CUSTOM_KEY: 'kept', BM25_B: 0.4, MAX_LIMIT: 10000 });
    expect(d.server_configuration.LLM_API_KEY).toBeUndefined();

    const c = as(t.ownerKey, { 'tr-organization': t.orgId });
    expect((await c.get(`/api/dataset/${d.id}`)).body).toEqual(d);
    expect((await c.get('/api/dataset/tracking_id/ds-life')).body.id).toBe(d.id);

    const upd = await c.put('/api/dataset', { dataset_id: d.id, dataset_name: 'Renamed', server_configuration: { BM25_B: 0.7 }, new_tracking_id: 'ds-life-2' });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body).toMatchObject({ id: d.id, name: 'Renamed', tracking_id: 'ds-life-2' });
    expect(upd.body.server_configuration).toMatchObject({ BM25_B: 0.7, BM25_K: 1.1, CUSTOM_KEY: 'kept' });
    const byTid = await c.put('/api/dataset', { tracking_id: 'ds-life-2', dataset_name: 'Renamed again' });
    expect(byTid.status, byTid.text).toBe(200);
    expect(byTid.body.name).toBe('Renamed again');
    expect(byTid.body.tracking_id).toBe('ds-life-2');

    expect((await as(t.ownerKey, { 'tr-dataset': d.id }).post('/api/chunk', { chunk_html: 'doomed' })).status).toBe(200);
    expect((await c.del(`/api/dataset/${d.id}`)).status).toBe(204);
    // Gone at once (the purge job may be running, so no unchanged-store oracle until it is done).
    expect((await c.get(`/api/dataset/${d.id}`)).status).toBe(404);
    expect((await as(t.ownerKey, { 'tr-dataset': d.id }).post('/api/chunk', { chunk_html: 'late' })).status).toBe(404);
    expect((await c.get('/api/dataset/tracking_id/ds-life-2')).status).toBe(404);
    await eventually(async () => (await countRows(stack, 'datasets', 'id = ?', d.id)) === 0, 'the dataset purge');
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', d.id)).toBe(0);
    await expectRejected(stack, () => c.get(`/api/dataset/${d.id}`), 404);
    await expectRejected(stack, () => as(t.ownerKey, { 'tr-dataset': d.id }).post('/api/chunk', { chunk_html: 'late' }), 404);
    await expectRejected(stack, () => c.get('/api/dataset/tracking_id/ds-life-2'), 404);
    // Its tracking id is free again.
    expect((await c.post('/api/dataset', { dataset_name: 'again', tracking_id: 'ds-life-2' })).status).toBe(200);
  });

  it('deletes a dataset by tracking id', async () => {
    const id = await createDataset(stack, t.orgId, t.ownerKey, { tracking_id: 'ds-del-tid' });
    expect((await t.org.del('/api/dataset/tracking_id/ds-del-tid')).status).toBe(204);
    expect((await t.org.get(`/api/dataset/${id}`)).status).toBe(404);
    await eventually(async () => (await countRows(stack, 'datasets', 'id = ?', id)) === 0, 'the dataset purge');
    await expectRejected(stack, () => t.org.get(`/api/dataset/${id}`), 404);
  });

  it('a duplicate dataset tracking_id is 400 (create and update) and stores nothing', async () => {
    await createDataset(stack, t.orgId, t.ownerKey, { tracking_id: 'ds-dup' });
    const second = await createDataset(stack, t.orgId, t.ownerKey, { tracking_id: 'ds-dup-other' });
    await expectRejected(stack, () => t.org.post('/api/dataset', { dataset_name: 'x', tracking_id: 'ds-dup' }), 400, /ds-dup/);
    await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_id: second, new_tracking_id: 'ds-dup' }), 400, /ds-dup/);
    // The same tracking id in another organization is fine.
    const other = await createTenant(stack);
    expect((await other.org.post('/api/dataset', { dataset_name: 'x', tracking_id: 'ds-dup' })).status).toBe(200);
  });

  it('refuses bad dataset bodies and unknown datasets', async () => {
    await expectRejected(stack, () => t.org.post('/api/dataset', {}), 400, /dataset_name/);
    await expectRejected(stack, () => t.org.post('/api/dataset', { dataset_name: '   ' }), 400, /dataset_name/);
    await expectRejected(stack, () => t.org.post('/api/dataset', { dataset_name: 'x', server_configuration: { BM25_K: 'big' } }), 400, /BM25_K/);
    await expectRejected(stack, () => t.org.post('/api/dataset', { dataset_name: 'x', server_configuration: { DISTANCE_METRIC: 'hamming' } }), 400, /DISTANCE_METRIC/);
    await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_name: 'x' }), 400, /dataset_id|tracking_id/);
    await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_id: MISSING, dataset_name: 'x' }), 404);
    await expectRejected(stack, () => t.org.get(`/api/dataset/${MISSING}`), 404);
    await expectRejected(stack, () => t.org.del(`/api/dataset/${MISSING}`), 404);
    await expectRejected(stack, () => t.org.get('/api/dataset/not-a-uuid'), 400, /dataset_id/);
  });

  it('lists the datasets of an organization with chunk counts, usage and tags', async () => {
    const tenant = await createTenant(stack);
    const second = await createDataset(stack, tenant.orgId, tenant.ownerKey);
    const chunks = [
      { chunk_html: '1', tag_set: ['red', 'blue'] },
      { chunk_html: '2', tag_set: ['red'] },
      { chunk_html: '3', tag_set: ['red', 'green'] },
    ];
    expect((await tenant.ds.post('/api/chunk', chunks)).status).toBe(200);
    const list = await tenant.org.get(`/api/dataset/organization/${tenant.orgId}`);
    expect(list.status, list.text).toBe(200);
    const counts = Object.fromEntries(list.body.map((e: any) => [e.dataset.id, e.dataset_usage.chunk_count]));
    expect(counts).toEqual({ [tenant.datasetId]: 3, [second]: 0 });
    for (const e of list.body) expect(e.dataset_usage.dataset_id).toBe(e.dataset.id);
    const paged = await tenant.org.get(`/api/dataset/organization/${tenant.orgId}?limit=1&offset=1`);
    expect(paged.body).toHaveLength(1);
    expect(paged.body[0].dataset.id).toBe(list.body[1].dataset.id);

    const usage = await tenant.ds.get(`/api/dataset/usage/${tenant.datasetId}`);
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body).toMatchObject({ dataset_id: tenant.datasetId, chunk_count: 3 });

    const tags = await tenant.ds.post('/api/dataset/get_all_tags', {});
    expect(tags.status, tags.text).toBe(200);
    expect(tags.body.total).toBe(3);
    expect(tags.body.tags[0]).toEqual({ tag: 'red', count: 3 });
    expect(tags.body.tags.slice(1).map((x: any) => x.tag).sort()).toEqual(['blue', 'green']);
    const tagPage = await tenant.ds.post('/api/dataset/get_all_tags', { page: 2, page_size: 2 });
    expect(tagPage.body.tags).toHaveLength(1);

    // Another organization's datasets: 404 as if it did not exist.
    await expectRejected(stack, () => tenant.org.get(`/api/dataset/organization/${t.orgId}`), 404);
    await expectRejected(stack, () => tenant.org.get(`/api/dataset/organization/${tenant.orgId}?limit=-1`), 400, /limit/);
  });

  it('clear removes every chunk and group of the dataset and keeps the dataset', async () => {
    const tenant = await createTenant(stack);
    const keep = await createDataset(stack, tenant.orgId, tenant.ownerKey);
    expect((await tenant.ds.post('/api/chunk', [{ chunk_html: 'a', group_tracking_ids: ['g'] }, { chunk_html: 'b' }])).status).toBe(200);
    expect((await as(tenant.ownerKey, { 'tr-dataset': keep }).post('/api/chunk', { chunk_html: 'other ds' })).status).toBe(200);
    const res = await tenant.ds.put(`/api/dataset/clear/${tenant.datasetId}`);
    expect(res.status, res.text).toBe(204);
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', tenant.datasetId)).toBe(0);
    expect(await countRows(stack, 'chunk_groups', 'dataset_id = ?', tenant.datasetId)).toBe(0);
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', keep)).toBe(1);
    expect((await tenant.ds.get(`/api/dataset/usage/${tenant.datasetId}`)).body.chunk_count).toBe(0);
    expect((await tenant.org.get(`/api/dataset/${tenant.datasetId}`)).status).toBe(200);
  });
});

describe('server_configuration bounds', () => {
  const text = (n: number): string => 'p'.repeat(n);
  /** The dataset's server_configuration as stored (the response redacts keys). */
  const storedConfig = async (id: string): Promise<string> =>
    (await queryStore<{ c: string }>(stack, 'SELECT server_configuration AS c FROM datasets WHERE id = ?', id))[0]!.c;

  it('every string is stored at its cap; one past it is a 400 naming the key and the cap (create and update)', async () => {
    const cases: [string, number][] = [
      ['RAG_PROMPT', LIMITS.configPromptLength],
      ['SYSTEM_PROMPT', LIMITS.configPromptLength],
      ['EMBEDDING_QUERY_PREFIX', LIMITS.configStringLength],
      ['EMBEDDING_MODEL_NAME', LIMITS.configStringLength],
      ['LLM_DEFAULT_MODEL', LIMITS.configStringLength],
      ['EMBEDDING_API_KEY', LIMITS.configStringLength],
      ['LLM_API_KEY', LIMITS.configStringLength],
      ['CUSTOM_SETTING', LIMITS.configStringLength],
      ['LLM_BASE_URL', LIMITS.urlLength],
    ];
    for (const [key, cap] of cases) {
      const ok = await t.org.post('/api/dataset', { dataset_name: `cap ${key}`, server_configuration: { [key]: text(cap) } });
      expect(ok.status, ok.text).toBe(200);
      expect((JSON.parse(await storedConfig(ok.body.id)) as Record<string, string>)[key]).toHaveLength(cap);
      const named = new RegExp(`server_configuration\\.${key}: must be at most ${cap} characters long, got ${cap + 1}`);
      await expectRejected(stack, () => t.org.post('/api/dataset', { dataset_name: 'x', server_configuration: { [key]: text(cap + 1) } }), 400, named);
      await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_id: ok.body.id, server_configuration: { [key]: text(cap + 1) } }), 400, named);
    }
    const keyOk = await t.org.post('/api/dataset', { dataset_name: 'long key', server_configuration: { [text(LIMITS.configStringLength)]: 1 } });
    expect(keyOk.status, keyOk.text).toBe(200);
    await expectRejected(
      stack,
      () => t.org.post('/api/dataset', { dataset_name: 'x', server_configuration: { [text(LIMITS.configStringLength + 1)]: 1 } }),
      400,
      new RegExp(`server_configuration: keys must be at most ${LIMITS.configStringLength} characters`),
    );
  });

  it(`the whole configuration as stored is capped at ${LIMITS.configBytes} bytes, updates merged in`, async () => {
    const created = await t.org.post('/api/dataset', { dataset_name: 'big config', server_configuration: {} });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const put = async (config: Record<string, string>) => {
      const res = await t.org.put('/api/dataset', { dataset_id: id, server_configuration: config });
      expect(res.status, res.text).toBe(200);
    };
    // Each update is small (under the body limit); together they would grow the stored object without end.
    const entry = (k: number) => [`K${String(k).padStart(4, '0')}`, text(1000)] as const; // ,"K0000":"<1000>" = 1011 bytes
    const room = async () => LIMITS.configBytes - Buffer.byteLength(await storedConfig(id));
    let k = 0;
    while ((await room()) - 20 * 1011 >= 500) await put(Object.fromEntries(Array.from({ length: 20 }, () => entry(k++))));
    while ((await room()) - 1011 >= 500) await put(Object.fromEntries([entry(k++)]));
    // Exactly to the cap with two more keys (,"PADi":"<v>" = 10 + v bytes).
    const left = await room();
    const v0 = Math.min(1000, left - 30);
    const v1 = left - 10 - v0 - 10;
    await put({ PAD0: text(v0), PAD1: text(v1) });
    expect(Buffer.byteLength(await storedConfig(id))).toBe(LIMITS.configBytes);
    await expectRejected(
      stack,
      () => t.org.put('/api/dataset', { dataset_id: id, server_configuration: { PAD1: text(v1 + 1) } }),
      400,
      new RegExp(`server_configuration: must be at most ${LIMITS.configBytes} bytes as JSON`),
    );
    // Making room is allowed: a key set to a shorter value.
    await put({ PAD1: '' });
  });
});

describe('organizations', () => {
  it('GET returns the organization; only an owner may update it', async () => {
    const got = await t.org.get(`/api/organization/${t.orgId}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ id: t.orgId, registerable: true, deleted: false, partner_configuration: {} });
    const upd = await t.org.put('/api/organization', { name: 'New Name', partner_configuration: { COMPANY_NAME: 'ACME', DEMO_DOMAIN: 'acme.test' } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body).toMatchObject({ id: t.orgId, name: 'New Name', partner_configuration: { COMPANY_NAME: 'ACME', DEMO_DOMAIN: 'acme.test' } });
    // Absent fields are kept.
    const name = await t.org.put('/api/organization', { name: 'Newer' });
    expect(name.body.partner_configuration).toEqual({ COMPANY_NAME: 'ACME', DEMO_DOMAIN: 'acme.test' });
    expect((await t.org.get(`/api/organization/${t.orgId}`)).body.name).toBe('Newer');

    const admin = await createKey(stack, t.orgId, { role: 1 });
    const read = await createKey(stack, t.orgId, { role: 0 });
    for (const key of [admin, read]) {
      await expectRejected(stack, () => as(key, { 'tr-organization': t.orgId }).put('/api/organization', { name: 'Nope' }), 403);
    }
    expect((await as(read, { 'tr-organization': t.orgId }).get(`/api/organization/${t.orgId}`)).status).toBe(200);
    await expectRejected(stack, () => t.org.put('/api/organization', { name: 17 }), 400, /name/);
    await expectRejected(stack, () => t.org.put('/api/organization', { partner_configuration: 'x' }), 400, /partner_configuration/);
    await expectRejected(stack, () => t.org.get(`/api/organization/${MISSING}`), 404);
  });

  it('the deletion flag stops the keys at once and the job worker purges every row', async () => {
    const tenant = await createTenant(stack);
    const readKey = await createKey(stack, tenant.orgId, { role: 0 });
    const created = await tenant.ds.post('/api/chunk', [{ chunk_html: 'gone', group_tracking_ids: ['gg'] }, { chunk_html: 'gone too' }]);
    expect(created.status).toBe(200);
    // Stands for the dataset's index snapshots, which the purge must remove with the rows.
    const indexDir = path.join(stack.dataDir, 'index', tenant.datasetId, 'snapshots');
    fs.mkdirSync(indexDir, { recursive: true });
    const res = await tenant.org.put('/api/organization', { deleted: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.deleted).toBe(true);
    for (const key of [tenant.ownerKey, readKey]) {
      expect((await as(key, { 'tr-dataset': tenant.datasetId }).get(`/api/chunk/${created.body.chunk_metadata[0].id}`)).status).toBe(401);
      expect((await as(key, { 'tr-organization': tenant.orgId }).get(`/api/organization/${tenant.orgId}`)).status).toBe(401);
    }
    // Even the operator key no longer sees it.
    expect((await as(stack.adminKey, { 'tr-organization': tenant.orgId }).get(`/api/organization/${tenant.orgId}`)).status).toBe(404);
    expect((await as(stack.adminKey, { 'tr-dataset': tenant.datasetId }).get(`/api/chunk/${created.body.chunk_metadata[0].id}`)).status).toBe(404);
    // The job removes the index files first, then the rows in slices, the organization's row last
    // (workers/jobs/maintenance.ts): once that row is gone, so are the files.
    await eventually(async () => (await countRows(stack, 'organizations', 'id = ?', tenant.orgId)) === 0, 'the organization purge');
    expect(await countRows(stack, 'datasets', 'organization_id = ?', tenant.orgId)).toBe(0);
    expect(await countRows(stack, 'api_keys', 'organization_id = ?', tenant.orgId)).toBe(0);
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', tenant.datasetId)).toBe(0);
    expect(await countRows(stack, 'chunk_groups', 'dataset_id = ?', tenant.datasetId)).toBe(0);
    expect(await countRows(stack, 'change_log', 'dataset_id = ?', tenant.datasetId)).toBe(0);
    expect(fs.existsSync(path.join(stack.dataDir, 'index', tenant.datasetId))).toBe(false);
    // The other organization is untouched.
    expect((await t.org.get(`/api/organization/${t.orgId}`)).status).toBe(200);
  });

  it('DELETE /api/organization/{id} does the same; non-owners get 403', async () => {
    const tenant = await createTenant(stack);
    const admin = await createKey(stack, tenant.orgId, { role: 1 });
    await expectRejected(stack, () => as(admin, { 'tr-organization': tenant.orgId }).del(`/api/organization/${tenant.orgId}`), 403);
    expect((await tenant.org.del(`/api/organization/${tenant.orgId}`)).status).toBe(204);
    expect((await tenant.ds.get(`/api/dataset/usage/${tenant.datasetId}`)).status).toBe(401);
    await eventually(async () => (await countRows(stack, 'organizations', 'id = ?', tenant.orgId)) === 0, 'the organization purge');
  });
});

describe('users', () => {
  it('create_api_only_user with ADMIN_API_KEY makes a user, an organization and a working owner key', async () => {
    const email = `${unique('api')}@Example.com`;
    const res = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: email, user_name: 'Api User' });
    expect(res.status, res.text).toBe(200);
    const { api_key, organization_id, user } = res.body;
    expect(api_key).toMatch(/^tr-[A-Za-z0-9]{32}$/);
    expect(user).toMatchObject({ email: email.toLowerCase(), name: 'Api User' });
    expect(user.user_orgs).toEqual([expect.objectContaining({ organization_id, role: 2, user_id: user.id })]);
    expect(user.orgs.map((o: any) => o.id)).toEqual([organization_id]);
    // The key is an owner key: it can create a dataset and write chunks.
    const ds = await createDataset(stack, organization_id, api_key);
    expect((await as(api_key, { 'tr-dataset': ds }).post('/api/chunk', { chunk_html: 'mine' })).status).toBe(200);
    const keyRows = await queryStore(stack, 'SELECT role, user_id FROM api_keys WHERE organization_id = ?', organization_id);
    expect(keyRows).toEqual([{ role: 2, user_id: user.id }]);
    // The same email again: same user, a second organization.
    const again = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: email, user_name: 'Api User' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.user.id).toBe(user.id);
    expect(again.body.organization_id).not.toBe(organization_id);
  });

  it('create_api_only_user without ADMIN_API_KEY is 401 and stores nothing', async () => {
    const body = { user_email: `${unique('nope')}@example.com`, user_name: 'N' };
    await expectRejected(stack, () => request(stack.baseUrl, 'POST', '/api/auth/create_api_only_user', { body }), 401);
    await expectRejected(stack, () => as(t.ownerKey).post('/api/auth/create_api_only_user', body), 401);
    await expectRejected(stack, () => as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: 'not-an-email', user_name: 'N' }), 400, /user_email/);
  });

  it('GET /api/auth/me describes the caller', async () => {
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: `${unique('me')}@example.com`, user_name: 'Me' });
    const me = await as(created.body.api_key).get('/api/auth/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ id: created.body.user.id, name: 'Me', email: created.body.user.email });
    expect(me.body.orgs.map((o: any) => o.id)).toEqual([created.body.organization_id]);
    // A key without a user is described as a member of its organization with the key's role.
    const keyMe = await as(t.ownerKey).get('/api/auth/me');
    expect(keyMe.status, keyMe.text).toBe(200);
    expect(keyMe.body.user_orgs).toEqual([expect.objectContaining({ organization_id: t.orgId, role: 2 })]);
    expect((await request(stack.baseUrl, 'GET', '/api/auth/me')).status).toBe(401);
  });

  it('PUT /api/user changes roles and scopes, never above the caller', async () => {
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: `${unique('role')}@example.com`, user_name: 'R' });
    const orgId = created.body.organization_id as string;
    const userId = created.body.user.id as string;
    const owner = as(created.body.api_key, { 'tr-organization': orgId });
    const membership = async () => (await queryStore<{ role: number; scopes: string | null }>(stack, 'SELECT role, scopes FROM memberships WHERE user_id = ? AND organization_id = ?', userId, orgId))[0];

    // A key minted by this user (role 1) acts at most as admin.
    const adminKey = await createKey(stack, orgId, { role: 1 }, created.body.api_key);
    const admin = as(adminKey, { 'tr-organization': orgId });
    await expectRejected(stack, () => admin.put('/api/user', { user_id: userId, role: 2 }), 403, /role/);
    // Raising or keeping at the own level is allowed; lowering too.
    const scopes = ['PUT /api/user', 'GET /api/organization/{organization_id}'];
    expect((await owner.put('/api/user', { role: 2, scopes })).status).toBe(204);
    expect(await membership()).toEqual({ role: 2, scopes: JSON.stringify(scopes) });
    // The user's scopes now bind every key of the user: other routes are 403.
    expect((await owner.get(`/api/organization/${orgId}`)).status).toBe(200);
    await expectRejected(stack, () => owner.post('/api/dataset', { dataset_name: 'outside scopes' }), 403, /scope/);
    expect((await owner.put('/api/user', { user_id: userId, scopes: null })).status).toBe(204);
    expect((await owner.post('/api/dataset', { dataset_name: 'inside again' })).status).toBe(200);
    expect((await owner.put('/api/user', { user_id: userId, role: 1 })).status).toBe(204);
    expect(await membership()).toEqual({ role: 1, scopes: null });
    // Demoted: the owner key now acts as admin and cannot climb back.
    await expectRejected(stack, () => owner.put('/api/user', { role: 2 }), 403, /role/);
    await expectRejected(stack, () => owner.post('/api/dataset', { dataset_name: 'x' }), 403);
    expect(await membership()).toEqual({ role: 1, scopes: null });
    // Restore through the operator key.
    expect((await as(stack.adminKey, { 'tr-organization': orgId }).put('/api/user', { user_id: userId, role: 2 })).status).toBe(204);
    expect((await membership())!.role).toBe(2);

    await expectRejected(stack, () => owner.put('/api/user', { role: 3 }), 400, /role/);
    await expectRejected(stack, () => owner.put('/api/user', { user_id: 'nope' }), 400, /user_id/);
    await expectRejected(stack, () => owner.put('/api/user', { user_id: MISSING, role: 0 }), 400, /member/);
    await expectRejected(stack, () => owner.put('/api/user', { scopes: ['bad scope'] }), 400, /scope/);
  });
});

describe('organization usage and users', () => {
  it('GET /api/organization/usage/{id} counts live datasets, members and chunks', async () => {
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: `${unique('usage')}@example.com`, user_name: 'Usage' });
    expect(created.status, created.text).toBe(200);
    const orgId = created.body.organization_id as string;
    const owner = created.body.api_key as string;
    const first = await createDataset(stack, orgId, owner);
    const second = await createDataset(stack, orgId, owner);
    const gone = await createDataset(stack, orgId, owner);
    expect((await as(owner, { 'tr-dataset': first }).post('/api/chunk', [{ chunk_html: 'a' }, { chunk_html: 'b' }])).status).toBe(200);
    expect((await as(owner, { 'tr-dataset': second }).post('/api/chunk', { chunk_html: 'c' })).status).toBe(200);
    expect((await as(owner, { 'tr-dataset': gone }).post('/api/chunk', { chunk_html: 'd' })).status).toBe(200);
    expect((await as(owner).del(`/api/dataset/${gone}`)).status).toBe(204);
    // The purge job removes its rows later; wait so the unchanged-store checks below are not racing it.
    await eventually(async () => (await countRows(stack, 'datasets', 'id = ?', gone)) === 0, 'the purge of the deleted dataset');

    const usage = await as(owner).get(`/api/organization/usage/${orgId}`);
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body).toEqual({ id: orgId, org_id: orgId, dataset_count: 2, user_count: 1, file_storage: 0, message_count: 0, chunk_count: 3 });

    // The reference's current POST form answers the extended counters.
    const extended = await as(owner).post(`/api/organization/usage/${orgId}`, { v1_usage: true });
    expect(extended.status, extended.text).toBe(200);
    expect(extended.body).toMatchObject({ dataset_count: 2, user_count: 1, chunk_count: 3, search_count: 0, message_count: 0 });
    await expectRejected(stack, () => as(owner).post(`/api/organization/usage/${orgId}`, { v1_usage: 'yes' }), 400, /v1_usage/);

    // Admin or above; another organization's key sees nothing; a bad id is 400.
    const read = await createKey(stack, orgId, { role: 0 }, owner);
    await expectRejected(stack, () => as(read).get(`/api/organization/usage/${orgId}`), 403, /role/);
    await expectRejected(stack, () => as(t.ownerKey).get(`/api/organization/usage/${orgId}`), 404);
    await expectRejected(stack, () => as(owner).get('/api/organization/usage/nope'), 400, /organization_id/);
  });

  it('GET /api/organization/users/{id} lists the members as SlimUsers showing this organization only', async () => {
    const email = `${unique('members')}@example.com`;
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: email, user_name: 'Member' });
    expect(created.status, created.text).toBe(200);
    const orgId = created.body.organization_id as string;
    const owner = created.body.api_key as string;
    // The same user owns a second organization: an admin of the first must not learn of it.
    const again = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: email, user_name: 'Member' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.organization_id).not.toBe(orgId);

    const users = await as(owner).get(`/api/organization/users/${orgId}`);
    expect(users.status, users.text).toBe(200);
    expect(users.body).toHaveLength(1);
    const [u] = users.body;
    expect(u).toMatchObject({ id: created.body.user.id, email, name: 'Member' });
    expect(u.user_orgs).toEqual([expect.objectContaining({ organization_id: orgId, user_id: u.id, role: 2 })]);
    expect(u.orgs.map((o: { id: string }) => o.id)).toEqual([orgId]);
    expect(users.text).not.toContain(again.body.organization_id);

    const read = await createKey(stack, orgId, { role: 0 }, owner);
    await expectRejected(stack, () => as(read).get(`/api/organization/users/${orgId}`), 403, /role/);
    await expectRejected(stack, () => as(t.ownerKey).get(`/api/organization/users/${orgId}`), 404);
    // An organization made by ADMIN_API_KEY has no members yet.
    const empty = await as(stack.adminKey).get(`/api/organization/users/${t.orgId}`);
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body).toEqual([]);
  });
});
