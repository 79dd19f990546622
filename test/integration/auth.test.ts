/**
 * Authentication and authorization against the real stack: key transports, expiry, the operator
 * key, roles per endpoint, role ceilings, dataset restrictions, scopes, organization isolation,
 * TR-Dataset / TR-Organization resolution and X-API-Version. Every refusal also checks that the
 * store did not change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, request, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, unique, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { expectRejected, queryStore, snapshotStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let t: Tenant;
/** A second organization with its own owner key and dataset. */
let other: Tenant;
let readKey: string;
let adminKey: string;

const as = (key: string, headers: Record<string, string> = {}): Client => client(stack.baseUrl, { authorization: key, ...headers });

const SHOPIFY_SECRET = 'shopify-secret-for-tests';

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_SHOPIFY_SECRET_KEY: SHOPIFY_SECRET } });
  t = await createTenant(stack);
  other = await createTenant(stack);
  readKey = await createKey(stack, t.orgId, { role: 0 });
  adminKey = await createKey(stack, t.orgId, { role: 1 });
  const seeded = await t.ds.post('/api/chunk', { chunk_html: 'seed', tracking_id: 'seed', tag_set: ['a', 'b'] });
  expect(seeded.status, seeded.text).toBe(200);
});
afterAll(async () => {
  await stack?.stop();
});

describe('key transport', () => {
  it('accepts the key raw, as Bearer, and in x-api-key', async () => {
    const h = { 'tr-dataset': t.datasetId };
    for (const headers of [
      { authorization: t.ownerKey },
      { authorization: `Bearer ${t.ownerKey}` },
      { authorization: `bearer ${t.ownerKey}` },
      { 'x-api-key': t.ownerKey },
      { 'x-api-key': `Bearer ${t.ownerKey}` },
    ]) {
      const res = await request(stack.baseUrl, 'GET', '/api/chunk/tracking_id/seed', { headers: { ...h, ...headers } });
      expect(res.status, JSON.stringify(headers) + res.text).toBe(200);
      expect(res.body.chunk_html).toBe('seed');
    }
  });

  it('refuses an unknown key, a malformed key and no key with 401', async () => {
    for (const authorization of ['tr-' + 'x'.repeat(32), 'garbage', `Bearer ${t.ownerKey}x`, undefined]) {
      await expectRejected(
        stack,
        () => request(stack.baseUrl, 'POST', '/api/chunk', { body: { chunk_html: 'no' }, headers: { authorization, 'tr-dataset': t.datasetId } }),
        401,
      );
    }
  });

  it('refuses an expired key with 401 (it worked before expiry)', async () => {
    const expiresAt = new Date(Date.now() + 2500).toISOString();
    const key = await createKey(stack, t.orgId, { role: 1, expires_at: expiresAt });
    const before = await as(key, { 'tr-dataset': t.datasetId }).get('/api/chunk/tracking_id/seed');
    expect(before.status, before.text).toBe(200);
    await new Promise((r) => setTimeout(r, 3000));
    const res = await expectRejected(
      stack,
      () => as(key, { 'tr-dataset': t.datasetId }).post('/api/chunk', { chunk_html: 'too late' }),
      401,
      /expire/i,
    );
    expect(res.body.message).toBeTruthy();
    await expectRejected(stack, () => as(key, { 'tr-dataset': t.datasetId }).get('/api/chunk/tracking_id/seed'), 401);
  });

  it('refuses expires_at in the past and malformed expires_at with 400', async () => {
    await expectRejected(
      stack,
      () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, expires_at: '2001-01-01 00:00:00' }),
      400,
      /expires_at/,
    );
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, expires_at: 'tomorrow' }), 400, /expires_at/);
  });
});

