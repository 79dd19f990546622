/**
 * POST /api/chunk/generate answered by a real GGUF model end to end: job workers started with
 * LLM_MODEL_PATH (the tiny generated model of test/helpers/tiny-gguf.ts, run by llama.cpp through
 * node-llama-cpp) answer a dataset without LLM_BASE_URL, streamed and not, with the caller's
 * max_tokens and temperature, and the answer is recorded with its token counts. Job workers
 * whose LLM_MODEL_PATH names no model say so at startup, and answers fail with a clear 503
 * instead of hanging, the worker still up. Needs `./deploy/llama.sh install` (deploy/test.sh runs it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLlamaInstall } from '../../core/llm/llama-cpp.js';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { TINY_WORDS, writeTinyGguf } from '../helpers/tiny-gguf.js';

const TEXTS = ['<p>Ducks <b>quack</b> loudly.</p>', '<p>Geese honk at dawn.</p>'];
const QUESTION = [{ role: 'user', content: 'Which bird quacks?' }];

let dir: string;

/** A stack whose job workers have LLM_MODEL_PATH = `modelPath`, and a dataset without LLM_BASE_URL holding TEXTS. */
async function stackWithModel(modelPath: string): Promise<{ stack: Stack; ds: Client; ids: string[] }> {
  const stack = await startStack({ env: { LLM_MODEL_PATH: modelPath } });
  const tenant = await createTenant(stack);
  const datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { SEMANTIC_ENABLED: false, SYSTEM_PROMPT: 'You answer questions about birds.' } });
  const ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  const created = await ds.post('/api/chunk', TEXTS.map((chunk_html) => ({ chunk_html })));
  expect(created.status, created.text).toBe(200);
  return { stack, ds, ids: created.body.chunk_metadata.map((c: { id: string }) => c.id) };
}

beforeAll(() => {
  if (findLlamaInstall() === null) throw new Error('node-llama-cpp is not installed: run ./deploy/llama.sh install');
  dir = mkdtempSync(path.join(os.tmpdir(), 'quarry-llama-e2e-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a dataset without LLM_BASE_URL, job workers with LLM_MODEL_PATH', () => {
  let stack: Stack;
  let ds: Client;
  let ids: string[];

  beforeAll(async () => {
    ({ stack, ds, ids } = await stackWithModel(writeTinyGguf(path.join(dir, 'tiny.gguf'))));
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('streams the model\'s answer, honours max_tokens and temperature, and records its tokens', async () => {
    const body = { prev_messages: QUESTION, chunk_ids: ids, max_tokens: 20, temperature: 0 };
    const res = await ds.post('/api/chunk/generate', body);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const words = res.text.trim().split(/\s+/);
    expect(words.length).toBeGreaterThan(1);
    for (const w of words) expect([...TINY_WORDS, '.']).toContain(w);
    expect(res.text).not.toMatch(/extractive/i);
    const row = await eventually({ timeoutMs: 15_000, what: 'the RAG record' }, async () => {
      const rows = await queryStore<Record<string, unknown>>(stack, 'SELECT * FROM rag_queries WHERE id = ?', res.headers.get('tr-queryid'));
      return rows[0];
    });
    expect(row.llm_response).toBe(res.text);
    expect(Number(row.completion_tokens)).toBe(20);
    expect(Number(row.prompt_tokens)).toBeGreaterThan(30);
    // Temperature 0: the same answer again, here as one JSON string.
    const again = await ds.post('/api/chunk/generate', { ...body, stream_response: false });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toBe(res.text);
  });

  it('ends an answer at the caller\'s stop string', async () => {
    const full = (await ds.post('/api/chunk/generate', { prev_messages: QUESTION, chunk_ids: ids, max_tokens: 20, temperature: 0 })).text;
    const last = full.trim().split(/\s+/).at(-1)!;
    const cut = full.indexOf(` ${last}`);
    const res = await ds.post('/api/chunk/generate', { prev_messages: QUESTION, chunk_ids: ids, max_tokens: 20, temperature: 0, stop_tokens: [` ${last}`] });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe(full.slice(0, cut));
  });
});

describe('job workers whose LLM_MODEL_PATH names no model', () => {
  let stack: Stack;
  let ds: Client;

  beforeAll(async () => {
    ({ stack, ds } = await stackWithModel(path.join(dir, 'missing.gguf')));
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('say so at startup, and answers fail with a clear 503 while the worker stays up', async () => {
    await eventually({ timeoutMs: 15_000, what: 'the startup error' }, async () => stack.output().includes('LLM_MODEL_PATH is set, but answers will fail') || undefined);
    for (const stream of [true, false]) {
      const res = await ds.post('/api/chunk/generate', { prev_messages: QUESTION, chunk_ids: [], stream_response: stream });
      expect(res.status, res.text).toBe(503);
      expect(res.body.message).toMatch(/^the local language model is unavailable: LLM_MODEL_PATH does not name a readable GGUF file/);
    }
    expect(stack.exits.jobs).toBeUndefined();
  });
});
