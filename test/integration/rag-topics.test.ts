/**
 * Topics end to end on the real stack: create (named by the caller, or by the dataset's model
 * from the first message: the fake OpenAI-compatible server, or the embedded extractive default
 * with no LLM_BASE_URL), rename, clone (with its messages), delete, list by owner; the wire shape;
 * roles; and every refusal (400/403/404 with `{message}`, nothing stored).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { expectRejected } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
/** The tenant's dataset answered by the fake model. */
let ds: Client;
let datasetId: string;
/** Another dataset of the same organization (extractive default). */
let other: Client;
let reader: Client;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  llm = await startFakeLlm();
  stack = await startStack();
  tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { LLM_BASE_URL: llm.url, LLM_DEFAULT_MODEL: 'fake-model' } });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  other = tenant.ds;
  const readKey = await createKey(stack, tenant.orgId, { role: 0 });
  reader = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': datasetId });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

/** Creates a topic and returns its wire object. */
async function createTopic(c: Client, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await c.post('/api/topic', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('create', () => {
  it('keeps the given name and answers the Topic shape without asking the model', async () => {
    const asked = llm.requests.length;
    const t = await createTopic(ds, { owner_id: 'owner-a', name: 'My topic', metadata: { k: 1 } });
    expect(Object.keys(t).sort()).toEqual(['created_at', 'dataset_id', 'deleted', 'id', 'name', 'owner_id', 'updated_at']);
    expect(t).toMatchObject({ name: 'My topic', owner_id: 'owner-a', dataset_id: datasetId, deleted: false });
    expect(t.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.created_at).toMatch(TIMESTAMP);
    expect(t.updated_at).toMatch(TIMESTAMP);
    expect(llm.requests.length).toBe(asked);
  });

  it('names the topic after the first message through the dataset model', async () => {
    llm.script({ reply: 'Feeding Cats Well' });
    const asked = llm.requests.length;
    const t = await createTopic(ds, { owner_id: 'owner-b', first_user_message: 'what should I feed my cat in winter?' });
    expect(t.name).toBe('Feeding Cats Well');
    expect(llm.requests.length).toBe(asked + 1);
    const sent = llm.requests.at(-1)!.body;
    expect(sent.model).toBe('fake-model');
    expect(JSON.stringify(sent.messages)).toContain('what should I feed my cat in winter?');
  });

  it('names the topic extractively when the dataset has no model (first words of the message)', async () => {
    const t = await createTopic(other, { owner_id: 'owner-x', first_user_message: 'one two three four five six seven eight nine ten' });
    expect(t.name).toBe('one two three four five six seven eight');
  });

  it('refuses a topic with neither a name nor a first message', async () => {
    for (const body of [{ owner_id: 'o' }, { owner_id: 'o', name: '' }, { owner_id: 'o', name: '  ', first_user_message: '' }, { owner_id: 'o', name: null }]) {
      await expectRejected(stack, () => ds.post('/api/topic', body), 400, /^first_user_message and name must not be empty$/);
    }
  });

  it('refuses malformed bodies with 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'x' }, /owner_id/],
      [{ owner_id: 5, name: 'x' }, /owner_id/],
      [{ owner_id: 'o', name: 7 }, /name/],
      [{ owner_id: 'o', first_user_message: ['x'] }, /first_user_message/],
      [{ owner_id: 'o', name: 'n'.repeat(1025) }, /name/],
      [{ owner_id: 'o', name: 'a\u0000b' }, /name.*NUL/],
      [{ owner_id: 'o\u0000', name: 'x' }, /owner_id/],
      [{ owner_id: 'o'.repeat(1025), name: 'x' }, /owner_id/],
      [{ owner_id: 'o', name: 'x', metadata: { a: 'b'.repeat(70_000) } }, /metadata/],
      [[{ owner_id: 'o', name: 'x' }], /body/],
    ];
    for (const [body, message] of cases) await expectRejected(stack, () => ds.post('/api/topic', body), 400, message);
    await expectRejected(stack, () => ds.req('POST', '/api/topic', { raw: '{"owner_id":' }), 400);
  });

  it('answers 400 when the model fails, and stores no topic', async () => {
    llm.script({ statuses: [500, 500, 500, 500] });
    const res = await expectRejected(stack, () => ds.post('/api/topic', { owner_id: 'owner-fail', first_user_message: 'hello there' }), 400, /topic string/);
    expect(res.body.message).toMatch(/Bad response from LLM server provider/);
    llm.script({});
    expect((await ds.get('/api/topic/owner/owner-fail')).body).toEqual([]);
  });

  it('is for admins and owners only', async () => {
    await expectRejected(stack, () => reader.post('/api/topic', { owner_id: 'o', name: 'x' }), 403);
    await expectRejected(stack, () => client(stack.baseUrl, { 'tr-dataset': datasetId }).post('/api/topic', { owner_id: 'o', name: 'x' }), 401);
  });
});

