/**
 * Attacks on the HTTP edge (issue 9): bodies sent without a key, oversized and deeply nested
 * bodies, pathological scopes, keys restricted to one dataset acting on the whole organization,
 * and read keys minting organizations. Each refusal is a 4xx with `{message}` and leaves the store
 * unchanged; the process stays responsive throughout.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, request, type Client } from '../helpers/api.js';
import { createDataset, createKey, createTenant, unique, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows, expectRejected, snapshotStore } from '../helpers/store-snapshot.js';

const MAX_ORGS = 3;

let stack: Stack;
let t: Tenant;
const as = (key: string, headers: Record<string, string> = {}): Client => client(stack.baseUrl, { authorization: key, ...headers });

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_MAX_ORGANIZATIONS_PER_USER: String(MAX_ORGS) } });
  t = await createTenant(stack);
});
afterAll(async () => {
  await stack?.stop();
});

/** What an early answer looked like: status, body text, ms from the request's start, and bytes written. */
interface EarlyAnswer {
  status: number;
  text: string;
  ms: number;
  sentBytes: number;
  connection: string | undefined;
}

/**
 * Sends headers announcing (or streaming) a huge body and then writes only a little of it, slowly,
 * until the server answers or `giveUpMs` passes. A server that reads the body before deciding never
 * answers in time: the body never arrives.
 */
function sendHugeBody(
  path: string,
  headers: Record<string, string>,
  opts: { contentLength?: number; giveUpMs?: number } = {},
): Promise<EarlyAnswer> {
  const url = new URL(stack.baseUrl);
  const started = performance.now();
  const giveUpMs = opts.giveUpMs ?? 8000;
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(opts.contentLength !== undefined ? { 'content-length': String(opts.contentLength) } : { 'transfer-encoding': 'chunked' }),
        ...headers,
      },
    });
    const chunk = Buffer.from('[],'.repeat(20_000)); // 60 KB of the shape that once exhausted memory
    req.write('[');
    const timer = setInterval(() => {
      if (req.destroyed) return;
      sent += chunk.length;
      req.write(chunk, () => undefined);
    }, 50);
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      req.destroy();
      reject(new Error(`no answer within ${giveUpMs} ms after sending ${sent} bytes: the server waited for the body`));
    }, giveUpMs);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        clearInterval(timer);
        clearTimeout(giveUp);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - started, sentBytes: sent, connection: res.headers.connection });
      });
    });
    // The server may close the socket while we are still writing: that is the point.
    req.on('error', () => undefined);
  });
}

/** Health must answer 200 within `boundMs` (generous: the machine is shared). */
async function healthWithin(boundMs: number): Promise<number> {
  const started = performance.now();
  const res = await request(stack.baseUrl, 'GET', '/api/health');
  const ms = performance.now() - started;
  expect(res.status, res.text).toBe(200);
  expect(ms).toBeLessThan(boundMs);
  return ms;
}