describe('ADMIN_API_KEY', () => {
  it('creates organizations with no other header', async () => {
    const res = await request(stack.baseUrl, 'POST', '/api/organization', { body: { name: 'made-by-admin' }, headers: { authorization: stack.adminKey } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.name).toBe('made-by-admin');
    const rows = await queryStore(stack, 'SELECT name FROM organizations WHERE id = ?', res.body.id);
    expect(rows).toEqual([{ name: 'made-by-admin' }]);
  });

  it('acts as owner of any organization and dataset', async () => {
    const admin = as(stack.adminKey);
    const org = await admin.put('/api/organization', { name: 'renamed-by-admin' }, { 'tr-organization': other.orgId });
    expect(org.status, org.text).toBe(200);
    expect(org.body.name).toBe('renamed-by-admin');
    const ds = await admin.post('/api/dataset', { dataset_name: 'admin-ds' }, { 'tr-organization': other.orgId });
    expect(ds.status, ds.text).toBe(200);
    expect(ds.body.organization_id).toBe(other.orgId);
    const chunk = await admin.post('/api/chunk', { chunk_html: 'by admin' }, { 'tr-dataset': other.datasetId });
    expect(chunk.status, chunk.text).toBe(200);
    const key = await admin.post('/api/organization/api_key', { name: 'owner', role: 2 }, { 'tr-organization': other.orgId });
    expect(key.status, key.text).toBe(200);
  });
});

describe('roles per endpoint', () => {
  it('a read key can read but cannot create, update or delete chunks (403)', async () => {
    const read = as(readKey, { 'tr-dataset': t.datasetId });
    const got = await read.get('/api/chunk/tracking_id/seed');
    expect(got.status, got.text).toBe(200);
    await expectRejected(stack, () => read.post('/api/chunk', { chunk_html: 'x' }), 403, /role/);
    await expectRejected(stack, () => read.put('/api/chunk', { tracking_id: 'seed', chunk_html: 'x' }), 403);
    await expectRejected(stack, () => read.del('/api/chunk/tracking_id/seed'), 403);
    await expectRejected(stack, () => read.post('/api/chunk_group', { name: 'g' }), 403);
    await expectRejected(stack, () => as(readKey, { 'tr-organization': t.orgId }).post('/api/organization/api_key', { name: 'k', role: 0 }), 403);
  });

  it('an admin key can write chunks but cannot create datasets or update the organization (403)', async () => {
    const admin = as(adminKey, { 'tr-dataset': t.datasetId });
    const created = await admin.post('/api/chunk', { chunk_html: 'by admin key' });
    expect(created.status, created.text).toBe(200);
    const org = as(adminKey, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => org.post('/api/dataset', { dataset_name: 'nope' }), 403, /owner/);
    await expectRejected(stack, () => org.put('/api/organization', { name: 'nope' }), 403, /owner/);
    await expectRejected(stack, () => as(adminKey).del(`/api/dataset/${t.datasetId}`), 403);
    await expectRejected(stack, () => as(adminKey).put(`/api/dataset/clear/${t.datasetId}`), 403);
  });

  it('an owner key can create datasets and update the organization', async () => {
    const ds = await t.org.post('/api/dataset', { dataset_name: 'owner-ds' });
    expect(ds.status, ds.text).toBe(200);
    const org = await t.org.put('/api/organization', { name: 'owned' });
    expect(org.status, org.text).toBe(200);
    expect(org.body.name).toBe('owned');
  });

  it('nobody can create a key above their own role (403), at or below is fine', async () => {
    const fromAdmin = as(adminKey, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => fromAdmin.post('/api/organization/api_key', { name: 'up', role: 2 }), 403, /role/);
    for (const role of [0, 1]) {
      const ok = await fromAdmin.post('/api/organization/api_key', { name: 'same', role });
      expect(ok.status, ok.text).toBe(200);
    }
  });

  it('a user cannot set a role above their own (403)', async () => {
    // An API-only user owns a new organization; a role-1 key minted by that user acts as admin.
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: `${unique('u')}@example.com`, user_name: 'U' });
    expect(created.status, created.text).toBe(200);
    const orgId = created.body.organization_id as string;
    const userId = created.body.user.id as string;
    const adminOfUser = await createKey(stack, orgId, { role: 1 }, created.body.api_key);
    const c = as(adminOfUser, { 'tr-organization': orgId });
    await expectRejected(stack, () => c.put('/api/user', { role: 2 }), 403, /role/);
    await expectRejected(stack, () => c.put('/api/user', { user_id: userId, role: 2 }), 403, /role/);
    // The owner key of the same user may.
    const owner = as(created.body.api_key, { 'tr-organization': orgId });
    const ok = await owner.put('/api/user', { user_id: userId, role: 2 });
    expect(ok.status, ok.text).toBe(204);
  });
});

