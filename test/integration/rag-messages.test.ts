/**
 * Topic messages end to end on the real stack, the dataset's LLM_BASE_URL pointing at the fake
 * OpenAI-compatible server: the `<chunks>||<completion>` format in both orders, streamed and not;
 * the exact prompt the model received (system prompt, history, `Here's my prompt: ...` with the
 * documents the same search finds through /api/chunk/search); history kept across turns; edit
 * and regenerate replacing the tail; no results answered without the model; a failing or dropped
 * provider storing nothing; every invalid parameter a 400 `{message}` with nothing stored; and
 * POST /api/chunk/suggestions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeLlm, type FakeLlm, type FakeLlmBody } from '../helpers/fake-llm.js';
import { createDataset, createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows, expectRejected, queryStore } from '../helpers/store-snapshot.js';

let stack: Stack;
let llm: FakeLlm;
let tenant: Tenant;
let ds: Client;
let v1: Client;
let reader: Client;
let datasetId: string;

const SYSTEM = 'You are the quarry test assistant.';
const RAG = 'Answer from these documents:';
const NO_RESULT = 'I was not able to find any relevant information to answer your query.';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const CORPUS = [
  { chunk_html: 'Cats eat fish and chicken every day.', tag_set: ['pets', 'cats'], link: 'https://example.com/cats', num_value: 3, tracking_id: 'cats', group_tracking_ids: ['mammals'] },
  { chunk_html: 'Dogs eat meat and bones.', tag_set: ['pets'], link: 'https://example.com/dogs', tracking_id: 'dogs', group_tracking_ids: ['mammals'] },
  { chunk_html: 'Parrots eat seeds and fruit.', link: null, tracking_id: 'parrots', group_tracking_ids: ['birds'] },
  { chunk_html: 'The ocean is deep and blue.', tracking_id: 'ocean' },
  { chunk_html: 'Mountains are tall || and cold in winter.', tracking_id: 'mountains' },
];

beforeAll(async () => {
  llm = await startFakeLlm();
  stack = await startStack();
  tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: { LLM_BASE_URL: llm.url, LLM_DEFAULT_MODEL: 'fake-model', SYSTEM_PROMPT: SYSTEM, RAG_PROMPT: RAG },
  });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  v1 = ds.with({ 'x-api-version': 'V1' });
  reader = client(stack.baseUrl, { authorization: await createKey(stack, tenant.orgId, { role: 0 }), 'tr-dataset': datasetId });
  const res = await ds.post('/api/chunk', CORPUS);
  expect(res.status, res.text).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
});

async function newTopic(): Promise<string> {
  const res = await ds.post('/api/topic', { owner_id: 'tester', name: 'a topic' });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

/** What /api/chunk/search answers (V1) for the same search: the oracle of a message's chunks. */
async function searched(query: string, pageSize: number, extra: Record<string, unknown> = {}): Promise<Record<string, any>[]> {
  const res = await v1.post('/api/chunk/search', { search_type: 'bm25', query, page_size: pageSize, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body.score_chunks.map((s: any) => ({ ...s.metadata[0], highlights: s.highlights, score: s.score }));
}

/** The topic chat prompt of wire-format 5.6, built here from the searched chunks. */
function expectedPrompt(question: string, chunks: Record<string, any>[], currency?: string): string {
  const numValue = (n: number | null) => (n !== null && currency ? `${currency} ${n}` : n);
  const docs = chunks.map((c, i) => JSON.stringify({ doc: i + 1, text: c.chunk_html, num_value: numValue(c.num_value), link: c.link })).join('\n\n');
  return `Here's my prompt: ${question}\n\n${RAG} ${docs}`;
}

const ask = (topicId: string, content: string, extra: Record<string, unknown> = {}) =>
  ds.post('/api/message', { topic_id: topicId, new_message_content: content, search_type: 'bm25', ...extra });

/** Splits `<chunks>||<completion>` (or the other way round) and parses the chunks. */
function split(text: string, completionFirst = false): { chunks: any[]; completion: string } {
  if (completionFirst) {
    const at = text.lastIndexOf('||');
    return { completion: text.slice(0, at), chunks: JSON.parse(text.slice(at + 2)) };
  }
  const at = text.indexOf('||');
  return { chunks: JSON.parse(text.slice(0, at)), completion: text.slice(at + 2) };
}

const chatOf = (body: FakeLlmBody) => body.messages.map((m) => ({ role: m.role, content: m.content }));
const messages = async (topicId: string) => {
  const res = await ds.get(`/api/messages/${topicId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as any[];
};

describe('one message', () => {
  it('streams <JSON chunks>||<completion> and sends the model the topic chat prompt', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'Cats eat fish [1].', usage: { prompt_tokens: 41, completion_tokens: 5 } });
    const res = await ask(topicId, 'what do cats eat', { page_size: 3 });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('tr-queryid')).toMatch(/^[0-9a-f-]{36}$/);
    const expected = await searched('what do cats eat', 3);
    expect(expected.length).toBe(3);
    const { chunks, completion } = split(res.text);
    expect(completion).toBe('Cats eat fish [1].');
    expect(chunks).toEqual(expected);
    // Flat V1 chunks: tag_set is the comma-joined string.
    expect(chunks[0]).toMatchObject({ tracking_id: 'cats', tag_set: 'pets,cats', highlights: null });
    const sent = llm.requests.at(-1)!.body;
    expect(sent.model).toBe('fake-model');
    expect(sent.stream).toBe(true);
    expect(chatOf(sent)).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: expectedPrompt('what do cats eat', expected) },
    ]);
    const stored = await messages(topicId);
    expect(stored.map((m) => [m.sort_order, m.role, m.content, m.prompt_tokens, m.completion_tokens])).toEqual([
      [1, 'user', 'what do cats eat', 0, 0],
      [2, 'assistant', res.text, 41, 5],
    ]);
    expect(Object.keys(stored[0]).sort()).toEqual(
      ['completion_tokens', 'content', 'created_at', 'dataset_id', 'deleted', 'id', 'prompt_tokens', 'role', 'sort_order', 'topic_id', 'updated_at'],
    );
    expect(stored[0]).toMatchObject({ topic_id: topicId, dataset_id: datasetId, deleted: false });
    // The RAG record carries the answer's id, the topic and the search.
    const rows = await eventually({ what: 'the RAG record', timeoutMs: 20_000 }, async () => {
      const r = await queryStore<any>(stack, 'SELECT * FROM rag_queries WHERE id = ?', res.headers.get('tr-queryid'));
      return r.length === 1 ? r : undefined;
    });
    expect(rows[0]).toMatchObject({ topic_id: topicId, rag_type: 'all_chunks', user_message: 'what do cats eat', llm_response: 'Cats eat fish [1].' });
    expect(rows[0].search_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the completion first with completion_first, and answers one JSON string without streaming', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'Dogs eat meat [2].' });
    const expected = await searched('dogs eat', 2);
    const first = await ask(topicId, 'dogs eat', { page_size: 2, llm_options: { completion_first: true } });
    expect(first.status, first.text).toBe(200);
    expect(split(first.text, true)).toEqual({ completion: 'Dogs eat meat [2].', chunks: expected });
    const flat = await ask(topicId, 'dogs eat', { page_size: 2, completion_first: true, stream_response: false });
    expect(flat.status, flat.text).toBe(200);
    expect(flat.headers.get('content-type')).toMatch(/application\/json/);
    expect(typeof flat.body).toBe('string');
    expect(flat.body).toBe(first.text);
    expect(flat.headers.get('tr-queryid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(llm.requests.at(-1)!.body.stream).toBe(true);
  });

  it('strips || from the chunks JSON, and marks up highlights when asked', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'They are tall.' });
    const res = await ask(topicId, 'mountains tall', { page_size: 1, highlight_options: { highlight_strategy: 'exactmatch' } });
    expect(res.status, res.text).toBe(200);
    const { chunks, completion } = split(res.text);
    expect(completion).toBe('They are tall.');
    expect(chunks).toHaveLength(1);
    expect(chunks[0].tracking_id).toBe('mountains');
    expect(res.text.indexOf('||')).toBe(res.text.lastIndexOf('||'));
    const oracle = (await searched('mountains tall', 1, { highlight_options: { highlight_strategy: 'exactmatch' } }))[0]!;
    expect(JSON.stringify(chunks[0])).toBe(JSON.stringify(oracle).replaceAll('||', ''));
    expect(chunks[0].highlights.length).toBeGreaterThan(0);
  });

  it('answers [] || the no-result message without asking the model, and stores the turn', async () => {
    const topicId = await newTopic();
    const asked = llm.requests.length;
    const res = await ask(topicId, 'zebra xylophone quasar');
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe(`[]||${NO_RESULT}`);
    const custom = await ask(topicId, 'zebra xylophone quasar', { no_result_message: 'Nothing here.', llm_options: { stream_response: false } });
    expect(custom.body).toBe('[]||Nothing here.');
    expect(llm.requests.length).toBe(asked);
    expect((await messages(topicId)).map((m) => m.content)).toEqual(['zebra xylophone quasar', `[]||${NO_RESULT}`, 'zebra xylophone quasar', '[]||Nothing here.']);
  });

  it('answers from rag_context alone: no search, the text is the one document', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'Blue.' });
    const res = await ask(topicId, 'what colour is it', { rag_context: 'The sky here is blue.' });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('[]||Blue.');
    const prompt = chatOf(llm.requests.at(-1)!.body).at(-1)!.content;
    expect(prompt).toBe(`Here's my prompt: what colour is it\n\n${RAG} ${JSON.stringify({ doc: 1, text: 'The sky here is blue.', num_value: null, link: null })}`);
  });

  it('writes the currency before each document\'s num_value', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'ok' });
    const res = await ask(topicId, 'cats eat', { page_size: 3, currency: 'USD' });
    expect(res.status, res.text).toBe(200);
    const expected = await searched('cats eat', 3);
    expect(expected.some((c) => c.num_value === 3)).toBe(true);
    const prompt = chatOf(llm.requests.at(-1)!.body).at(-1)!.content;
    expect(prompt).toBe(expectedPrompt('cats eat', expected, 'USD'));
    expect(prompt).toContain('"num_value":"USD 3"');
  });

  it('answers extractively, citing [n], on a dataset without a model', async () => {
    const topic = (await tenant.ds.post('/api/topic', { owner_id: 'o', name: 'extractive' })).body.id;
    const asked = llm.requests.length;
    const res = await tenant.ds.post('/api/message', {
      topic_id: topic,
      new_message_content: 'what do cats eat',
      rag_context: 'The sky is blue today. Cats eat fish and chicken. Mountains are tall.',
    });
    expect(res.status, res.text).toBe(200);
    const { chunks, completion } = split(res.text);
    expect(chunks).toEqual([]);
    expect(completion).toMatch(/extractive/i);
    expect(completion).toMatch(/Cats eat fish and chicken\.? ?\[1\]/);
    expect(llm.requests.length).toBe(asked);
    const stored = (await tenant.ds.get(`/api/messages/${topic}`)).body;
    expect(stored.map((m: any) => m.content)).toEqual(['what do cats eat', res.text]);
  });

  it('passes the sampling options and the system prompt override to the model', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'ok' });
    const res = await ask(topicId, 'parrots', {
      model: 'other-model',
      llm_options: { temperature: 1.25, frequency_penalty: -1, presence_penalty: 1.5, max_tokens: 77, stop_tokens: ['END'], system_prompt: 'Be terse.' },
    });
    expect(res.status, res.text).toBe(200);
    const sent = llm.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'other-model', temperature: 1.25, frequency_penalty: -1, presence_penalty: 1.5, stop: ['END'] });
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(77);
    expect(chatOf(sent)[0]).toEqual({ role: 'system', content: 'Be terse.' });
  });
});