describe('no key: refused from the headers, before the body is read', () => {
  it('a keyless 127 MiB body announced by Content-Length is 401 at once, without waiting for it', async () => {
    const answer = await sendHugeBody('/api/chunk', { 'tr-dataset': t.datasetId }, { contentLength: 127 * 1024 * 1024 });
    expect(answer.status, answer.text).toBe(401);
    expect(JSON.parse(answer.text).message).toMatch(/API key/);
    // Answered long before the body could have arrived (a few hundred KB at most were written).
    expect(answer.sentBytes).toBeLessThan(10 * 1024 * 1024);
    expect(answer.connection).toBe('close');
  });

  it('a keyless chunked body of unknown length is 401 at once as well, on every kind of route', async () => {
    for (const path of ['/api/chunk', '/api/chunk/search', '/api/organization', '/api/organization/api_key', '/api/dataset', '/api/chunks/scroll']) {
      const answer = await sendHugeBody(path, { 'tr-dataset': t.datasetId, 'tr-organization': t.orgId });
      expect(answer.status, `${path}: ${answer.text}`).toBe(401);
      expect(JSON.parse(answer.text).message).toMatch(/API key/);
    }
  });

  it('create_api_only_user with a wrong or missing secret and a huge body is 401 at once', async () => {
    for (const headers of <Record<string, string>[]>[{}, { 'x-shopify-authorization': 'not-the-secret' }]) {
      const answer = await sendHugeBody('/api/auth/create_api_only_user', headers, { contentLength: 100 * 1024 * 1024 });
      expect(answer.status, answer.text).toBe(401);
    }
  });

  it('a wrong key or a key whose scopes exclude the route is refused before the body too', async () => {
    const wrong = await sendHugeBody('/api/chunk', { authorization: 'tr-' + 'Z'.repeat(32), 'tr-dataset': t.datasetId }, { contentLength: 64 * 1024 * 1024 });
    expect(wrong.status, wrong.text).toBe(401);
    const scoped = await createKey(stack, t.orgId, { role: 2, scopes: ['GET /api/auth/me'] });
    const out = await sendHugeBody('/api/chunk', { authorization: scoped, 'tr-dataset': t.datasetId }, { contentLength: 64 * 1024 * 1024 });
    expect(out.status, out.text).toBe(403);
  });

  it('health keeps answering while keyless uploads are being refused', async () => {
    const before = await snapshotStore(stack);
    const uploads = Array.from({ length: 4 }, () =>
      sendHugeBody('/api/chunk', { 'tr-dataset': t.datasetId }, { contentLength: 127 * 1024 * 1024 }),
    );
    for (let i = 0; i < 5; i++) await healthWithin(2000);
    for (const answer of await Promise.all(uploads)) expect(answer.status).toBe(401);
    await healthWithin(2000);
    expect(await snapshotStore(stack)).toEqual(before);
  });
});

describe('per-route body limits', () => {
  it('a body over its route limit is 413 naming the limit and the route, even with a valid key', async () => {
    // Search needs little: the default limit (256 KiB) refuses 2 MiB.
    const padding = 'x'.repeat(2 * 1024 * 1024);
    const res = await expectRejected(stack, () => t.ds.post('/api/chunk/search', { query: 'a', search_type: 'bm25', padding }), 413, /limit of \d+ bytes for POST \/api\/chunk\/search/);
    expect(res.body.message).toMatch(/262144/);
    // Tenancy routes need less still (64 KiB).
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'k', role: 0, padding: 'x'.repeat(100 * 1024) }), 413, /POST \/api\/organization\/api_key/);
  });

  it('a big bulk chunk write is still accepted: its route is sized from the batch and per-chunk limits', async () => {
    const html = 'word '.repeat(20_000); // ~100 KB per chunk, 2 MB in all: over the default, under the chunk route's limit
    const res = await t.ds.post('/api/chunk', Array.from({ length: 20 }, (_, i) => ({ chunk_html: html, tracking_id: unique(`big-${i}`) })));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
  });

  it('an oversized body announced by Content-Length is 413 before it is sent', async () => {
    const answer = await sendHugeBody('/api/chunk/search', { authorization: t.ownerKey, 'tr-dataset': t.datasetId }, { contentLength: 100 * 1024 * 1024 });
    expect(answer.status, answer.text).toBe(413);
    expect(JSON.parse(answer.text).message).toMatch(/limit/);
  });
});