describe('dataset restriction and organization isolation', () => {
  it('a key restricted by dataset_ids works on its dataset and gets 403 on another', async () => {
    const second = await createDataset(stack, t.orgId, t.ownerKey);
    const key = await createKey(stack, t.orgId, { role: 1, dataset_ids: [t.datasetId] });
    const own = await as(key, { 'tr-dataset': t.datasetId }).post('/api/chunk', { chunk_html: 'allowed' });
    expect(own.status, own.text).toBe(200);
    await expectRejected(stack, () => as(key, { 'tr-dataset': second }).post('/api/chunk', { chunk_html: 'no' }), 403, /restricted/);
    await expectRejected(stack, () => as(key, { 'tr-dataset': second }).get('/api/chunk/tracking_id/seed'), 403);
  });

  it('dataset_ids naming a dataset of another organization is refused (400)', async () => {
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, dataset_ids: [other.datasetId] }), 400, /dataset_ids/);
  });

  it("a key of another organization gets 404 on this organization's dataset and organization, naming neither owner", async () => {
    // A 403 would confirm the dataset exists and name the organization that owns it.
    const foreign = as(other.ownerKey, { 'tr-dataset': t.datasetId });
    const datasetRefusals = [
      await expectRejected(stack, () => foreign.post('/api/chunk', { chunk_html: 'intruder' }), 404),
      await expectRejected(stack, () => foreign.get('/api/chunk/tracking_id/seed'), 404),
      await expectRejected(stack, () => as(other.ownerKey).get(`/api/dataset/${t.datasetId}`), 404),
      await expectRejected(stack, () => as(other.ownerKey).get(`/api/dataset/usage/${t.datasetId}`), 404),
      // TR-Organization of the caller's own organization with a dataset of another one.
      await expectRejected(
        stack,
        () => as(other.ownerKey, { 'tr-dataset': t.datasetId, 'tr-organization': other.orgId }).get('/api/chunk/tracking_id/seed'),
        404,
      ),
    ];
    const MISSING = '00000000-0000-4000-8000-000000000000';
    const absentDataset = await expectRejected(stack, () => as(other.ownerKey).get(`/api/dataset/${MISSING}`), 404);
    for (const res of datasetRefusals) {
      expect(res.text).not.toContain(t.orgId);
      expect(res.body.message.replace(t.datasetId, 'X')).toBe(absentDataset.body.message.replace(MISSING, 'X'));
    }
    const orgRefusals = [
      await expectRejected(stack, () => as(other.ownerKey, { 'tr-organization': t.orgId }).put('/api/organization', { name: 'stolen' }), 404),
      await expectRejected(stack, () => as(other.ownerKey, { 'tr-organization': t.orgId }).post('/api/organization/api_key', { name: 'k', role: 0 }), 404),
      await expectRejected(stack, () => as(other.ownerKey).get(`/api/organization/${t.orgId}`), 404),
    ];
    const absentOrg = await expectRejected(stack, () => as(other.ownerKey).get(`/api/organization/${MISSING}`), 404);
    for (const res of orgRefusals) expect(res.body.message.replace(t.orgId, 'X')).toBe(absentOrg.body.message.replace(MISSING, 'X'));
  });
});

describe('scopes', () => {
  it('allows the scoped routes (with {param} wildcards) and refuses the others with 403', async () => {
    const key = await createKey(stack, t.orgId, { role: 1, scopes: ['POST /api/chunk', 'GET /api/chunk/tracking_id/{tracking_id}'] });
    const c = as(key, { 'tr-dataset': t.datasetId });
    const created = await c.post('/api/chunk', { chunk_html: 'scoped', tracking_id: 'scoped-1' });
    expect(created.status, created.text).toBe(200);
    const got = await c.get('/api/chunk/tracking_id/scoped-1');
    expect(got.status, got.text).toBe(200);
    await expectRejected(stack, () => c.del('/api/chunk/tracking_id/scoped-1'), 403, /scope/);
    await expectRejected(stack, () => c.put('/api/chunk', { tracking_id: 'scoped-1', chunk_html: 'x' }), 403, /scope/);
    await expectRejected(stack, () => c.get(`/api/chunk/${created.body.chunk_metadata.id}`), 403, /scope/);
    // The wildcard stands for one path segment, not several.
    await expectRejected(stack, () => c.get('/api/chunk/tracking_id/a/b'), 403);
  });

  it('scopes: [] means all routes', async () => {
    const key = await createKey(stack, t.orgId, { role: 1, scopes: [] });
    const c = as(key, { 'tr-dataset': t.datasetId });
    expect((await c.post('/api/chunk', { chunk_html: 'all', tracking_id: 'all-scopes' })).status).toBe(200);
    expect((await c.get('/api/chunk/tracking_id/all-scopes')).status).toBe(200);
    expect((await c.del('/api/chunk/tracking_id/all-scopes')).status).toBe(204);
  });

  it('refuses malformed scopes with 400', async () => {
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, scopes: ['chunk'] }), 400, /scope/);
  });
});