describe('conversation', () => {
  it('keeps the history in order across three turns, answers without their chunks', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'First answer.' });
    const r1 = await ask(topicId, 'cats eat');
    llm.script({ reply: 'Second || answer.' });
    const r2 = await ask(topicId, 'dogs eat', { llm_options: { completion_first: true } });
    llm.script({ reply: 'Third answer.' });
    const r3 = await ask(topicId, 'parrots eat', { page_size: 2 });
    for (const r of [r1, r2, r3]) expect(r.status, r.text).toBe(200);
    const stored = await messages(topicId);
    expect(stored.map((m) => [m.sort_order, m.role])).toEqual([
      [1, 'user'], [2, 'assistant'], [3, 'user'], [4, 'assistant'], [5, 'user'], [6, 'assistant'],
    ]);
    expect(stored.map((m) => m.content)).toEqual(['cats eat', r1.text, 'dogs eat', r2.text, 'parrots eat', r3.text]);
    const expected = await searched('parrots eat', 2);
    expect(chatOf(llm.requests.at(-1)!.body)).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'cats eat' },
      { role: 'assistant', content: 'First answer.' },
      { role: 'user', content: 'dogs eat' },
      { role: 'assistant', content: 'Second || answer.' },
      { role: 'user', content: expectedPrompt('parrots eat', expected) },
    ]);
    // Only the last two messages, and the search over every user message with concat_user_messages_query.
    llm.script({ reply: 'Fourth.' });
    const r4 = await ask(topicId, 'ocean', { number_of_messages_to_include: 2, concat_user_messages_query: true, page_size: 10 });
    expect(r4.status, r4.text).toBe(200);
    const concat = await searched('cats eat\n\ndogs eat\n\nparrots eat\n\nocean', 10);
    expect(chatOf(llm.requests.at(-1)!.body)).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'parrots eat' },
      { role: 'assistant', content: 'Third answer.' },
      { role: 'user', content: expectedPrompt('ocean', concat) },
    ]);
    expect(split(r4.text).chunks).toEqual(concat);
  });

  it('keeps each question with its own answer when messages to one topic run at once', async () => {
    const topicId = await newTopic();
    // Each answer names the question it answers.
    llm.script({ reply: (body) => `answer to ${/^Here's my prompt: (q\d+)/.exec(String(body.messages.at(-1)!.content))?.[1] ?? '?'}`, tokenDelayMs: 5 });
    const asks = Array.from({ length: 6 }, (_, i) => ask(topicId, `q${i}`, { rag_context: 'context' }));
    for (const r of await Promise.all(asks)) expect(r.status, r.text).toBe(200);
    const stored = await messages(topicId);
    expect(stored.map((m) => m.sort_order)).toEqual([...Array(12).keys()].map((i) => i + 1));
    for (let i = 0; i < stored.length; i += 2) {
      expect(stored[i].role).toBe('user');
      expect(stored[i + 1].role).toBe('assistant');
      expect(split(stored[i + 1].content).completion).toBe(`answer to ${stored[i].content}`);
    }
    expect(new Set(stored.filter((m) => m.role === 'user').map((m) => m.content)).size).toBe(6);
    llm.script({});
  });

  it('edits a question (PUT) and regenerates the last answer (PATCH, DELETE), replacing the tail', async () => {
    const topicId = await newTopic();
    for (const [q, a] of [['cats eat', 'A1'], ['dogs eat', 'A2'], ['ocean', 'A3']]) {
      llm.script({ reply: a });
      expect((await ask(topicId, q!)).status).toBe(200);
    }
    const before = await messages(topicId);
    llm.script({ reply: 'A2 edited' });
    const edited = await ds.put('/api/message', { topic_id: topicId, message_sort_order: 3, new_message_content: 'parrots eat', search_type: 'bm25' });
    expect(edited.status, edited.text).toBe(200);
    expect(split(edited.text).completion).toBe('A2 edited');
    expect(chatOf(llm.requests.at(-1)!.body).slice(1, -1)).toEqual([
      { role: 'user', content: 'cats eat' },
      { role: 'assistant', content: 'A1' },
    ]);
    let after = await messages(topicId);
    expect(after.map((m) => [m.sort_order, m.role, m.role === 'user' ? m.content : split(m.content).completion])).toEqual([
      [1, 'user', 'cats eat'], [2, 'assistant', 'A1'], [3, 'user', 'parrots eat'], [4, 'assistant', 'A2 edited'],
    ]);
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));

    for (const method of ['PATCH', 'DELETE']) {
      llm.script({ reply: `regenerated by ${method}` });
      const res = await ds.req(method, '/api/message', { body: { topic_id: topicId, search_type: 'bm25' } });
      expect(res.status, res.text).toBe(200);
      const prompt = chatOf(llm.requests.at(-1)!.body);
      expect(prompt.at(-1)!.content).toMatch(/^Here's my prompt: parrots eat\n\n/);
      expect(prompt.slice(1, -1)).toEqual([{ role: 'user', content: 'cats eat' }, { role: 'assistant', content: 'A1' }]);
      const now = await messages(topicId);
      expect(now).toHaveLength(4);
      expect(now[2]).toEqual(after[2]);
      expect(split(now[3].content).completion).toBe(`regenerated by ${method}`);
      after = now;
    }
  });

  it('refuses edits and regenerations that have nothing to act on', async () => {
    const topicId = await newTopic();
    await expectRejected(stack, () => ds.req('PATCH', '/api/message', { body: { topic_id: topicId } }), 400, /Not enough messages to regenerate/);
    llm.script({ reply: 'A' });
    expect((await ask(topicId, 'cats')).status).toBe(200);
    await expectRejected(stack, () => ds.put('/api/message', { topic_id: topicId, message_sort_order: 5, new_message_content: 'x' }), 404);
    await expectRejected(stack, () => ds.put('/api/message', { topic_id: topicId, message_sort_order: 2, new_message_content: 'x' }), 400, /assistant/);
    await expectRejected(stack, () => ds.put('/api/message', { topic_id: topicId, message_sort_order: 0, new_message_content: 'x' }), 400, /message_sort_order/);
    await expectRejected(stack, () => ds.put('/api/message', { topic_id: topicId, new_message_content: 'x' }), 400, /message_sort_order/);
    await expectRejected(stack, () => ds.req('PATCH', '/api/message', { body: { topic_id: UNKNOWN } }), 404);
  });
});

