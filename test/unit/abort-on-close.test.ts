/**
 * A request's core calls are cancelled when its client goes away (`facade/middleware/abort-on-close.ts`),
 * and only then: the signal belongs to the connection, so a keep-alive connection's later
 * requests must not see an earlier one's end as a cancel.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreClientOver, type CoreCall } from '../../core/client/core-client.js';
import type { RequestState } from '../../facade/context.js';
import { abortOnClose } from '../../facade/middleware/abort-on-close.js';

/** What each core call saw: its signal (the transport below is the in-process one's seam). */
const calls: { path: string; signal: AbortSignal | undefined; abortedAtCall: boolean }[] = [];
const call: CoreCall = <Res>(_method: string, request: unknown, _ms: number, _wait: boolean, signal: AbortSignal | undefined) => {
  const path = (request as { query: string }).query;
  calls.push({ path, signal, abortedAtCall: signal?.aborted ?? false });
  if (path !== '/slow') return Promise.resolve({ chunks: [], total: 0 } as Res);
  // A long search: it ends when its signal aborts.
  return new Promise<Res>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
};

let server: http.Server;
let port = 0;

beforeAll(async () => {
  const app = new Koa<RequestState>();
  app.use(abortOnClose(coreClientOver(call, 5000, () => undefined)));
  app.use(async (ctx) => {
    await ctx.state.core.search({ dataset_id: 'd', query: ctx.path });
    ctx.body = { ok: true };
  });
  const handle = app.callback();
  server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function get(path: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

describe('abortOnClose', () => {
  it('leaves a keep-alive connection requests uncancelled after the one before ended', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    calls.length = 0;
    for (let i = 0; i < 3; i++) expect(await get('/fast', agent)).toBe(200);
    expect(calls).toHaveLength(3);
    for (const c of calls) expect(c.signal?.aborted).toBe(false);
    agent.destroy();
  });

  it('cancels the calls of a request whose client closed the connection', async () => {
    calls.length = 0;
    const req = http.get({ host: '127.0.0.1', port, path: '/slow', agent: false });
    req.on('error', () => undefined);
    const deadline = Date.now() + 5000;
    while (calls.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(calls[0]?.signal?.aborted).toBe(false);
    req.destroy();
    while (!calls[0]?.signal?.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(calls[0]?.signal?.reason).toMatchObject({ code: 'cancelled', message: expect.stringContaining('closed the connection') });
  });

  it('gives a new connection a signal of its own', async () => {
    calls.length = 0;
    const agent = new http.Agent({ keepAlive: false });
    expect(await get('/fast', agent)).toBe(200);
    expect(await get('/fast', agent)).toBe(200);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.signal).not.toBe(calls[1]!.signal);
    // The first connection has closed since (its request had ended): the second did not inherit that.
    for (const c of calls) expect(c.abortedAtCall).toBe(false);
    agent.destroy();
  });
});
