/**
 * A local stand-in for a paid OpenAI-compatible chat-completions API, speaking the real wire
 * protocol over real HTTP on loopback: `POST /v1/chat/completions` (and `/chat/completions`),
 * a JSON answer with `usage`, or with `stream: true` server-sent events (`data: {chunk}\n\n`,
 * text in `choices[0].delta.content`, a finish chunk, a usage chunk when asked, `data: [DONE]`).
 *
 * Usage: `const llm = await startFakeLlm()`, put `llm.url` in the dataset's `LLM_BASE_URL`,
 * `llm.script({...})` before a request, read `llm.requests` (every parsed body, in order) and
 * `llm.aborted` (requests whose client hung up before the answer ended), `await llm.close()`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the server answers the next requests; every field is optional. */
export interface FakeLlmScript {
  /** The answer's text, or a function of the request body. @defaultValue `'Hello from the fake model.'` */
  readonly reply?: string | ((body: FakeLlmBody) => string);
  /** Milliseconds before each streamed token. @defaultValue 0 */
  readonly tokenDelayMs?: number;
  /** Statuses answered to the next requests, one each, before answering normally (e.g. `[429]`, `[500, 500, 500]`). */
  readonly statuses?: readonly number[];
  /** `retry-after-ms` header sent with an error status (null: none, so the client's own backoff applies). @defaultValue 10 */
  readonly retryAfterMs?: number | null;
  /** Destroy the connection after streaming this many tokens (no finish chunk, no `[DONE]`). */
  readonly dropAfterTokens?: number;
  /** End the response properly after this many streamed tokens, without a finish chunk or `[DONE]` (a proxy that gave up). */
  readonly endAfterTokens?: number;
  /** Send a line that is not JSON after this many streamed tokens, then end the stream. */
  readonly malformedAfterTokens?: number;
  /** Usage to report; null sends none (neither in the JSON answer nor in the stream). @defaultValue counted, see {@link fakeUsage} */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number } | null;
}

/** A request body as received (the fields tests look at; the rest is kept too). */
export interface FakeLlmBody {
  readonly model: string;
  readonly messages: readonly { readonly role: string; readonly content: unknown }[];
  readonly stream?: boolean;
  readonly stream_options?: { readonly include_usage?: boolean };
  readonly [key: string]: unknown;
}

/** One received request. */
export interface FakeLlmRequest {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: FakeLlmBody;
}

/** A running fake server. */
export interface FakeLlm {
  /** Base URL for `LLM_BASE_URL`, e.g. `http://127.0.0.1:1234/v1`. */
  readonly url: string;
  /** Replaces the script (and its queue of statuses) for the requests that follow. */
  script(script: FakeLlmScript): void;
  /** Every chat-completions request received, in order (error statuses included). */
  readonly requests: FakeLlmRequest[];
  /** Requests whose client hung up before the answer was complete. */
  readonly aborted: number;
  close(): Promise<void>;
}

const DEFAULT_REPLY = 'Hello from the fake model.';

/** Pieces of `text` as the fake streams them: each word with the whitespace after it (joined: `text`). */
export function fakeTokens(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inSpace = false;
  for (let i = 0; i < text.length; i++) {
    const space = /\s/.test(text[i]!);
    if (!space && inSpace) {
      out.push(text.slice(start, i));
      start = i;
    }
    inSpace = space;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** The usage the fake reports by default: words of every message's text content, tokens of the reply. */
export function fakeUsage(body: FakeLlmBody, reply: string): { prompt_tokens: number; completion_tokens: number } {
  let words = 0;
  for (const m of body.messages) {
    const parts = typeof m.content === 'string' ? [m.content] : Array.isArray(m.content) ? m.content.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')) : [];
    for (const p of parts) words += p.split(/\s+/).filter((w) => w !== '').length;
  }
  return { prompt_tokens: words, completion_tokens: fakeTokens(reply).length };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeLlm(): Promise<FakeLlm> {
  let script: FakeLlmScript = {};
  let statuses: number[] = [];
  const requests: FakeLlmRequest[] = [];
  let aborted = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void answer(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });

  async function answer(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    let body: FakeLlmBody;
    try {
      body = JSON.parse(raw) as FakeLlmBody;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'body is not JSON' } }));
      return;
    }
    requests.push({ path, headers: req.headers, body });
    const s = script;
    let finished = false;
    let dropped = false;
    res.on('close', () => {
      if (!finished && !dropped) aborted++;
    });

    const status = statuses.shift();
    if (status !== undefined && status !== 200) {
      const retryAfter = s.retryAfterMs === undefined ? 10 : s.retryAfterMs;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (retryAfter !== null) headers['retry-after-ms'] = String(retryAfter);
      finished = true;
      res.writeHead(status, headers).end(JSON.stringify({ error: { message: `fake failure ${status}`, type: 'server_error' } }));
      return;
    }

    const reply = typeof s.reply === 'function' ? s.reply(body) : (s.reply ?? DEFAULT_REPLY);
    const usage = s.usage === undefined ? fakeUsage(body, reply) : s.usage;
    const usageWire = usage === null ? undefined : { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const base = { id: 'chatcmpl-fake', created: Math.floor(Date.now() / 1000), model: body.model };

    if (body.stream !== true) {
      finished = true;
      const message = { role: 'assistant', content: reply };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }], ...(usageWire ? { usage: usageWire } : {}) }));
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    // Resolves once the event is handed to the socket, so that a drop after it loses nothing already sent.
    const send = (chunk: unknown): Promise<void> =>
      new Promise((resolve) => {
        res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...(chunk as object) })}\n\n`, () => resolve());
      });
    await send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    const tokens = fakeTokens(reply);
    for (let i = 0; i < tokens.length; i++) {
      if (s.dropAfterTokens === i) {
        dropped = true;
        res.socket?.destroy();
        return;
      }
      if (s.endAfterTokens === i) {
        finished = true;
        res.end();
        return;
      }
      if (s.malformedAfterTokens === i) {
        finished = true;
        res.end('data: {"choices": [ not json\n\n');
        return;
      }
      if ((s.tokenDelayMs ?? 0) > 0) await sleep(s.tokenDelayMs!);
      if (res.destroyed) return;
      await send({ choices: [{ index: 0, delta: { content: tokens[i] }, finish_reason: null }] });
    }
    if (s.dropAfterTokens !== undefined && s.dropAfterTokens >= tokens.length) {
      dropped = true;
      res.socket?.destroy();
      return;
    }
    await send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (usageWire && body.stream_options?.include_usage === true) await send({ choices: [], usage: usageWire });
    finished = true;
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    script(next) {
      script = next;
      statuses = [...(next.statuses ?? [])];
    },
    requests,
    get aborted() {
      return aborted;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
