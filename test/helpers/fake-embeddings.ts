/**
 * A local stand-in for a paid OpenAI-compatible embeddings API (`POST /v1/embeddings`), speaking
 * the real wire protocol over real HTTP. Vectors are deterministic hashed bags of words, so tests
 * can compute the expected vector of any text.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fnv1a } from '../../core/domain/fnv1a.js';

/** Dimension of the fake vectors. */
export const FAKE_DIM = 32;

/** The fake model's vector of a text: word counts hashed into FAKE_DIM buckets, unit length. */
export function fakeVector(text: string): Float32Array {
  const v = new Float32Array(FAKE_DIM);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    v[fnv1a(w) % FAKE_DIM]! += 1;
  }
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}

/** Cosine similarity of two vectors (the oracle side of semantic-search tests). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/** The fake cross-encoder's score: how many query words the text contains (a deterministic stand-in). */
export function fakeRerankScore(query: string, text: string): number {
  const words = new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  return (query.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => words.has(w)).length;
}

/**
 * The fake SPLADE encoder's vector of a text: each word hashed to an index below 30,000 (a
 * BERT-sized vocabulary), value 1 + log(count); a query's values are halved so that document
 * and query encoders differ, as real SPLADE query and document models do.
 */
export function fakeSparse(text: string, kind: 'doc' | 'query'): { index: number; value: number }[] {
  const counts = new Map<number, number>();
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
    const index = (h >>> 0) % 30_000;
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return [...counts].map(([index, n]) => ({ index, value: Math.fround((1 + Math.log(n)) * (kind === 'query' ? 0.5 : 1)) }));
}

/** A running fake server and knobs to make it misbehave. */
export interface FakeEmbeddings {
  /** Base URL to put in EMBEDDING_BASE_URL (ends in /v1). */
  readonly baseUrl: string;
  /** Texts embedded so far (every request). */
  readonly requests: string[][];
  /** Texts sent to /rerank so far (every request). */
  readonly reranked: string[][];
  /** Root for RERANKER_BASE_URL (the server answers /rerank under it). */
  readonly rerankUrl: string;
  /** Root for SPLADE_BASE_URL (documents: /doc/embed_sparse) and SPLADE_QUERY_BASE_URL (/query/embed_sparse). */
  readonly spladeDocUrl: string;
  readonly spladeQueryUrl: string;
  /** Inputs sent to /embed_sparse so far. */
  readonly sparseRequests: string[][];
  /** Delay of every answer, in ms. */
  delayMs: number;
  /** When set, every request is answered with this status and an error body. */
  failWith: number | null;
  close(): Promise<void>;
}

/** Starts the fake server on a free loopback port. */
export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const state = { requests: [] as string[][], reranked: [] as string[][], sparseRequests: [] as string[][], delayMs: 0, failWith: null as number | null };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      setTimeout(() => {
        if (req.method === 'POST' && req.url?.endsWith('/rerank')) {
          // text-embeddings-inference /rerank: {query, texts, truncate} -> [{index, score}].
          const { query, texts } = JSON.parse(body) as { query: string; texts: string[] };
          state.reranked.push(texts);
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(texts.map((t, index) => ({ index, score: fakeRerankScore(query, t) }))));
          return;
        }
        if (req.method === 'POST' && req.url?.endsWith('/embed_sparse')) {
          if (state.failWith !== null) {
            res.writeHead(state.failWith, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'fake failure' }));
            return;
          }
          // text-embeddings-inference /embed_sparse: {inputs, truncate} -> [[{index, value}]].
          const { inputs } = JSON.parse(body) as { inputs: string[] };
          state.sparseRequests.push(inputs);
          const kind = req.url.startsWith('/query/') ? 'query' : 'doc';
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(inputs.map((t) => fakeSparse(t, kind))));
          return;
        }
        if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
          res.writeHead(404).end();
          return;
        }
        if (state.failWith !== null) {
          res.writeHead(state.failWith, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'fake failure' } }));
          return;
        }
        const { input } = JSON.parse(body) as { input: string[] };
        state.requests.push(input);
        const data = input.map((t, index) => ({ object: 'embedding', index, embedding: Array.from(fakeVector(t)) }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'fake', usage: { prompt_tokens: 0, total_tokens: 0 } }));
      }, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    rerankUrl: `http://127.0.0.1:${port}`,
    spladeDocUrl: `http://127.0.0.1:${port}/doc`,
    spladeQueryUrl: `http://127.0.0.1:${port}/query`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
