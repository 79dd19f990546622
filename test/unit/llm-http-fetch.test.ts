/**
 * The OpenAI client's fetch over node:http (core/llm/http-fetch.ts) against a real HTTP server on
 * loopback: what it sends, what a response looks like to the client, and the error shapes the
 * client's retries depend on (the provider's own behaviour is llm-openai.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from '../../core/llm/http-fetch.js';

/** The last request the server received: its headers and body. */
let seen: { headers: http.IncomingHttpHeaders; body: string } | null = null;
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen = { headers: req.headers, body };
      if (req.url === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        // Never ended: an abort must end the caller's read.
        return;
      }
      if (req.url === '/error') {
        res.writeHead(429, [['content-type', 'application/json'], ['retry-after-ms', '5'], ['x-twice', 'a'], ['x-twice', 'b']]);
        res.end(JSON.stringify({ error: { message: 'slow down' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echo: body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('httpFetch', () => {
  it('sends the method, the headers and the body with its length (not chunked), and reads JSON', async () => {
    const body = JSON.stringify({ text: 'héllo' });
    const res = await httpFetch(`${base}/json`, { method: 'POST', headers: new Headers({ Authorization: 'Bearer k', 'content-type': 'application/json' }), body });
    expect(res.ok).toBe(true);
    expect(res.url).toBe(`${base}/json`);
    expect(await res.json()).toEqual({ echo: body });
    expect(seen!.headers.authorization).toBe('Bearer k');
    expect(seen!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(seen!.headers['transfer-encoding']).toBeUndefined();
  });

  it('answers an error status with its whole body and every header value', async () => {
    const res = await httpFetch(`${base}/error`, { method: 'POST', body: '{}' });
    expect(res.ok).toBe(false);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after-ms')).toBe('5');
    expect(res.headers.get('x-twice')).toBe('a, b');
    expect(await res.text()).toBe(JSON.stringify({ error: { message: 'slow down' } }));
  });

  it('hands an event stream over as it comes, and an abort ends its read with the AbortError', async () => {
    const ctl = new AbortController();
    const res = await httpFetch(`${base}/sse`, { method: 'POST', body: '{}', signal: ctl.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const it = (res.body as unknown as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    expect(String((await it.next()).value)).toBe('data: one\n\n');
    const next = it.next();
    ctl.abort();
    await expect(next).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects an aborted signal before sending anything, and an unreachable server as fetch does', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(httpFetch(`${base}/json`, { signal: ctl.signal })).rejects.toMatchObject({ name: 'AbortError' });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = httpFetch(`http://127.0.0.1:${port}/json`, { method: 'POST', body: '{}' });
    await expect(refused).rejects.toBeInstanceOf(TypeError);
    await expect(refused).rejects.toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });
});
