/**
 * A job worker that stops getting the CPU in the middle of a streamed RAG answer (here SIGSTOP for
 * 6 s, longer than two of the follower's one-second polls plus the 3 s an alive key used to live)
 * is not a lost worker: its connection to Redis stays open, so the facade waits, and the answer
 * ends complete once the worker runs again. The job process runs at a low priority
 * (QUARRY_THREAD_NICE), so on a busy machine this is what a local model's answer looks like; it
 * used to end in "the job worker generating this answer was lost" while the worker was still on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { fakeTokens, startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
let datasetId: string;

const PAUSE_MS = 6000;

beforeAll(async () => {
  llm = await startFakeLlm();
  // A job lock far longer than the pause: BullMQ's own stall detection is not what this tests.
  stack = await startStack({ env: { QUARRY_RAG_DEADLINE_MS: '60000', QUARRY_JOB_LOCK_MS: '60000' } });
  tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { LLM_BASE_URL: llm.url, SEMANTIC_ENABLED: false } });
}, 120_000);

afterAll(async () => {
  const pid = stack?.pid('jobs');
  if (pid) process.kill(pid, 'SIGCONT');
  await stack?.stop();
  await llm?.close();
});

describe('a job worker paused mid-answer', () => {
  it('finishes the answer once it runs again, with no error line, and records it', async () => {
    const reply = Array.from({ length: 60 }, (_, i) => `token${i}`).join(' ');
    llm.script({ reply, tokenDelayMs: 20 });
    const res = await fetch(`${stack.baseUrl}/api/chunk/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: tenant.ownerKey, 'tr-dataset': datasetId },
      body: JSON.stringify({ prev_messages: [{ role: 'user', content: 'Count for me.' }], chunk_ids: [] }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(200);
    const queryId = res.headers.get('tr-queryid')!;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (fakeTokens(text).length < 5) {
      const r = await reader.read();
      if (r.done) throw new Error(`the answer ended early: ${text}\n${stack.output().slice(-3000)}`);
      text += decoder.decode(r.value, { stream: true });
    }
    const pid = stack.pid('jobs')!;
    process.kill(pid, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    process.kill(pid, 'SIGCONT');
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
    expect(text, stack.output().slice(-3000)).toBe(reply);
    await eventually({ timeoutMs: 15_000, what: 'the RAG record of the paused answer' }, async () => {
      const rows = await queryStore<{ llm_response: string }>(stack, 'SELECT llm_response FROM rag_queries WHERE id = ?', queryId);
      return rows[0]?.llm_response === reply;
    });
  }, 90_000);
});