describe('rename, clone, delete, list', () => {
  it('renames a topic (204) and lists it under its owner', async () => {
    const t = await createTopic(ds, { owner_id: 'owner-r', name: 'before' });
    const res = await ds.put('/api/topic', { topic_id: t.id, name: 'after' });
    expect(res.status, res.text).toBe(204);
    const list = (await ds.get('/api/topic/owner/owner-r')).body;
    expect(list.map((x: any) => [x.id, x.name])).toEqual([[t.id, 'after']]);
    expect(list[0].created_at).toBe(t.created_at);
  });

  it('refuses bad renames', async () => {
    const t = await createTopic(ds, { owner_id: 'owner-r2', name: 'kept' });
    await expectRejected(stack, () => ds.put('/api/topic', { topic_id: t.id, name: '' }), 400, /must not be empty/);
    await expectRejected(stack, () => ds.put('/api/topic', { topic_id: t.id }), 400, /name/);
    await expectRejected(stack, () => ds.put('/api/topic', { topic_id: 'nope', name: 'x' }), 400, /topic_id/);
    await expectRejected(stack, () => ds.put('/api/topic', { topic_id: UNKNOWN, name: 'x' }), 404);
    // Another dataset's topic is not found from this one.
    await expectRejected(stack, () => other.put('/api/topic', { topic_id: t.id, name: 'x' }), 404);
    expect((await ds.get('/api/topic/owner/owner-r2')).body.map((x: any) => x.name)).toEqual(['kept']);
  });

  it('lists only the owner\'s live topics of this dataset, newest first', async () => {
    const a = await createTopic(ds, { owner_id: 'owner-l', name: 'a' });
    const b = await createTopic(ds, { owner_id: 'owner-l', name: 'b' });
    await createTopic(ds, { owner_id: 'owner-other', name: 'c' });
    await createTopic(other, { owner_id: 'owner-l', name: 'elsewhere' });
    const list = (await ds.get('/api/topic/owner/owner-l')).body;
    expect(list.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expect((await ds.get('/api/topic/owner/nobody')).body).toEqual([]);
    await expectRejected(stack, () => ds.get(`/api/topic/owner/${'o'.repeat(1025)}`), 400, /owner_id/);
    await expectRejected(stack, () => reader.get('/api/topic/owner/owner-l'), 403);
  });

  it('clones a topic with its messages, under a new owner and name when given', async () => {
    const t = await createTopic(ds, { owner_id: 'owner-c', name: 'original' });
    llm.script({ reply: 'An answer.' });
    const msg = await ds.post('/api/message', { topic_id: t.id, new_message_content: 'hello', rag_context: 'some context', llm_options: { stream_response: false } });
    expect(msg.status, msg.text).toBe(200);
    const res = await ds.post('/api/topic/clone', { topic_id: t.id, owner_id: 'owner-c2' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'original', owner_id: 'owner-c2', dataset_id: datasetId, deleted: false });
    expect(res.body.id).not.toBe(t.id);
    const copied = (await ds.get(`/api/messages/${res.body.id}`)).body;
    const source = (await ds.get(`/api/messages/${t.id}`)).body;
    expect(copied.map((m: any) => [m.sort_order, m.role, m.content])).toEqual(source.map((m: any) => [m.sort_order, m.role, m.content]));
    expect(copied).toHaveLength(2);
    const named = await ds.post('/api/topic/clone', { topic_id: t.id, name: 'copy' });
    expect(named.body).toMatchObject({ name: 'copy', owner_id: 'owner-c' });
    await expectRejected(stack, () => ds.post('/api/topic/clone', { topic_id: UNKNOWN }), 404);
    await expectRejected(stack, () => other.post('/api/topic/clone', { topic_id: t.id }), 404);
    await expectRejected(stack, () => ds.post('/api/topic/clone', {}), 400, /topic_id/);
  });

  it('deletes a topic (204), then it is gone', async () => {
    const t = await createTopic(ds, { owner_id: 'owner-d', name: 'doomed' });
    await expectRejected(stack, () => other.del(`/api/topic/${t.id}`), 404);
    await expectRejected(stack, () => reader.del(`/api/topic/${t.id}`), 403);
    expect((await ds.del(`/api/topic/${t.id}`)).status).toBe(204);
    expect((await ds.get('/api/topic/owner/owner-d')).body).toEqual([]);
    await expectRejected(stack, () => ds.del(`/api/topic/${t.id}`), 404);
    await expectRejected(stack, () => ds.get(`/api/messages/${t.id}`), 404);
    await expectRejected(stack, () => ds.put('/api/topic', { topic_id: t.id, name: 'x' }), 404);
    await expectRejected(stack, () => ds.del('/api/topic/not-a-uuid'), 400, /topic_id/);
  });
});