describe('failures store nothing', () => {
  it('a provider 500 is a 400 before any text, streaming or not', async () => {
    const topicId = await newTopic();
    for (const stream of [true, false]) {
      llm.script({ statuses: [500, 500, 500, 500] });
      let contentType: string | null = null;
      await expectRejected(
        stack,
        async () => {
          const res = await ask(topicId, 'cats eat', { stream_response: stream });
          contentType = res.headers.get('content-type');
          return res;
        },
        400,
        /Bad response from LLM server provider/,
      );
      expect(contentType).toMatch(/application\/json/);
    }
    llm.script({});
    expect(await messages(topicId)).toEqual([]);
  });

  it('a connection dropped mid-answer ends the body with an error line and stores nothing', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'one two three four five six', dropAfterTokens: 3 });
    const res = await ask(topicId, 'cats eat');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/\|\|one two three \n\n\[error: [\s\S]+\]$/);
    llm.script({});
    expect(await messages(topicId)).toEqual([]);
  });

  it('refuses every invalid parameter with 400 {message}, before the model or the store', async () => {
    const topicId = await newTopic();
    const asked = llm.requests.length;
    const base = { topic_id: topicId, new_message_content: 'cats eat' };
    const cases: [unknown, RegExp][] = [
      [{ ...base, llm_options: { temperature: 2.5 } }, /temperature/],
      [{ ...base, temperature: -0.1 }, /temperature/],
      [{ ...base, llm_options: { frequency_penalty: -2.1 } }, /frequency_penalty/],
      [{ ...base, llm_options: { presence_penalty: 3 } }, /presence_penalty/],
      [{ ...base, llm_options: { stop_tokens: ['a', 'b', 'c', 'd', 'e'] } }, /stop_tokens/],
      [{ ...base, llm_options: { max_tokens: -1 } }, /max_tokens/],
      [{ ...base, llm_options: { max_tokens: 1.5 } }, /max_tokens/],
      [{ ...base, llm_options: 'fast' }, /llm_options/],
      [{ ...base, llm_options: { image_config: { images_per_chunk: -1 } } }, /images_per_chunk/],
      [{ ...base, context_options: { include_links: 'yes' } }, /include_links/],
      [{ ...base, topic_id: 'not-a-uuid' }, /topic_id/],
      [{ new_message_content: 'x' }, /topic_id/],
      [{ topic_id: topicId }, /new_message_content/],
      [{ ...base, new_message_content: '   ' }, /new_message_content/],
      [{ ...base, new_message_content: 5 }, /new_message_content/],
      [{ ...base, new_message_content: 'a\u0000b' }, /new_message_content.*NUL/],
      [{ ...base, no_result_message: '\u0000' }, /no_result_message/],
      [{ ...base, audio_input: 'AAAA' }, /Audio input is not supported/],
      [{ ...base, use_agentic_search: true }, /use_agentic_search/],
      [{ ...base, search_type: 'magic' }, /search_type/],
      [{ ...base, page_size: -1 }, /page_size/],
      [{ ...base, filters: { must: [{ field: 'tag_set' }] } }, /filters|condition/],
      [{ ...base, filters: 'x' }, /filters/],
      [{ ...base, score_threshold: 'high' }, /score_threshold/],
      [{ ...base, sort_options: { mmr: { use_mmr: 'yes' } } }, /mmr|sort_options/],
      [{ ...base, highlight_options: { highlight_threshold: 2 } }, /highlight_threshold/],
      [{ ...base, typo_options: { correct_typos: 'yes' } }, /correct_typos|typo_options/],
      [{ ...base, number_of_messages_to_include: -1 }, /number_of_messages_to_include/],
      [{ ...base, concat_user_messages_query: 'no' }, /concat_user_messages_query/],
      [{ ...base, image_urls: 'http://x' }, /image_urls/],
      [{ ...base, search_query: 'q'.repeat(5000) }, /search_query/],
      [{ ...base, new_message_content: 'm'.repeat(70_000) }, /new_message_content/],
      [{ ...base, metadata: { deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) } }, /metadata|nest/],
      [{ ...base, user_id: 7 }, /user_id/],
      [[base], /body/],
    ];
    for (const [body, message] of cases) {
      await expectRejected(stack, () => ds.post('/api/message', body), 400, message);
    }
    await expectRejected(stack, () => ds.post('/api/message', { ...base, topic_id: UNKNOWN }), 404);
    expect(llm.requests.length).toBe(asked);
    expect(await messages(topicId)).toEqual([]);
  });

  it('keeps topics of other datasets and roles apart', async () => {
    const topicId = await newTopic();
    const other = tenant.ds;
    await expectRejected(stack, () => other.post('/api/message', { topic_id: topicId, new_message_content: 'x' }), 404);
    await expectRejected(stack, () => other.get(`/api/messages/${topicId}`), 404);
    await expectRejected(stack, () => reader.post('/api/message', { topic_id: topicId, new_message_content: 'x' }), 403);
    // Reading a topic's messages needs only the read role.
    expect((await reader.get(`/api/messages/${topicId}`)).status).toBe(200);
    await expectRejected(stack, () => ds.get('/api/messages/nope'), 400, /topic_id/);
    expect(await countRows(stack, 'messages', 'topic_id = ?', topicId)).toBe(0);
  });
});