describe('dataset and organization headers', () => {
  it('resolves TR-Dataset by id and by tracking_id with TR-Organization', async () => {
    const tracking = unique('dst');
    const id = await createDataset(stack, t.orgId, t.ownerKey, { tracking_id: tracking });
    const byId = await as(t.ownerKey, { 'tr-dataset': id }).post('/api/chunk', { chunk_html: 'via id', tracking_id: 'via' });
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body.chunk_metadata.dataset_id).toBe(id);
    const byTracking = await as(t.ownerKey, { 'tr-dataset': tracking, 'tr-organization': t.orgId }).get('/api/chunk/tracking_id/via');
    expect(byTracking.status, byTracking.text).toBe(200);
    expect(byTracking.body.dataset_id).toBe(id);
    const alias = await as(t.ownerKey, { 'x-dataset': id }).get('/api/chunk/tracking_id/via');
    expect(alias.status, alias.text).toBe(200);
    await expectRejected(stack, () => as(t.ownerKey, { 'tr-dataset': tracking }).get('/api/chunk/tracking_id/via'), 400, /TR-Organization/);
    await expectRejected(stack, () => as(t.ownerKey, { 'tr-dataset': tracking }).post('/api/chunk', { chunk_html: 'x' }), 400, /TR-Organization/);
  });

  it('missing TR-Dataset is 400, unknown dataset is 404, non-UUID TR-Organization is 400', async () => {
    await expectRejected(stack, () => as(t.ownerKey).post('/api/chunk', { chunk_html: 'x' }), 400, /TR-Dataset/);
    await expectRejected(stack, () => as(t.ownerKey).get('/api/chunk/tracking_id/seed'), 400, /TR-Dataset/);
    await expectRejected(stack, () => as(t.ownerKey, { 'tr-organization': t.orgId }).get('/api/chunk/tracking_id/seed'), 400, /TR-Dataset/);
    await expectRejected(
      stack,
      () => as(t.ownerKey, { 'tr-dataset': '00000000-0000-4000-8000-000000000000' }).post('/api/chunk', { chunk_html: 'x' }),
      404,
    );
    await expectRejected(
      stack,
      () => as(t.ownerKey, { 'tr-dataset': 'no-such-tracking', 'tr-organization': t.orgId }).post('/api/chunk', { chunk_html: 'x' }),
      404,
    );
    await expectRejected(stack, () => as(t.ownerKey, { 'tr-organization': 'not-a-uuid' }).post('/api/dataset', { dataset_name: 'x' }), 400, /Organization/);
    await expectRejected(
      stack,
      () => as(t.ownerKey, { 'tr-dataset': t.datasetId, 'tr-organization': 'nope' }).get('/api/chunk/tracking_id/seed'),
      400,
      /Organization/,
    );
    await expectRejected(stack, () => as(t.ownerKey).post('/api/dataset', { dataset_name: 'x' }), 400, /TR-Organization/);
  });

  it('X-API-Version V1 gives tag_set as a comma string, V2 an array, invalid is 400', async () => {
    const c = as(t.ownerKey, { 'tr-dataset': t.datasetId });
    const v1 = await c.get('/api/chunk/tracking_id/seed', { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body.tag_set).toBe('a,b');
    expect(v1.headers.get('x-api-version')).toBe('1.0');
    const v2 = await c.get('/api/chunk/tracking_id/seed', { 'x-api-version': 'V2' });
    expect(v2.body.tag_set).toEqual(['a', 'b']);
    expect(v2.headers.get('x-api-version')).toBe('2.0');
    // Organizations created now default to V2.
    const dflt = await c.get('/api/chunk/tracking_id/seed');
    expect(dflt.body.tag_set).toEqual(['a', 'b']);
    const many = await c.post('/api/chunks', { ids: [v2.body.id] }, { 'x-api-version': '1.0' });
    expect(many.body[0].tag_set).toBe('a,b');
    await expectRejected(stack, () => c.get('/api/chunk/tracking_id/seed', { 'x-api-version': 'V3' }), 400, /X-API-Version/);
    await expectRejected(stack, () => c.post('/api/chunks', { ids: [v2.body.id] }, { 'x-api-version': 'latest' }), 400, /X-API-Version/);
  });
});

