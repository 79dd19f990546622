/** The cross-encoder client against a real local HTTP server speaking the /rerank protocol. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { Reranker } from '../../core/embed/reranker.js';

type Handler = (body: { query: string; texts: string[]; truncate: boolean }, req: http.IncomingMessage, res: http.ServerResponse) => void;
let handler: Handler;
const seen: { body: any; auth: string | undefined }[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      seen.push({ body, auth: req.headers.authorization });
      handler(body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const json = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
/** Scores = text length, answered in reverse order so the client must sort by index. */
const byLength: Handler = (b, _req, res) => json(res, 200, b.texts.map((t, index) => ({ index, score: t.length })).reverse());

describe('Reranker', () => {
  it('returns scores in input order across batches, with truncate and the bearer key', async () => {
    handler = byLength;
    seen.length = 0;
    const texts = Array.from({ length: 25 }, (_, i) => 'x'.repeat(i + 1));
    const scores = await new Reranker({ baseUrl: `${base}/`, apiKey: 'k', batchSize: 10 }).score('q', texts);
    expect(scores).toEqual(texts.map((t) => t.length));
    expect(seen.map((s) => s.body.texts.length)).toEqual([10, 10, 5]);
    expect(seen.every((s) => s.body.truncate === true && s.body.query === 'q' && s.auth === 'Bearer k')).toBe(true);
  });

  it('retries a 5xx and a 429, then succeeds', async () => {
    let n = 0;
    handler = (b, req, res) => (++n === 1 ? json(res, 503, { error: 'busy' }) : n === 2 ? res.writeHead(429, { 'retry-after': '0' }).end() : byLength(b, req, res));
    expect(await new Reranker({ baseUrl: base, retryBaseDelayMs: 1 }).score('q', ['ab'])).toEqual([2]);
    expect(n).toBe(3);
  });

  it('does not retry a 4xx and names the status', async () => {
    let n = 0;
    handler = (_b, _req, res) => {
      n++;
      json(res, 422, { error: 'too long' });
    };
    await expect(new Reranker({ baseUrl: base }).score('q', ['a'])).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/422/) });
    expect(n).toBe(1);
  });

  it('times out a hanging server and says so', async () => {
    handler = () => {};
    const err = await new Reranker({ baseUrl: base, timeoutMs: 100, maxRetries: 1, retryBaseDelayMs: 1 }).score('q', ['a']).catch((e) => e);
    expect(err).toBeInstanceOf(QuarryError);
    expect(err.code).toBe('timeout');
  });

  it.each([
    ['not JSON', 'oops', /not JSON/],
    ['wrong count', JSON.stringify([{ index: 0, score: 1 }]), /1 scores for 2 texts/],
    ['index out of range', JSON.stringify([{ index: 0, score: 1 }, { index: 5, score: 1 }]), /out of range/],
    ['repeated index', JSON.stringify([{ index: 0, score: 1 }, { index: 0, score: 2 }]), /repeated/],
    ['non-numeric score', JSON.stringify([{ index: 0, score: 'high' }, { index: 1, score: 1 }]), /not a number/],
  ])('rejects a malformed reply: %s', async (_what, body, message) => {
    handler = (_b, _req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    await expect(new Reranker({ baseUrl: base }).score('q', ['a', 'b'])).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(message) });
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => new Reranker({ baseUrl: 'ftp://x' })).toThrow(/http or https/);
    expect(() => new Reranker({ baseUrl: 'not a url' })).toThrow(/not a URL/);
  });
});
