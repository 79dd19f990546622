/** The SPLADE client against a real local HTTP server speaking /embed_sparse, and the shard's sparse index against brute force. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sparseDot } from '../../core/domain/sparse-vector.js';
import { boostSparse, SpladeClient } from '../../core/embed/splade.js';
import { Bitset } from '../../workers/shard/bm25/bitset.js';
import { SparseVectorIndex } from '../../workers/shard/splade/sparse-vector-index.js';

type Handler = (body: { inputs: string[]; truncate: boolean }, req: http.IncomingMessage, res: http.ServerResponse) => void;
let handler: Handler;
const seen: { url: string; body: any; auth: string | undefined }[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      seen.push({ url: req.url ?? '', body, auth: req.headers.authorization });
      handler(body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const json = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
/** Index = text length, value = 1 (plus an index 0 of value 0.5, listed last to check sorting). */
const byLength: Handler = (b, _req, res) => json(res, 200, b.inputs.map((t) => [{ index: t.length + 1, value: 1 }, { index: 0, value: 0.5 }]));

describe('SpladeClient', () => {
  it('encodes in batches, sorted, documents and queries on their own endpoints, with the bearer key', async () => {
    handler = byLength;
    seen.length = 0;
    const c = new SpladeClient({ docUrl: `${base}/doc/`, queryUrl: `${base}/q`, apiKey: 'k', batchSize: 2 });
    const docs = await c.encode(['a', 'bb', 'ccc'], 'doc');
    expect(docs.map((d) => Array.from(d.indices))).toEqual([[0, 2], [0, 3], [0, 4]]);
    expect(Array.from(docs[0]!.values)).toEqual([0.5, 1]);
    await c.encode(['q'], 'query');
    expect(seen.map((s) => s.url)).toEqual(['/doc/embed_sparse', '/doc/embed_sparse', '/q/embed_sparse']);
    expect(seen.every((s) => s.body.truncate === true && s.auth === 'Bearer k')).toBe(true);
  });

  it('retries 5xx and timeouts, then succeeds', async () => {
    let n = 0;
    handler = (b, req, res) => {
      n++;
      if (n === 1) return json(res, 502, { error: 'bad gateway' });
      if (n === 2) return void setTimeout(() => byLength(b, req, res), 300);
      byLength(b, req, res);
    };
    const out = await new SpladeClient({ docUrl: base, timeoutMs: 100, retryBaseDelayMs: 1 }).encode(['ab'], 'doc');
    expect(Array.from(out[0]!.indices)).toEqual([0, 3]);
    expect(n).toBe(3);
  });

  it('rejects malformed replies with a message naming the problem', async () => {
    const cases: [unknown, RegExp][] = [
      [{ not: 'a list' }, /array/],
      [[], /0 vectors for 1 inputs/],
      [[[{ index: -1, value: 1 }]], /index -1/],
      [[[{ index: 1, value: 'x' }]], /value x/],
      [['nope'], /not a list/],
    ];
    for (const [reply, message] of cases) {
      handler = (_b, _req, res) => json(res, 200, reply);
      await expect(new SpladeClient({ docUrl: base, maxRetries: 0 }).encode(['a'], 'doc')).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(message) });
    }
    handler = (_b, _req, res) => res.writeHead(200).end('{oops');
    await expect(new SpladeClient({ docUrl: base, maxRetries: 0 }).encode(['a'], 'doc')).rejects.toMatchObject({ message: expect.stringMatching(/not JSON/) });
  });

  it('fails a 4xx at once and refuses a bad URL', async () => {
    let n = 0;
    handler = (_b, _req, res) => {
      n++;
      json(res, 413, { error: 'too big' });
    };
    await expect(new SpladeClient({ docUrl: base }).encode(['a'], 'doc')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/413/) });
    expect(n).toBe(1);
    expect(() => new SpladeClient({ docUrl: 'ftp://x' })).toThrow(/SPLADE_BASE_URL must be http/);
  });

  it('boosts the query values of the phrase indexes', () => {
    const q = { indices: Uint32Array.from([1, 5, 9]), values: Float32Array.from([1, 2, 3]) };
    const p = { indices: Uint32Array.from([5, 7]), values: Float32Array.from([1, 1]) };
    expect(Array.from(boostSparse(q, p, 2).values)).toEqual([1, 4, 3]);
  });
});

describe('SparseVectorIndex', () => {
  const vec = fc.uniqueArray(fc.nat(40), { maxLength: 12 }).chain((idx) =>
    fc.array(fc.float({ min: Math.fround(0.01), max: 10, noNaN: true }), { minLength: idx.length, maxLength: idx.length }).map((vals) => {
      const sorted = idx.map((i, k) => [i, vals[k]!] as const).sort((a, b) => a[0] - b[0]);
      return { indices: Uint32Array.from(sorted.map((s) => s[0])), values: Float32Array.from(sorted.map((s) => s[1])) };
    }),
  );
  it('equals brute-force dot products after random upserts and removes, with filters and thresholds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ doc: fc.nat(30), v: vec }), fc.record({ doc: fc.nat(30), v: fc.constant(null) })), { maxLength: 80 }),
        vec,
        fc.integer({ min: 1, max: 10 }),
        fc.boolean(),
        fc.option(fc.double({ min: 0, max: 20, noNaN: true }), { nil: null }),
        (ops, query, k, useFilter, threshold) => {
          const index = new SparseVectorIndex();
          const live = new Map<number, { indices: Uint32Array; values: Float32Array }>();
          for (const op of ops) {
            if (op.v) {
              index.upsert(op.doc, op.v);
              live.set(op.doc, op.v);
            } else {
              index.remove(op.doc);
              live.delete(op.doc);
            }
          }
          const allow = useFilter ? new Bitset(64) : null;
          if (allow) for (let d = 0; d < 31; d += 2) allow.set(d);
          const expected = [...live]
            .filter(([d]) => !allow || allow.has(d))
            .map(([d, v]) => ({ id: d, score: sparseDot(v, query) }))
            .filter((h) => h.score !== 0 && (threshold === null || h.score >= threshold))
            .sort((a, b) => b.score - a.score || a.id - b.id);
          const got = index.search(query, k, allow, threshold);
          expect(got.total).toBe(expected.length);
          expect(got.scores).toEqual(expected.slice(0, k).map((e) => expect.closeTo(e.score, 4)));
          expect(index.size).toBe(live.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});