describe('default_params', () => {
  it('stores default_params with the key and the key works', async () => {
    const params = { search_type: 'bm25', page_size: 5, filters: { must: [{ field: 'tag_set', match_any: ['a'] }] }, slim_chunks: true };
    const name = unique('defaults');
    const res = await t.org.post('/api/organization/api_key', { name, role: 0, default_params: params });
    expect(res.status, res.text).toBe(200);
    const rows = await queryStore<{ default_params: string }>(stack, 'SELECT default_params FROM api_keys WHERE name = ?', name);
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.default_params)).toEqual(params);
    const listed = await t.org.get('/api/organization/api_key');
    expect(listed.body.find((k: { name: string }) => k.name === name).default_params).toEqual(params);
    const used = await as(res.body.api_key, { 'tr-dataset': t.datasetId }).get('/api/chunk/tracking_id/seed');
    expect(used.status, used.text).toBe(200);
  });

  it('refuses malformed default_params with 400', async () => {
    await expectRejected(
      stack,
      () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, default_params: { search_type: 'magic' } }),
      400,
      /search_type/,
    );
    await expectRejected(
      stack,
      () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, default_params: { page_size: -1 } }),
      400,
      /page_size/,
    );
  });

  it('keeps the snapshot helper honest: a successful write changes the store', async () => {
    const before = await snapshotStore(stack);
    expect((await t.ds.post('/api/chunk', { chunk_html: 'changes' })).status).toBe(200);
    expect(await snapshotStore(stack)).not.toEqual(before);
  });
});


