/**
 * The OpenAI-compatible embedder against a real HTTP server on loopback that speaks the protocol;
 * each test sets how the server answers and inspects the requests it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmbedder, type EmbedderConfig } from '../../core/embed/embedder.js';
import { backoffDelayMs, parseRetryAfterMs } from '../../core/embed/backoff.js';
import { failure } from '../helpers/rejection.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: { model: string; input: string[]; encoding_format?: string };
  at: number;
}

type Handler = (req: Received, res: http.ServerResponse, n: number) => void;

const DIM = 4;
let server: http.Server;
let baseUrl: string;
let received: Received[] = [];
let handler: Handler;

/** A deterministic vector for a text: its length, first char code, and two constants. */
function vectorOf(text: string): number[] {
  return [text.length, text.charCodeAt(0) || 0, 0.5, -1];
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The well-behaved reply, with `data` in reverse order to check sorting by index. */
const ok: Handler = (req, res) => {
  const data = req.body.input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t) }));
  json(res, 200, { object: 'list', model: req.body.model, data: data.reverse(), usage: { prompt_tokens: 1, total_tokens: 1 } });
};

function config(over: Partial<EmbedderConfig> = {}): EmbedderConfig {
  return { baseUrl, model: 'test-model', dimension: DIM, retryBaseDelayMs: 10, ...over };
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: JSON.parse(raw), at: Date.now() };
      received.push(r);
      handler(r, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  handler = ok;
});

