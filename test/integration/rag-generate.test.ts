/**
 * POST /api/chunk/generate end to end: the real facade enqueues the answer, the real job worker
 * asks a fake OpenAI-compatible server (real HTTP and SSE on loopback) and streams its text back
 * through Redis. Checked: the exact prompt the model received, streamed and non-streamed bodies,
 * TR-QueryID = the stored RAG record, retries, provider failures before and after text, client
 * disconnects reaching the provider, every invalid parameter, and the extractive default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { fakeTokens, startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { expectRejected, queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
let ds: Client;
let readDs: Client;
let extractiveDs: Client;
let datasetId: string;
const ids: string[] = [];

const SYSTEM = 'You answer questions about ducks.';
const RAG = 'Answer from the documents and cite them:';
const TEXTS = ['<p>Ducks <b>quack</b> loudly.</p>', '<p>Geese honk at dawn.</p>', '<p>Swans glide on lakes.</p>'];

beforeAll(async () => {
  llm = await startFakeLlm();
  stack = await startStack({ env: { QUARRY_LLM_MAX_RETRIES: '2' } });
  tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: { LLM_BASE_URL: llm.url, LLM_API_KEY: 'sk-fake-secret', SYSTEM_PROMPT: SYSTEM, RAG_PROMPT: RAG, LLM_DEFAULT_MODEL: 'fake-model', TEMPERATURE: 0.3, SEMANTIC_ENABLED: false },
  });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  const readKey = await createKey(stack, tenant.orgId, { role: 0 });
  readDs = client(stack.baseUrl, { authorization: readKey, 'tr-dataset': datasetId });
  const created = await ds.post('/api/chunk', TEXTS.map((chunk_html, i) => ({ chunk_html, link: `https://birds.example/${i}` })));
  expect(created.status, created.text).toBe(200);
  ids.push(...created.body.chunk_metadata.map((c: { id: string }) => c.id));
  const extractiveId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { SEMANTIC_ENABLED: false } });
  extractiveDs = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': extractiveId });
  expect((await extractiveDs.post('/api/chunk', TEXTS.map((chunk_html) => ({ chunk_html })))).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

/** A streamed POST read chunk by chunk: each chunk's text and when it arrived. */
async function streamed(path: string, body: unknown, headers: Record<string, string>, signal?: AbortSignal) {
  const res = await fetch(stack.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal });
  const chunks: { text: string; at: number }[] = [];
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  return {
    res,
    chunks,
    async read(stopAfter = Infinity): Promise<string> {
      while (chunks.length < stopAfter) {
        const r = await reader.read();
        if (r.done) break;
        chunks.push({ text: decoder.decode(r.value, { stream: true }), at: Date.now() });
      }
      return chunks.map((c) => c.text).join('');
    },
  };
}

async function ragRow(id: string) {
  return eventually({ timeoutMs: 15_000, what: `the RAG record ${id}` }, async () => {
    const rows = await queryStore<Record<string, unknown>>(stack, 'SELECT * FROM rag_queries WHERE id = ?', id);
    return rows[0];
  });
}

const conversation = [
  { role: 'user', content: 'Which bird quacks?' },
  { role: 'assistant', content: 'Let me look.' },
  { role: 'user', content: 'Tell me which one quacks.' },
];

