/**
 * A job worker killed (SIGKILL) in the middle of a streamed RAG answer: the client's response
 * ends with an error line within seconds (the alive key names the worker's Redis connection, now
 * closed; the key itself would live 15 s more), far before the
 * answer's deadline, never hangs; nothing records the cut answer as complete; and the restarted
 * worker never runs the answer again (it would send its text twice), yet answers new requests.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAG_QUEUE } from '../../core/domain/rag.js';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { fakeTokens, startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
let datasetId: string;
let ds: Client;

/** The deadline of an answer in this stack: the kill must be noticed long before it. */
const DEADLINE_MS = 60_000;

beforeAll(async () => {
  llm = await startFakeLlm();
  // A short job lock (QUARRY_JOB_LOCK_MS, 10 s by default), as the other kill tests use: the
  // restarted worker finds the killed answer stalled within ~6 s instead of ~15 s. It bears on
  // nothing else here (the kill is noticed through the worker's closed connection).
  stack = await startStack({ env: { QUARRY_RAG_DEADLINE_MS: String(DEADLINE_MS), QUARRY_JOB_LOCK_MS: '4000' } });
  tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { LLM_BASE_URL: llm.url, SEMANTIC_ENABLED: false } });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a job worker killed mid-answer', () => {
  it('ends the response with an error line within seconds, records nothing, and never reruns the answer', async () => {
    const reply = Array.from({ length: 200 }, (_, i) => `token${i}`).join(' ');
    llm.script({ reply, tokenDelayMs: 100 });
    const requestsBefore = llm.requests.length;
    const res = await fetch(`${stack.baseUrl}/api/chunk/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: tenant.ownerKey, 'tr-dataset': datasetId },
      body: JSON.stringify({ prev_messages: [{ role: 'user', content: 'Count for me.' }], chunk_ids: [] }),
      signal: AbortSignal.timeout(DEADLINE_MS),
    });
    expect(res.status).toBe(200);
    const queryId = res.headers.get('tr-queryid')!;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (fakeTokens(text).length < 10) {
      const r = await reader.read();
      if (r.done) throw new Error(`the answer ended early: ${text}\n${stack.output().slice(-3000)}`);
      text += decoder.decode(r.value, { stream: true });
    }
    await stack.kill('jobs', 'SIGKILL');
    const killedAt = Date.now();
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
    const endedAfter = Date.now() - killedAt;
    // The follower checks every second, twice, and finds the connection closed: well under 10 s
    // (the key alone would take 15 s to run out).
    expect(endedAfter, stack.output().slice(-3000)).toBeLessThan(10_000);
    const [answer, error] = text.split('\n\n[error: ');
    expect(error, text).toMatch(/^the job worker generating this answer was lost before it finished\]$/);
    expect(reply.startsWith(answer!)).toBe(true);
    expect(answer!.length).toBeLessThan(reply.length);

    // The restarted worker finds the job stalled and fails it (one attempt): the model is not asked again.
    await stack.start('jobs');
    const redis = new Redis(stack.env.QUARRY_REDIS_URL!, { maxRetriesPerRequest: null });
    const queue = new Queue(RAG_QUEUE, { connection: redis });
    try {
      await eventually({ timeoutMs: 30_000, what: 'the killed answer to be failed as stalled', context: () => stack.output().slice(-3000) }, async () => (await queue.getJobState(queryId)) === 'failed');
    } finally {
      await queue.close();
      redis.disconnect();
    }
    await sleep(1000);
    expect(llm.requests.length, stack.output().slice(-3000)).toBe(requestsBefore + 1);
    expect(await queryStore(stack, 'SELECT id FROM rag_queries WHERE id = ?', queryId)).toEqual([]);

    // And it answers new requests.
    llm.script({ reply: 'back again' });
    const again = await ds.post('/api/chunk/generate', { prev_messages: [{ role: 'user', content: 'Still there?' }], chunk_ids: [], stream_response: false });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toBe('back again');
    await eventually({ timeoutMs: 15_000, what: 'the RAG record of the answer after the restart' }, async () => {
      const rows = await queryStore<{ llm_response: string }>(stack, 'SELECT llm_response FROM rag_queries WHERE id = ?', again.headers.get('tr-queryid'));
      return rows[0]?.llm_response === 'back again';
    });
  }, 120_000);
});