describe('nesting depth', () => {
  it('a body nested deeper than 128 levels is 400, checked on the text before parsing', async () => {
    const deep = '['.repeat(129) + ']'.repeat(129);
    await expectRejected(stack, () => t.ds.req('POST', '/api/chunk', { raw: deep }), 400, /128/);
    const deepObject = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    await expectRejected(stack, () => t.ds.req('POST', '/api/chunk', { raw: deepObject }), 400, /128/);
  });

  it('brackets inside strings do not count, and 128 levels are accepted', async () => {
    const res = await t.ds.post('/api/chunk', { chunk_html: '['.repeat(500) + '{'.repeat(500) + '"\\"[', tracking_id: unique('brackets') });
    expect(res.status, res.text).toBe(200);
    // 128 levels pass the body check; metadata has its own cap (32 levels), so the deep value goes
    // where nothing else limits depth: the 400 must then come from the route, not the body check.
    let deepValue: unknown = 1;
    for (let i = 0; i < 126; i++) deepValue = [deepValue];
    const atLimit = await t.ds.post('/api/chunk', { chunk_html: 'deep', ignored_by_the_route: deepValue, tracking_id: unique('deep-ok') });
    expect(atLimit.status, atLimit.text).toBe(200);
  });

  it('a body of more than 250000 arrays/objects is 400 naming the limit, before JSON.parse builds them', async () => {
    // 1.2 million empty arrays in 3.6 MB: within the chunk route's size, each one a JS array if
    // parsed; 1,200 arrays of 1,000 each, as no one array may hold more than 10,000 elements.
    const wide = '[' + Array.from({ length: 1200 }, () => '[' + '[],'.repeat(999) + '[]]').join(',') + ']';
    const started = performance.now();
    await expectRejected(stack, () => t.ds.req('POST', '/api/chunk', { raw: wide }), 400, /250000 arrays\/objects/);
    expect(performance.now() - started).toBeLessThan(5000);
    await healthWithin(2000);
  });

  it('an array of more than 10000 elements is 400 naming its key, before JSON.parse builds it', async () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `g${i}`);
    await expectRejected(stack, () => t.ds.post('/api/chunk', { chunk_html: 'x', group_tracking_ids: ids }), 400, /group_tracking_ids: array of more than 10000 elements/);
  });

  it('an over-long array is 400 at the part of the upload where it breaks the bound, before the rest arrives', async () => {
    // A chunked upload that never ends, 20,000 empty arrays per part: a server that reads the
    // whole body before checking it never answers.
    const early = await sendHugeBody('/api/chunk', { authorization: t.ownerKey, 'tr-dataset': t.datasetId });
    expect(early.status, early.text).toBe(400);
    expect(JSON.parse(early.text).message).toMatch(/body has an array of more than 10000 elements/);
    expect(early.sentBytes).toBeLessThan(1_000_000);
    await healthWithin(2000);
  });

  it('a wide flat body of empty arrays is answered promptly with a 4xx, and health stays up', async () => {
    const wide = '[' + '[],'.repeat(300_000) + '[]]'; // ~900 KB, within the chunk-write limit
    const started = performance.now();
    await expectRejected(stack, () => t.ds.req('POST', '/api/chunk', { raw: wide }), 400);
    expect(performance.now() - started).toBeLessThan(5000);
    await healthWithin(2000);
  });
});

describe('scopes at key creation', () => {
  it('a placeholder that is not a whole segment is 400 (it once made every request of the key take 13 s)', async () => {
    await expectRejected(
      stack,
      () => t.org.post('/api/organization/api_key', { name: 'evil', role: 0, scopes: ['POST /api/{}{}{}{}{}{}{}{}{}{}!'] }),
      400,
      /scopes\[0\].*segment/,
    );
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'evil', role: 0, scopes: ['GET /api/chunk/a{id}'] }), 400, /segment/);
  });

  it('too many scopes or too long a scope is 400 naming the limit', async () => {
    const many = Array.from({ length: 129 }, (_, i) => `GET /api/chunk/x${i}`);
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'many', role: 0, scopes: many }), 400, /at most 128 scopes/);
    const long = `GET /api/${'a'.repeat(300)}`;
    await expectRejected(stack, () => t.org.post('/api/organization/api_key', { name: 'long', role: 0, scopes: [long] }), 400, /256 characters/);
    // PUT /api/user validates membership scopes the same way.
    await expectRejected(stack, () => t.org.put('/api/user', { user_id: '00000000-0000-4000-8000-000000000000', scopes: many }), 400, /at most 128 scopes/);
  });

  it('128 valid scopes with placeholders are accepted and matched quickly', async () => {
    const scopes = [...Array.from({ length: 127 }, (_, i) => `GET /api/chunk_group/{g}/x${i}`), 'GET /api/chunk/tracking_id/{tracking_id}'];
    const key = await createKey(stack, t.orgId, { role: 0, scopes });
    const seeded = await t.ds.post('/api/chunk', { chunk_html: 'scoped seed', tracking_id: 'scoped-seed' });
    expect(seeded.status, seeded.text).toBe(200);
    const started = performance.now();
    const got = await as(key, { 'tr-dataset': t.datasetId }).get('/api/chunk/tracking_id/scoped-seed');
    expect(got.status, got.text).toBe(200);
    expect(performance.now() - started).toBeLessThan(2000);
    await expectRejected(stack, () => as(key, { 'tr-dataset': t.datasetId }).post('/api/chunk', { chunk_html: 'no' }), 403, /scope/);
  });
});