describe('search choices', () => {
  it('searches hybrid when the body names no search type, as the search route would', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'ok' });
    const res = await ds.post('/api/message', { topic_id: topicId, new_message_content: 'what do cats eat', page_size: 3 });
    expect(res.status, res.text).toBe(200);
    const expected = await searched('what do cats eat', 3, { search_type: 'hybrid' });
    expect(expected.length).toBeGreaterThan(0);
    expect(split(res.text).chunks).toEqual(expected);
  });

  it('falls back to fulltext when the dataset turns semantic search off, and refuses a disabled type', async () => {
    const id = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: { LLM_BASE_URL: llm.url, SEMANTIC_ENABLED: false } });
    const c = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': id });
    expect((await c.post('/api/chunk', CORPUS.map(({ group_tracking_ids: _g, ...rest }) => rest))).status).toBe(200);
    const topic = (await c.post('/api/topic', { owner_id: 'o', name: 't' })).body.id;
    llm.script({ reply: 'ok' });
    const res = await c.post('/api/message', { topic_id: topic, new_message_content: 'dogs eat', page_size: 2 });
    expect(res.status, res.text).toBe(200);
    const oracle = await c.with({ 'x-api-version': 'V1' }).post('/api/chunk/search', { search_type: 'fulltext', query: 'dogs eat', page_size: 2 });
    expect(split(res.text).chunks).toEqual(oracle.body.score_chunks.map((s: any) => ({ ...s.metadata[0], highlights: s.highlights, score: s.score })));
    await expectRejected(stack, () => c.post('/api/message', { topic_id: topic, new_message_content: 'dogs', search_type: 'hybrid' }), 400, /SEMANTIC_ENABLED/);
  });

  it('searches over groups with use_group_search: each group brings its best chunk', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'ok' });
    const res = await ask(topicId, 'eat', { use_group_search: true, page_size: 5 });
    expect(res.status, res.text).toBe(200);
    const oracle = await v1.post('/api/chunk_group/group_oriented_search', { search_type: 'bm25', query: 'eat', page_size: 5, group_size: 1 });
    expect(oracle.status, oracle.text).toBe(200);
    const expected = oracle.body.group_chunks.map((g: any) => ({ ...g.metadata[0].metadata[0], highlights: g.metadata[0].highlights, score: g.metadata[0].score }));
    expect(expected).toHaveLength(2);
    expect(expected.map((c: any) => c.tracking_id)).toContain('parrots');
    expect(split(res.text).chunks).toEqual(expected);
  });

  it('keeps only the cited chunks with only_include_docs_used, in both orders', async () => {
    const topicId = await newTopic();
    const expected = await searched('what do cats eat', 3);
    for (const completionFirst of [false, true]) {
      llm.script({ reply: 'Dogs eat meat [2].' });
      const res = await ask(topicId, 'what do cats eat', { page_size: 3, only_include_docs_used: true, llm_options: { completion_first: completionFirst } });
      expect(res.status, res.text).toBe(200);
      expect(split(res.text, completionFirst)).toEqual({ completion: 'Dogs eat meat [2].', chunks: [expected[1]] });
      expect((await messages(topicId)).at(-1).content).toBe(res.text);
    }
  });
});