describe('keys cannot mint wider keys', () => {
  it('a dataset-restricted key cannot mint keys at all, not even restricted ones (403)', async () => {
    const restricted = await createKey(stack, t.orgId, { role: 1, dataset_ids: [t.datasetId] });
    const c = as(restricted, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => c.post('/api/organization/api_key', { name: 'wide', role: 1 }), 403, /restricted to datasets/);
    await expectRejected(stack, () => c.post('/api/organization/api_key', { name: 'same', role: 0, dataset_ids: [t.datasetId] }), 403, /restricted to datasets/);
  });

  it('a scoped key can only mint keys with a subset of its scopes (403 otherwise)', async () => {
    const scopes = ['POST /api/organization/api_key', 'GET /api/chunk/{chunk_id}'];
    const scoped = await createKey(stack, t.orgId, { role: 1, scopes });
    const c = as(scoped, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => c.post('/api/organization/api_key', { name: 'all routes', role: 1 }), 403, /scopes/);
    await expectRejected(stack, () => c.post('/api/organization/api_key', { name: 'more', role: 1, scopes: ['DELETE /api/chunk/{chunk_id}'] }), 403, /scopes/);
    const ok = await c.post('/api/organization/api_key', { name: 'subset', role: 1, scopes: ['get /api/chunk/{chunk_id}'] });
    expect(ok.status, ok.text).toBe(200);
  });

  it('an expiring key can only mint keys that expire no later (403 otherwise)', async () => {
    const expiresAt = Date.now() + 3_600_000;
    const expiring = await createKey(stack, t.orgId, { role: 1, expires_at: new Date(expiresAt).toISOString() });
    const c = as(expiring, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => c.post('/api/organization/api_key', { name: 'forever', role: 1 }), 403, /expires_at/);
    await expectRejected(
      stack,
      () => c.post('/api/organization/api_key', { name: 'later', role: 1, expires_at: new Date(expiresAt + 60_000).toISOString() }),
      403,
      /expires_at/,
    );
    const ok = await c.post('/api/organization/api_key', { name: 'sooner', role: 1, expires_at: new Date(expiresAt - 60_000).toISOString() });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('API-only users through X-Shopify-Authorization', () => {
  const create = (headers: Record<string, string | undefined>, body: unknown = { user_email: `${unique('shop')}@example.com`, user_name: 'Shop' }) =>
    request(stack.baseUrl, 'POST', '/api/auth/create_api_only_user', { body, headers });

  it('the configured secret creates the user, an organization they own and an owner key for it', async () => {
    const email = `${unique('shop')}@Example.com`;
    const res = await create({ 'x-shopify-authorization': SHOPIFY_SECRET }, { user_email: email, user_name: 'Shop Owner' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.api_key).toMatch(/^tr-[A-Za-z0-9]{32}$/);
    expect(res.body.user.email).toBe(email.toLowerCase());
    expect(res.body.user.user_orgs).toEqual([expect.objectContaining({ organization_id: res.body.organization_id, role: 2 })]);
    const rows = await queryStore<{ role: number; user_id: string }>(stack, 'SELECT role, user_id FROM api_keys WHERE organization_id = ?', res.body.organization_id);
    expect(rows).toEqual([{ role: 2, user_id: res.body.user.id }]);
  });

  it('a wrong, missing or misplaced secret is 401 and creates nothing', async () => {
    for (const headers of [
      {},
      { 'x-shopify-authorization': 'wrong' },
      { 'x-shopify-authorization': SHOPIFY_SECRET + 'x' },
      { 'x-shopify-authorization': '' },
      { authorization: SHOPIFY_SECRET },
    ]) {
      await expectRejected(stack, () => create(headers), 401);
    }
    // An organization key is neither the operator nor the secret.
    await expectRejected(stack, () => create({ authorization: t.ownerKey }), 401);
  });

  it('the right secret with a bad body is 400 naming the field', async () => {
    await expectRejected(stack, () => create({ 'x-shopify-authorization': SHOPIFY_SECRET }, { user_email: 'not-an-email', user_name: 'x' }), 400, /user_email/);
  });

  it('the created key owns its organization and nothing else', async () => {
    const res = await create({ 'x-shopify-authorization': SHOPIFY_SECRET });
    expect(res.status, res.text).toBe(200);
    const orgId = res.body.organization_id as string;
    const key = res.body.api_key as string;
    const ds = await as(key, { 'tr-organization': orgId }).post('/api/dataset', { dataset_name: 'shop ds' });
    expect(ds.status, ds.text).toBe(200);
    const chunk = await as(key, { 'tr-dataset': ds.body.id }).post('/api/chunk', { chunk_html: 'a product', tracking_id: 'p1' });
    expect(chunk.status, chunk.text).toBe(200);
    const minted = await as(key, { 'tr-organization': orgId }).post('/api/organization/api_key', { name: 'read', role: 0 });
    expect(minted.status, minted.text).toBe(200);
    const me = await as(key).get('/api/auth/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body.id).toBe(res.body.user.id);
    // Another tenant's dataset and organization do not exist for it.
    await expectRejected(stack, () => as(key, { 'tr-dataset': t.datasetId }).get('/api/chunk/tracking_id/seed'), 404);
    await expectRejected(stack, () => as(key, { 'tr-organization': t.orgId }).put('/api/organization', { name: 'mine now' }), 404);
    // It may not create API-only users itself.
    await expectRejected(stack, () => create({ authorization: key }), 401);
  });
});

describe('PUBLIC_DATASET: keyless reads of a published dataset', () => {
  let pub: string;
  let chunkId: string;
  beforeAll(async () => {
    pub = await createDataset(stack, t.orgId, t.ownerKey, {
      server_configuration: { PUBLIC_DATASET: { enabled: true, api_key: 'tr-published-by-the-dashboard', extra_params: { type: 'ecommerce' } } },
    });
    const c = await as(t.ownerKey, { 'tr-dataset': pub }).post('/api/chunk', { chunk_html: 'public apples and pears', tracking_id: 'pub-1' });
    expect(c.status, c.text).toBe(200);
    chunkId = c.body.chunk_metadata.id;
  });
  const anon = (headers: Record<string, string> = {}) => client(stack.baseUrl, headers);

  it('search, autocomplete, count and get-chunk need no key on a public dataset', async () => {
    const c = anon({ 'tr-dataset': pub });
    const search = await c.post('/api/chunk/search', { query: 'apples', search_type: 'bm25' });
    expect(search.status, search.text).toBe(200);
    expect(search.body.chunks.map((r: { chunk: { id: string } }) => r.chunk.id)).toEqual([chunkId]);
    const auto = await c.post('/api/chunk/autocomplete', { query: 'appl', search_type: 'bm25' });
    expect(auto.status, auto.text).toBe(200);
    const count = await c.post('/api/chunk/count', { query: 'apples', search_type: 'bm25' });
    expect(count.status, count.text).toBe(200);
    expect(count.body.count).toBe(1);
    expect((await c.get(`/api/chunk/${chunkId}`)).status).toBe(200);
    expect((await c.get('/api/chunk/tracking_id/pub-1')).status).toBe(200);
  });

  it('everything else still needs a key: writes, scroll, dataset and organization routes (401)', async () => {
    const c = anon({ 'tr-dataset': pub, 'tr-organization': t.orgId });
    for (const call of [
      () => c.post('/api/chunk', { chunk_html: 'spam' }),
      () => c.put('/api/chunk', { tracking_id: 'pub-1', chunk_html: 'defaced' }),
      () => c.del('/api/chunk/tracking_id/pub-1'),
      () => c.post('/api/chunks/scroll', {}),
      () => c.post('/api/chunks', { ids: [chunkId] }),
      () => c.post('/api/dataset/get_all_tags', {}),
      () => c.get(`/api/dataset/${pub}`),
      () => c.get(`/api/dataset/usage/${pub}`),
      () => c.put('/api/dataset', { dataset_id: pub, dataset_name: 'x' }),
      () => c.get(`/api/organization/${t.orgId}`),
      () => c.get('/api/auth/me'),
    ]) {
      await expectRejected(stack, call, 401, /API key/);
    }
  });

  it('a private dataset, an unknown one or no TR-Dataset is 401 alike for the keyless', async () => {
    for (const headers of <Record<string, string>[]>[{ 'tr-dataset': t.datasetId }, { 'tr-dataset': '00000000-0000-4000-8000-000000000000' }, {}]) {
      await expectRejected(stack, () => anon(headers).post('/api/chunk/search', { query: 'seed', search_type: 'bm25' }), 401, /API key/);
    }
    // Naming the public dataset in TR-Dataset does not open another dataset's chunk by id.
    const seed = await t.ds.get('/api/chunk/tracking_id/seed');
    await expectRejected(stack, () => anon({ 'tr-dataset': pub }).get(`/api/chunk/${seed.body.id}`), 404);
  });

  it('the published key is never sent back, the shorthand `true` works, and disabling closes it again', async () => {
    const got = await t.ds.get(`/api/dataset/${pub}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body.server_configuration.PUBLIC_DATASET).toEqual({ enabled: true, extra_params: { type: 'ecommerce' } });
    expect(got.text).not.toContain('tr-published-by-the-dashboard');
    const off = await t.org.put('/api/dataset', { dataset_id: pub, server_configuration: { PUBLIC_DATASET: { enabled: false } } });
    expect(off.status, off.text).toBe(200);
    await expectRejected(stack, () => anon({ 'tr-dataset': pub }).post('/api/chunk/search', { query: 'apples', search_type: 'bm25' }), 401);
    const on = await t.org.put('/api/dataset', { dataset_id: pub, server_configuration: { PUBLIC_DATASET: true } });
    expect(on.status, on.text).toBe(200);
    const res = await anon({ 'tr-dataset': pub }).post('/api/chunk/search', { query: 'apples', search_type: 'bm25' });
    expect(res.status, res.text).toBe(200);
  });

  it('a malformed PUBLIC_DATASET is 400 naming it', async () => {
    for (const value of ['yes', 1, { enabled: 'true' }, { enabled: true, extra_params: [] }]) {
      await expectRejected(stack, () => t.org.put('/api/dataset', { dataset_id: pub, server_configuration: { PUBLIC_DATASET: value } }), 400, /PUBLIC_DATASET/);
    }
  });
});