describe('a key restricted to datasets stays inside them', () => {
  let restrictedOwner: string;
  let restrictedAdmin: string;
  let unrestrictedKeyId: string;

  beforeAll(async () => {
    restrictedOwner = await createKey(stack, t.orgId, { role: 2, dataset_ids: [t.datasetId] });
    restrictedAdmin = await createKey(stack, t.orgId, { role: 1, dataset_ids: [t.datasetId] });
    const name = unique('victim');
    await createKey(stack, t.orgId, { role: 1, name });
    const listed = await t.org.get('/api/organization/api_key');
    unrestrictedKeyId = listed.body.find((k: { name: string }) => k.name === name).id;
  });

  it('works on its own dataset', async () => {
    const res = await as(restrictedOwner, { 'tr-dataset': t.datasetId }).post('/api/chunk', { chunk_html: 'mine', tracking_id: unique('mine') });
    expect(res.status, res.text).toBe(200);
    const listed = await as(restrictedOwner).get(`/api/dataset/organization/${t.orgId}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((r: { dataset: { id: string } }) => r.dataset.id)).toEqual([t.datasetId]);
  });

  it('every organization, API-key, user and dataset-creation route is 403 saying the key is restricted to datasets', async () => {
    const org = as(restrictedOwner, { 'tr-organization': t.orgId });
    const cases: [string, () => ReturnType<Client['get']>][] = [
      ['DELETE /api/organization/{id}', () => as(restrictedOwner).del(`/api/organization/${t.orgId}`)],
      ['PUT /api/organization', () => org.put('/api/organization', { name: 'taken over' })],
      ['PUT /api/organization deleted', () => org.put('/api/organization', { deleted: true })],
      ['GET /api/organization/{id}', () => as(restrictedOwner).get(`/api/organization/${t.orgId}`)],
      ['POST /api/organization', () => as(restrictedOwner).post('/api/organization', { name: 'another' })],
      ['POST /api/organization/api_key', () => org.post('/api/organization/api_key', { name: 'k', role: 2 })],
      ['GET /api/organization/api_key', () => org.get('/api/organization/api_key')],
      ['DELETE /api/organization/api_key/{id}', () => org.del(`/api/organization/api_key/${unrestrictedKeyId}`)],
      ['GET /api/organization/usage/{id}', () => as(restrictedOwner).get(`/api/organization/usage/${t.orgId}`)],
      ['POST /api/organization/usage/{id}', () => as(restrictedOwner).post(`/api/organization/usage/${t.orgId}`, {})],
      ['GET /api/organization/users/{id}', () => as(restrictedOwner).get(`/api/organization/users/${t.orgId}`)],
      ['PUT /api/user', () => org.put('/api/user', { user_id: '00000000-0000-4000-8000-000000000000', role: 0 })],
      ['POST /api/dataset', () => org.post('/api/dataset', { dataset_name: 'sneaky' })],
    ];
    for (const [name, call] of cases) {
      const res = await expectRejected(stack, call, 403, /restricted to datasets/);
      expect(res.status, name).toBe(403);
    }
  });

  it('a restricted admin key can neither list the keys nor revoke an unrestricted one', async () => {
    const org = as(restrictedAdmin, { 'tr-organization': t.orgId });
    await expectRejected(stack, () => org.get('/api/organization/api_key'), 403, /restricted to datasets/);
    await expectRejected(stack, () => org.del(`/api/organization/api_key/${unrestrictedKeyId}`), 403, /restricted to datasets/);
    expect(await countRows(stack, 'api_keys', 'id = ?', unrestrictedKeyId)).toBe(1);
  });

  it('the organization is still there and not flagged', async () => {
    const org = await t.org.get(`/api/organization/${t.orgId}`);
    expect(org.status, org.text).toBe(200);
    expect(org.body.deleted).toBe(false);
  });
});

describe('who may create organizations', () => {
  /** An API-only user: owner of its own organization, with that owner key. */
  async function apiOnlyUser(): Promise<{ orgId: string; ownerKey: string; userId: string }> {
    const created = await as(stack.adminKey).post('/api/auth/create_api_only_user', { user_email: `${unique('u')}@example.com`, user_name: 'U' });
    expect(created.status, created.text).toBe(200);
    return { orgId: created.body.organization_id, ownerKey: created.body.api_key, userId: created.body.user.id };
  }

  it('a read key is 403 (it used to create organizations without limit); an admin key of the same user may', async () => {
    const u = await apiOnlyUser();
    const readKey = await createKey(stack, u.orgId, { role: 0 }, u.ownerKey);
    await expectRejected(stack, () => as(readKey).post('/api/organization', { name: 'from read' }), 403, /admin/);
    const adminKey = await createKey(stack, u.orgId, { role: 1 }, u.ownerKey);
    const ok = await as(adminKey).post('/api/organization', { name: 'from admin' });
    expect(ok.status, ok.text).toBe(200);
  });

  it('an admin key of a user demoted to read is 403: the key never acts above its user', async () => {
    const u = await apiOnlyUser();
    const adminKey = await createKey(stack, u.orgId, { role: 1 }, u.ownerKey);
    const demote = await as(u.ownerKey, { 'tr-organization': u.orgId }).put('/api/user', { user_id: u.userId, role: 0 });
    expect(demote.status, demote.text).toBe(204);
    await expectRejected(stack, () => as(adminKey).post('/api/organization', { name: 'demoted' }), 403, /admin/);
  });

  it(`a user may belong to at most ${MAX_ORGS} organizations; the next is 403 naming the limit`, async () => {
    const u = await apiOnlyUser();
    for (let i = 1; i < MAX_ORGS; i++) {
      const res = await as(u.ownerKey).post('/api/organization', { name: `mine ${i}` });
      expect(res.status, res.text).toBe(200);
    }
    await expectRejected(stack, () => as(u.ownerKey).post('/api/organization', { name: 'one too many' }), 403, new RegExp(`QUARRY_MAX_ORGANIZATIONS_PER_USER = ${MAX_ORGS}`));
  });

  it('concurrent creations cannot overshoot the cap', async () => {
    const u = await apiOnlyUser();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => as(u.ownerKey).post('/api/organization', { name: `race ${i}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(MAX_ORGS - 1);
    expect(results.filter((r) => r.status === 403)).toHaveLength(6 - (MAX_ORGS - 1));
    expect(await countRows(stack, 'memberships', 'user_id = ?', u.userId)).toBe(MAX_ORGS);
  });

  it('ADMIN_API_KEY is not capped (it owns no organization)', async () => {
    for (let i = 0; i < MAX_ORGS + 1; i++) {
      const res = await as(stack.adminKey).post('/api/organization', { name: unique('operator') });
      expect(res.status, res.text).toBe(200);
    }
  });
});

describe('another dataset id of another organization', () => {
  it('is 404 like an absent one on every dataset route, so nobody learns it exists or who owns it', async () => {
    const other = await createTenant(stack);
    const secondOfT = await createDataset(stack, t.orgId, t.ownerKey);
    for (const id of [other.datasetId, secondOfT]) {
      const foreign = id === other.datasetId ? t.ownerKey : other.ownerKey;
      const owner = id === other.datasetId ? other.orgId : t.orgId;
      for (const call of [
        () => as(foreign, { 'tr-dataset': id }).post('/api/chunk/search', { query: 'x', search_type: 'bm25' }),
        () => as(foreign).get(`/api/dataset/${id}`),
        () => as(foreign).del(`/api/dataset/${id}`),
        () => as(foreign).put(`/api/dataset/clear/${id}`),
        () => as(foreign).get(`/api/dataset/groups/${id}/1`),
      ]) {
        const res = await expectRejected(stack, call, 404, /Could not find dataset/);
        expect(res.text).not.toContain(owner);
      }
    }
  });
});