describe('POST /api/chunk/generate', () => {
  it('sends the exact prompt, streams the scripted text, and records it under TR-QueryID', async () => {
    const reply = 'Ducks quack [1], geese honk [2].';
    llm.script({ reply, tokenDelayMs: 5 });
    const before = llm.requests.length;
    const order = [ids[1]!, ids[0]!];
    const res = await ds.post('/api/chunk/generate', { prev_messages: conversation, chunk_ids: order, user_id: 'u-1', metadata: { page: 'faq' } });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe(reply);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const queryId = res.headers.get('tr-queryid');
    expect(queryId).toMatch(/^[0-9a-f-]{36}$/);
    expect(llm.requests.length).toBe(before + 1);
    const sent = llm.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-fake-secret');
    expect(sent.body).toMatchObject({ model: 'fake-model', stream: true, temperature: 0.3, frequency_penalty: 0.7, presence_penalty: 0.7 });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: "{'doc': 1, 'text': 'Geese honk at dawn.'}" },
      { role: 'user', content: "{'doc': 2, 'text': 'Ducks quack loudly.'}" },
      { role: 'user', content: 'Which bird quacks?' },
      { role: 'assistant', content: 'Let me look.' },
      { role: 'user', content: `${RAG} Tell me which one quacks.` },
    ]);
    const row = await ragRow(queryId!);
    expect(row).toMatchObject({ dataset_id: expect.any(String), rag_type: 'chosen_chunks', user_message: 'Tell me which one quacks.', llm_response: reply, top_score: 0, user_id: 'u-1' });
    expect(JSON.parse(row.results as string)).toEqual(order.map((id) => ({ id, score: 0 })));
    expect(JSON.parse(row.metadata as string)).toEqual({ page: 'faq' });
    expect(Number(row.completion_tokens)).toBe(fakeTokens(reply).length);
    expect(Number(row.prompt_tokens)).toBeGreaterThan(0);
  });

  it('answers one JSON string when stream_response is false, with the caller\'s prompt and options', async () => {
    const reply = 'Swans glide [1].';
    llm.script({ reply });
    const res = await readDs.post('/api/chunk/generate', {
      prev_messages: [{ role: 'user', content: 'What do swans do?' }],
      chunk_ids: [ids[2], '00000000-0000-4000-8000-000000000000', ids[2]],
      stream_response: false,
      prompt: 'Be terse:',
      model: 'other-model',
      temperature: 1.5,
      frequency_penalty: -1,
      presence_penalty: 2,
      max_tokens: 50,
      stop_tokens: ['END', 'STOP'],
      context_options: { include_links: true },
      highlight_results: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toBe(reply);
    const sent = llm.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'other-model', temperature: 1.5, frequency_penalty: -1, presence_penalty: 2, max_tokens: 50, stop: ['END', 'STOP'] });
    // The unknown id is dropped and the repeated one sent once.
    expect(sent.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: "{'doc': 1, 'text': 'Swans glide on lakes.', 'link': 'https://birds.example/2'}" },
      { role: 'user', content: 'Be terse: What do swans do?' },
    ]);
    const row = await ragRow(res.headers.get('tr-queryid')!);
    expect(row.llm_response).toBe(reply);
  });

  it('sends the last message alone when prompt is the empty string', async () => {
    llm.script({ reply: 'ok' });
    const res = await ds.post('/api/chunk/generate', { prev_messages: [{ role: 'user', content: 'Just this.' }], chunk_ids: [], prompt: '' });
    expect(res.status, res.text).toBe(200);
    expect(llm.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Just this.' },
    ]);
  });

  it('sends the chunks\' images with image_config.use_images (at most images_per_chunk) and the question\'s images', async () => {
    const pictured = await ds.post('/api/chunk', [{ chunk_html: '<p>A heron stands still.</p>', image_urls: ['https://img.example/h1.png', 'https://img.example/h2.png', 'https://img.example/h3.png'] }]);
    expect(pictured.status, pictured.text).toBe(200);
    const heron = pictured.body.chunk_metadata[0].id as string;
    llm.script({ reply: 'A heron [1].' });
    const res = await ds.post('/api/chunk/generate', {
      prev_messages: [{ role: 'user', content: 'What bird is this?' }],
      chunk_ids: [heron],
      image_config: { use_images: true, images_per_chunk: 2 },
      image_urls: ['https://img.example/question.png'],
      prompt: '',
    });
    expect(res.status, res.text).toBe(200);
    const messages = llm.requests.at(-1)!.body.messages;
    expect(messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: "{'doc': 1, 'text': 'A heron stands still.'}" },
        { type: 'image_url', image_url: { url: 'https://img.example/h1.png' } },
        { type: 'image_url', image_url: { url: 'https://img.example/h2.png' } },
      ],
    });
    expect(JSON.stringify(messages.slice(2))).toContain('https://img.example/question.png');
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'What bird is this?' });
  });

  it('retries a 429 and answers', async () => {
    llm.script({ reply: 'after a retry', statuses: [429] });
    const before = llm.requests.length;
    const res = await ds.post('/api/chunk/generate', { prev_messages: conversation, chunk_ids: [ids[0]] });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('after a retry');
    expect(llm.requests.length).toBe(before + 2);
  });

  it.each([true, false])('turns a provider that keeps failing into a 400 (stream_response %s), and records nothing', async (stream) => {
    llm.script({ statuses: [500, 500, 500, 500] });
    const res = await ds.post('/api/chunk/generate', { prev_messages: conversation, chunk_ids: [ids[0]], stream_response: stream });
    expect(res.status, res.text).toBe(400);
    expect(res.body.message).toMatch(/^Bad response from LLM server provider: /);
    const id = res.headers.get('tr-queryid');
    await new Promise((r) => setTimeout(r, 600));
    if (id) expect(await queryStore(stack, 'SELECT id FROM rag_queries WHERE id = ?', id)).toEqual([]);
  });

  it('streams progressively: the first bytes arrive long before the last token is produced', async () => {
    const reply = 'one two three four five six seven eight nine ten';
    llm.script({ reply, tokenDelayMs: 150 });
    const started = Date.now();
    const s = await streamed('/api/chunk/generate', { prev_messages: conversation, chunk_ids: [ids[0]] }, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
    expect(s.res.status).toBe(200);
    const text = await s.read();
    const ended = Date.now();
    expect(text).toBe(reply);
    expect(s.chunks.length).toBeGreaterThan(3);
    // Ten tokens 150 ms apart: the first is out ~1.3 s before the last is produced.
    expect(s.chunks[0]!.at - started).toBeLessThan(ended - started - 800);
    expect(reply.startsWith(s.chunks[0]!.text)).toBe(true);
  });

  it('runs QUARRY_RAG_CONCURRENCY answers at once, across the job process\'s RAG workers', async () => {
    // 40 slow answers against the default 64 at once (four BullMQ workers of 16): all 40 reach
    // the provider before the first ends. A process running only one worker of 16 would have 16.
    const n = 40;
    llm.script({ reply: (body) => `${/q\d+/.exec(String(body.messages.at(-1)?.content))?.[0]} a b c d e f g h i`, tokenDelayMs: 300 });
    const before = llm.requests.length;
    const headers = { authorization: tenant.ownerKey, 'tr-dataset': datasetId };
    const reads = Array.from({ length: n }, (_, i) =>
      streamed('/api/chunk/generate', { prev_messages: [{ role: 'user', content: `q${i}` }], chunk_ids: [] }, headers).then((s) => s.read()),
    );
    await Promise.race(reads);
    expect(llm.requests.length - before).toBe(n);
    const texts = await Promise.all(reads);
    texts.forEach((text, i) => expect(text).toBe(`q${i} a b c d e f g h i`));
  });

  it('ends the body with an error line when the provider drops the connection mid-answer, and records nothing', async () => {
    const reply = 'alpha beta gamma delta epsilon';
    llm.script({ reply, tokenDelayMs: 20, dropAfterTokens: 3 });
    const res = await ds.post('/api/chunk/generate', { prev_messages: conversation, chunk_ids: [ids[0]] });
    expect(res.status).toBe(200);
    const [text, error] = res.text.split('\n\n[error: ');
    expect(text).toBe(fakeTokens(reply).slice(0, 3).join(''));
    expect(error).toMatch(/^Bad response from LLM server provider: .*\]$/s);
    await new Promise((r) => setTimeout(r, 600));
    expect(await queryStore(stack, 'SELECT id FROM rag_queries WHERE id = ?', res.headers.get('tr-queryid'))).toEqual([]);
  });

  it('cancels the upstream request when the client disconnects', async () => {
    llm.script({ reply: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '), tokenDelayMs: 100 });
    const abortedBefore = llm.aborted;
    const ctl = new AbortController();
    const s = await streamed('/api/chunk/generate', { prev_messages: conversation, chunk_ids: [ids[0]] }, { authorization: tenant.ownerKey, 'tr-dataset': datasetId }, ctl.signal);
    await s.read(1);
    ctl.abort();
    // The worker sees the cancel key within a heartbeat and aborts its request: well before the 10 s answer ends.
    await eventually({ timeoutMs: 4000, what: 'the fake LLM to see its client hang up' }, () => llm.aborted > abortedBefore);
  });

  it('answers extractively with [n] citations when the dataset has no LLM_BASE_URL', async () => {
    const requests = llm.requests.length;
    const res = await extractiveDs.post('/api/chunk/generate', {
      prev_messages: [{ role: 'user', content: 'Which bird honks at dawn?' }],
      chunk_ids: [],
      stream_response: false,
    });
    expect(res.status, res.text).toBe(200);
    expect(typeof res.body).toBe('string');
    expect(res.body.split('\n')[0]).toMatch(/extractive/i);
    expect(llm.requests.length).toBe(requests);
  });

  it('cites the document that answers, in an extractive answer', async () => {
    const chunks = (await extractiveDs.post('/api/chunks/scroll', { page_size: 10 })).body.chunks as { id: string; chunk_html: string }[];
    const order = [...chunks].sort((a, b) => a.chunk_html.localeCompare(b.chunk_html)).map((c) => c.id);
    const honk = chunks.findIndex((c) => c.chunk_html.includes('honk'));
    expect(honk).toBeGreaterThanOrEqual(0);
    const res = await extractiveDs.post('/api/chunk/generate', { prev_messages: [{ role: 'user', content: 'Which bird honks at dawn?' }], chunk_ids: order });
    expect(res.status, res.text).toBe(200);
    const n = order.indexOf(chunks[honk]!.id) + 1;
    expect(res.text).toMatch(/extractive/i);
    expect(res.text).toMatch(new RegExp(`Geese honk at dawn\\.? ?\\[${n}\\]`));
  });
});