describe('key default_params', () => {
  it('forces the key\'s search members and no_result_message on messages, as on searches', async () => {
    const key = await createKey(stack, tenant.orgId, { role: 1, default_params: { search_type: 'bm25', page_size: 1, no_result_message: 'Nothing, by key.' } });
    const c = client(stack.baseUrl, { authorization: key, 'tr-dataset': datasetId });
    const topicId = await newTopic();
    llm.script({ reply: 'ok' });
    const found = await c.post('/api/message', { topic_id: topicId, new_message_content: 'cats eat', search_type: 'semantic', page_size: 4 });
    expect(found.status, found.text).toBe(200);
    expect(split(found.text).chunks).toEqual(await searched('cats eat', 1));
    const none = await c.post('/api/message', { topic_id: topicId, new_message_content: 'zebra xylophone', no_result_message: 'mine' });
    expect(none.text).toBe('[]||Nothing, by key.');
  });
});

describe('a client that leaves', () => {
  it('cancels the answer upstream and stores nothing', async () => {
    const topicId = await newTopic();
    llm.script({ reply: 'one two three four five six seven eight nine ten eleven twelve', tokenDelayMs: 150 });
    const aborted = llm.aborted;
    const ctl = new AbortController();
    const res = await fetch(`${stack.baseUrl}/api/message`, {
      method: 'POST',
      headers: { authorization: tenant.ownerKey, 'tr-dataset': datasetId, 'content-type': 'application/json' },
      body: JSON.stringify({ topic_id: topicId, new_message_content: 'cats eat', search_type: 'bm25' }),
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('||');
    ctl.abort();
    await eventually({ what: 'the fake model to see the hang-up', timeoutMs: 10_000 }, () => llm.aborted > aborted);
    // Past the time the whole answer would have taken: still nothing stored.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await messages(topicId)).toEqual([]);
    llm.script({});
  });
});

describe('POST /api/chunk/suggestions', () => {
  it('suggests queries from the chunks a query finds', async () => {
    llm.script({ reply: 'Here are some queries:\n1. best fish for cats\n2. "what do dogs eat"\n- cats' });
    const res = await reader.post('/api/chunk/suggestions', { query: 'cats', search_type: 'bm25' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ queries: ['best fish for cats', 'what do dogs eat'] });
    const prompt = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(prompt).toContain('Cats eat fish and chicken every day.');
    expect(prompt).not.toContain('The ocean is deep and blue.');
  });

  it('suggests from the dataset\'s first chunks without a query, within the filters', async () => {
    llm.script({ reply: 'a\nb\nc' });
    const res = await ds.post('/api/chunk/suggestions', { suggestions_to_create: 2, filters: { must: [{ field: 'tag_set', match_any: ['pets'] }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ queries: ['a', 'b'] });
    const prompt = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(prompt).toContain('Cats eat fish');
    expect(prompt).toContain('Dogs eat meat');
    expect(prompt).not.toContain('Parrots');
  });

  it('refuses bad bodies and reports a failing model as 400', async () => {
    for (const [body, message] of [
      [{ suggestion_type: 'poem' }, /suggestion_type/],
      [{ query: 'cats', search_type: 'magic' }, /search_type/],
      [{ filters: 'x' }, /filters/],
      [{ suggestions_to_create: 0 }, /suggestions_to_create/],
      [{ query: 5 }, /query/],
    ] as const) {
      await expectRejected(stack, () => ds.post('/api/chunk/suggestions', body), 400, message);
    }
    llm.script({ statuses: [500, 500, 500, 500] });
    await expectRejected(stack, () => ds.post('/api/chunk/suggestions', { query: 'cats', search_type: 'bm25' }), 400, /suggested queries/);
    llm.script({});
  });

  it('answers no suggestions for an empty dataset without a model call', async () => {
    const asked = llm.requests.length;
    const res = await tenant.ds.post('/api/chunk/suggestions', {});
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ queries: [] });
    expect(llm.requests.length).toBe(asked);
  });
});