describe('OpenAI-compatible embedder', () => {
  it('posts {model, input} to {baseUrl}/embeddings and returns vectors in input order', async () => {
    const e = createEmbedder(config());
    expect(e.model).toBe('test-model');
    expect(e.dimension).toBe(DIM);
    const texts = ['alpha', 'b', 'gamma ray'];
    const vs = await e.embed(texts, 'doc');
    expect(vs.map((v) => Array.from(v))).toEqual(texts.map(vectorOf));
    expect(vs[0]).toBeInstanceOf(Float32Array);
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('POST');
    expect(received[0]!.url).toBe('/v1/embeddings');
    expect(received[0]!.headers['content-type']).toContain('application/json');
    expect(received[0]!.body).toEqual({ model: 'test-model', input: texts, encoding_format: 'float' });
    expect(received[0]!.headers.authorization).toBeUndefined();
    await e.close();
  });

  it('splits inputs into batches of batchSize and keeps the overall order', async () => {
    const e = createEmbedder(config({ batchSize: 3 }));
    const texts = Array.from({ length: 8 }, (_, i) => `text number ${'x'.repeat(i)}`);
    const vs = await e.embed(texts, 'doc');
    expect(received.map((r) => r.body.input.length)).toEqual([3, 3, 2]);
    expect(received.flatMap((r) => r.body.input)).toEqual(texts);
    expect(vs.map((v) => v[0])).toEqual(texts.map((t) => t.length));
    await e.close();
  });

  it('sends no request for no texts', async () => {
    const e = createEmbedder(config());
    expect(await e.embed([], 'doc')).toEqual([]);
    expect(received).toHaveLength(0);
  });

  it('sends the API key as a bearer token', async () => {
    const e = createEmbedder(config({ apiKey: 'sk-test-123' }));
    await e.embed(['x'], 'doc');
    expect(received[0]!.headers.authorization).toBe('Bearer sk-test-123');
  });

  it('prefixes queries only', async () => {
    const e = createEmbedder(config({ queryPrefix: 'query: ' }));
    await e.embed(['what is x'], 'query');
    await e.embed(['x is y'], 'doc');
    expect(received.map((r) => r.body.input[0])).toEqual(['query: what is x', 'x is y']);
  });

  it('times out a server that never answers, retrying first', async () => {
    handler = () => {
      // Never answer.
    };
    const e = createEmbedder(config({ timeoutMs: 150, maxRetries: 1 }));
    const t0 = Date.now();
    const err = await failure(e.embed(['x'], 'doc'));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/no reply within 150 ms \(2 attempts\)/);
    expect(received).toHaveLength(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it("stops at once when the caller's signal aborts", async () => {
    handler = () => {};
    const e = createEmbedder(config({ timeoutMs: 10_000 }));
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    const t0 = Date.now();
    const err = await failure(e.embed(['x'], 'doc', ctl.signal));
    expect(err.code).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(received).toHaveLength(1);
  });

  it('retries a 500 and then succeeds', async () => {
    handler = (req, res, n) => (n === 1 ? json(res, 500, { error: { message: 'model is loading' } }) : ok(req, res, n));
    const e = createEmbedder(config());
    const vs = await e.embed(['hello'], 'doc');
    expect(Array.from(vs[0]!)).toEqual(vectorOf('hello'));
    expect(received).toHaveLength(2);
  });

  it('gives up after maxRetries with the provider message', async () => {
    handler = (_req, res) => json(res, 503, { error: 'overloaded, try later' });
    const e = createEmbedder(config({ maxRetries: 2 }));
    const err = await failure(e.embed(['hello'], 'doc'));
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain('HTTP 503: overloaded, try later (3 attempts)');
    expect(received).toHaveLength(3);
  });

  it('honours Retry-After on 429', async () => {
    handler = (req, res, n) =>
      n === 1 ? json(res, 429, { error: { message: 'rate limited' } }, { 'retry-after': '1' }) : ok(req, res, n);
    const e = createEmbedder(config({ retryBaseDelayMs: 1 }));
    await e.embed(['hello'], 'doc');
    expect(received).toHaveLength(2);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs', async () => {
    handler = (_req, res) => json(res, 429, { error: { message: 'quota' } }, { 'retry-after': '120' });
    const e = createEmbedder(config({ maxRetryDelayMs: 1000 }));
    const err = await failure(e.embed(['hello'], 'doc'));
    expect(err.code).toBe('unavailable');
    expect(err.retryAfterSeconds).toBe(120);
    expect(received).toHaveLength(1);
  });

  it('does not retry a 400 and quotes the provider', async () => {
    handler = (_req, res) => json(res, 400, { error: { message: 'input is too long', type: 'invalid_request_error' } });
    const e = createEmbedder(config());
    const err = await failure(e.embed(['hello'], 'doc'));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('HTTP 400: input is too long');
    expect(received).toHaveLength(1);
  });

  it('quotes a plain-text error body', async () => {
    handler = (_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('invalid api key');
    };
    const err = await failure(createEmbedder(config({ apiKey: 'nope' })).embed(['x'], 'doc'));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('HTTP 401: invalid api key');
    expect(err.message).not.toContain('nope');
  });

  it('retries a refused connection, then reports it', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const e = createEmbedder(config({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }));
    const err = await failure(e.embed(['x'], 'doc'));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/ECONNREFUSED.*\(2 attempts\)/);
  });

  it('rejects malformed JSON without retrying', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": [');
    };
    const err = await failure(createEmbedder(config()).embed(['x'], 'doc'));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/malformed reply: not JSON/);
    expect(received).toHaveLength(1);
  });

  const malformedCases: [string, (req: Received) => unknown, RegExp][] = [
    ['missing data', () => ({ object: 'list' }), /no "data" array/],
    ['wrong count', (r) => ({ data: [{ index: 0, embedding: vectorOf(r.body.input[0]!) }] }), /1 embeddings for 2 inputs/],
    [
      'index out of range',
      (r) => ({ data: r.body.input.map((t, i) => ({ index: i + 1, embedding: vectorOf(t) })) }),
      /data\[1\]\.index is 2, expected an integer in \[0, 2\)/,
    ],
    ['duplicate index', (r) => ({ data: r.body.input.map((t) => ({ index: 0, embedding: vectorOf(t) })) }), /index 0 appears twice/],
    [
      'non-number',
      (r) => ({ data: r.body.input.map((_t, i) => ({ index: i, embedding: [1, 'two', 3, 4] })) }),
      /data\[0\]\.embedding\[1\] is "two", not a finite number/,
    ],
    ['base64', (r) => ({ data: r.body.input.map((_t, i) => ({ index: i, embedding: 'AAAA' })) }), /only encoding_format "float"/],
  ];
  for (const [name, reply, message] of malformedCases) {
    it(`rejects a reply with ${name}`, async () => {
      handler = (req, res) => json(res, 200, reply(req));
      const err = await failure(createEmbedder(config()).embed(['one', 'two'], 'doc'));
      expect(err.code).toBe('unavailable');
      expect(err.message).toMatch(message);
      expect(received).toHaveLength(1);
    });
  }

  it('names a dimension mismatch with EMBEDDING_SIZE', async () => {
    handler = (req, res) => json(res, 200, { data: req.body.input.map((_t, index) => ({ index, embedding: [1, 2, 3] })) });
    const err = await failure(createEmbedder(config()).embed(['x'], 'doc'));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('embedding of length 3, but EMBEDDING_SIZE is 4');
  });

  it('accepts replies without index fields in input order', async () => {
    handler = (req, res) => json(res, 200, { data: req.body.input.map((t) => ({ embedding: vectorOf(t) })) });
    const vs = await createEmbedder(config()).embed(['ab', 'cde'], 'doc');
    expect(vs.map((v) => v[0])).toEqual([2, 3]);
  });

  it('refuses bad configurations', () => {
    expect(() => createEmbedder(config({ baseUrl: 'not a url' }))).toThrow(/EMBEDDING_BASE_URL/);
    expect(() => createEmbedder(config({ baseUrl: 'ftp://host/v1' }))).toThrow(/http or https/);
    expect(() => createEmbedder(config({ model: '' }))).toThrow(/EMBEDDING_MODEL_NAME/);
    expect(() => createEmbedder(config({ dimension: 0 }))).toThrow(/EMBEDDING_SIZE/);
    expect(() => createEmbedder(config({ batchSize: 0 }))).toThrow(/batchSize/);
  });

  it('fails after close', async () => {
    const e = createEmbedder(config());
    await e.close();
    expect((await failure(e.embed(['x'], 'doc'))).code).toBe('unavailable');
  });
});

describe('backoff', () => {
  it('grows exponentially under a cap, with full jitter', () => {
    expect(backoffDelayMs(0, 500, 30_000, () => 0.999)).toBe(499);
    expect(backoffDelayMs(3, 500, 30_000, () => 0.5)).toBe(2000);
    expect(backoffDelayMs(10, 500, 30_000, () => 0.5)).toBe(15_000);
    expect(backoffDelayMs(2, 500, 30_000, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfterMs(null)).toBeUndefined();
    expect(parseRetryAfterMs('2')).toBe(2000);
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:28:03 GMT', now)).toBe(3000);
    expect(parseRetryAfterMs('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon')).toBeUndefined();
  });
});