describe('POST /api/chunk/generate refuses bad input with a 400 naming the field', () => {
  const ok = () => ({ prev_messages: [{ role: 'user', content: 'hi' }], chunk_ids: [ids[0]] });
  it.each([
    ['no prior message', { prev_messages: [] }, /^There needs to be at least 1 prior message$/],
    ['prev_messages missing', { prev_messages: undefined }, /prev_messages/],
    ['a bad role', { prev_messages: [{ role: 'robot', content: 'x' }] }, /role/],
    ['content not a string', { prev_messages: [{ role: 'user', content: 5 }] }, /content/],
    ['chunk_ids missing', { chunk_ids: undefined }, /chunk_ids/],
    ['a chunk id that is not a uuid', { chunk_ids: ['nope'] }, /chunk_ids\[0\]/],
    ['too many chunk ids', { chunk_ids: Array.from({ length: 101 }, () => '00000000-0000-4000-8000-000000000000') }, /chunk_ids.*at most 100/],
    ['temperature above 2', { temperature: 2.5 }, /temperature/],
    ['temperature below 0', { temperature: -0.1 }, /temperature/],
    ['temperature a string', { temperature: 'hot' }, /temperature/],
    ['frequency_penalty above 2', { frequency_penalty: 3 }, /frequency_penalty/],
    ['presence_penalty below -2', { presence_penalty: -2.5 }, /presence_penalty/],
    ['negative max_tokens', { max_tokens: -1 }, /max_tokens/],
    ['fractional max_tokens', { max_tokens: 1.5 }, /max_tokens/],
    ['five stop tokens', { stop_tokens: ['a', 'b', 'c', 'd', 'e'] }, /stop_tokens/],
    ['stream_response not a boolean', { stream_response: 'yes' }, /stream_response/],
    ['prompt not a string', { prompt: 7 }, /prompt/],
    ['image_urls not strings', { image_urls: [1] }, /image_urls/],
    ['images_per_chunk negative', { image_config: { use_images: true, images_per_chunk: -1 } }, /images_per_chunk/],
    ['include_links not a boolean', { context_options: { include_links: 'no' } }, /include_links/],
    ['model not a string', { model: 42 }, /model/],
    ['user_id too long', { user_id: 'u'.repeat(1025) }, /user_id/],
    ['audio input', { audio_input: 'UklGRg==' }, /^Audio input is not supported: no transcription endpoint is configured$/],
  ])('%s', async (_name, patch, message) => {
    const requests = llm.requests.length;
    const body = { ...ok(), ...patch };
    await expectRejected(stack, () => ds.post('/api/chunk/generate', body), 400, message);
    expect(llm.requests.length).toBe(requests);
  });

  it('refuses a body that is not an object, and a caller without a key', async () => {
    await expectRejected(stack, () => ds.post('/api/chunk/generate', [1, 2]), 400);
    const keyless = client(stack.baseUrl, { 'tr-dataset': datasetId });
    expect((await keyless.post('/api/chunk/generate', ok())).status).toBe(401);
  });
});
