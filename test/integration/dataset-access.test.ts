/**
 * What a dataset route knows of its caller (the dataset, its organization, the key's user's
 * membership) is read fresh for every request: PostgreSQL reads it in one statement
 * (`datasets.standing`), SQLite through caches that any write empties. So a change of the user's
 * scopes or role, a deleted key or a deleted dataset decides the very next request, by dataset id
 * and by tracking id alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api.js';
import { createDataset, unique } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('dataset access', () => {
  it('follows membership, key and dataset changes on the next request', async () => {
    const admin = client(stack.baseUrl, { authorization: stack.adminKey });
    const created = await admin.post('/api/auth/create_api_only_user', { user_email: `${unique('access')}@example.com`, user_name: 'A' });
    expect(created.status, created.text).toBe(200);
    const orgId = created.body.organization_id as string;
    const userId = created.body.user.id as string;
    const userKey = created.body.api_key as string;
    const tid = unique('ds');
    const datasetId = await createDataset(stack, orgId, userKey, { tracking_id: tid });
    const owner = client(stack.baseUrl, { authorization: userKey, 'tr-organization': orgId });
    const byId = client(stack.baseUrl, { authorization: userKey, 'tr-dataset': datasetId });
    const byTid = client(stack.baseUrl, { authorization: userKey, 'tr-organization': orgId, 'tr-dataset': tid });
    const operator = admin.with({ 'tr-organization': orgId });

    expect((await byId.post('/api/chunk', { chunk_html: 'one', tracking_id: 'c1' })).status).toBe(200);
    expect((await byTid.get('/api/chunk/tracking_id/c1')).status).toBe(200);

    // The user's scopes now leave out chunk writes: the next write is refused, reads go on.
    expect((await owner.put('/api/user', { scopes: ['GET /api/chunk/tracking_id/{tracking_id}', 'POST /api/chunks/tracking', 'PUT /api/user'] })).status).toBe(204);
    const scoped = await byId.post('/api/chunk', { chunk_html: 'two', tracking_id: 'c2' });
    expect(scoped.status, scoped.text).toBe(403);
    expect(scoped.body.message).toMatch(/scopes of this user/);
    expect((await byTid.post('/api/chunk', { chunk_html: 'two', tracking_id: 'c2' })).status).toBe(403);
    expect((await byTid.get('/api/chunk/tracking_id/c1')).status).toBe(200);
    expect((await owner.put('/api/user', { user_id: userId, scopes: null })).status).toBe(204);
    expect((await byId.post('/api/chunk', { chunk_html: 'two', tracking_id: 'c2' })).status).toBe(200);

    // Demoted to reader by the operator: the user's owner key reads and no longer writes.
    expect((await operator.put('/api/user', { user_id: userId, role: 0 })).status).toBe(204);
    const demoted = await byTid.post('/api/chunk', { chunk_html: 'three', tracking_id: 'c3' });
    expect(demoted.status, demoted.text).toBe(403);
    expect(demoted.body.message).toMatch(/requires role/);
    const read = await byId.post('/api/chunks/tracking', { tracking_ids: ['c1', 'c2'] });
    expect(read.status, read.text).toBe(200);
    expect(read.body.map((c: { tracking_id: string }) => c.tracking_id)).toEqual(['c1', 'c2']);
    expect((await operator.put('/api/user', { user_id: userId, role: 2 })).status).toBe(204);
    expect((await byTid.post('/api/chunk', { chunk_html: 'three', tracking_id: 'c3' })).status).toBe(200);

    // A deleted key is refused on its next request.
    const name = unique('key');
    const minted = await operator.post('/api/organization/api_key', { name, role: 1 });
    expect(minted.status, minted.text).toBe(200);
    const keyed = client(stack.baseUrl, { authorization: minted.body.api_key as string, 'tr-dataset': datasetId });
    expect((await keyed.post('/api/chunks/tracking', { tracking_ids: ['c1'] })).status).toBe(200);
    const keyId = ((await operator.get('/api/organization/api_key')).body as { id: string; name: string }[]).find((k) => k.name === name)!.id;
    expect((await operator.del(`/api/organization/api_key/${keyId}`)).status).toBe(204);
    expect((await keyed.post('/api/chunks/tracking', { tracking_ids: ['c1'] })).status).toBe(401);

    // A deleted dataset is absent on the next request, by id and by tracking id.
    expect((await owner.del(`/api/dataset/${datasetId}`)).status).toBe(204);
    for (const c of [byId, byTid]) {
      const gone = await c.post('/api/chunks/tracking', { tracking_ids: ['c1'] });
      expect(gone.status, gone.text).toBe(404);
      expect(gone.body.message).toMatch(/Could not find dataset/);
    }
  });
});
