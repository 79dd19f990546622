/**
 * A RAG answer past its deadline (QUARRY_RAG_DEADLINE_MS) ends, whatever the provider does: one
 * that has streamed part of its text ends the body with an error line at the deadline, one that
 * has sent nothing is a 504 with {message}; the upstream request is aborted and nothing is
 * recorded. The client never waits on a slow model beyond the deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let ds: Client;

// Long enough that the answer's first token (after 400 ms) is in well before it on a loaded CI
// machine: at 1,500 ms a job taken late by a starved worker answered 504 instead of cutting a stream.
const DEADLINE_MS = 4000;

beforeAll(async () => {
  llm = await startFakeLlm();
  stack = await startStack({ env: { QUARRY_RAG_DEADLINE_MS: String(DEADLINE_MS) } });
  const tenant = await createTenant(stack);
  const datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { LLM_BASE_URL: llm.url, SEMANTIC_ENABLED: false } });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

const question = { prev_messages: [{ role: 'user', content: 'Take your time.' }], chunk_ids: [] };

describe('the RAG deadline', () => {
  it('cuts a slow stream at the deadline with an error line, aborts the upstream request, and records nothing', async () => {
    llm.script({ reply: Array.from({ length: 40 }, (_, i) => `slow${i}`).join(' '), tokenDelayMs: 400 });
    const aborted = llm.aborted;
    const started = Date.now();
    const res = await ds.post('/api/chunk/generate', question);
    const took = Date.now() - started;
    expect(res.status, res.text).toBe(200);
    const [text, error] = res.text.split('\n\n[error: ');
    expect(text).toMatch(/^slow0 slow1 /);
    expect(error).toMatch(/deadline/);
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(took).toBeLessThan(DEADLINE_MS + 3000);
    await eventually({ timeoutMs: 3000, what: 'the fake LLM to see the request aborted' }, () => llm.aborted > aborted);
    await new Promise((r) => setTimeout(r, 600));
    expect(await queryStore(stack, 'SELECT id FROM rag_queries WHERE id = ?', res.headers.get('tr-queryid'))).toEqual([]);
  });

  it.each([true, false])('answers 504 when nothing came before the deadline (stream_response %s)', async (stream) => {
    llm.script({ reply: 'too late', tokenDelayMs: 2 * DEADLINE_MS });
    const started = Date.now();
    const res = await ds.post('/api/chunk/generate', { ...question, stream_response: stream });
    expect(res.status, res.text).toBe(504);
    expect(res.body.message).toMatch(/deadline/);
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 3000);
  });
});
