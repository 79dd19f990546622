/**
 * A local OpenAI-compatible `POST /v1/embeddings` server that answers from a fixed table: the text
 * `<prefix><i>` embeds to row i. It stands in for a paid embeddings API in benchmarks, so that a
 * dataset's vectors are known exactly (and can be compared with in-process indexes and exact
 * ground truth). Any other text is a 400, so a wrong input never turns into a silent vector.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running table server. */
export interface TableEmbeddings {
  /** Value for EMBEDDING_BASE_URL (ends in /v1). */
  readonly baseUrl: string;
  /** Requests and texts answered so far. */
  readonly stats: { requests: number; texts: number };
  close(): Promise<void>;
}

/**
 * Serves `rows` rows of `dim` components from `row(i)` (which returns the i-th vector as plain
 * numbers) for texts `${prefix}${i}`, on a free loopback port.
 */
export async function startTableEmbeddings(prefix: string, rows: number, dim: number, row: (i: number) => ArrayLike<number>): Promise<TableEmbeddings> {
  const stats = { requests: 0, texts: 0 };
  const fail = (res: http.ServerResponse, status: number, message: string) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message } }));
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) return fail(res, 404, 'not found');
      let input: unknown;
      try {
        input = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { input?: unknown }).input;
      } catch {
        return fail(res, 400, 'body is not JSON');
      }
      const texts = typeof input === 'string' ? [input] : input;
      if (!Array.isArray(texts)) return fail(res, 400, 'input must be a string or an array of strings');
      const data: { object: 'embedding'; index: number; embedding: number[] }[] = [];
      for (let index = 0; index < texts.length; index++) {
        const t = texts[index];
        const i = typeof t === 'string' && t.startsWith(prefix) ? Number(t.slice(prefix.length)) : Number.NaN;
        if (!Number.isInteger(i) || i < 0 || i >= rows) return fail(res, 400, `no row for input ${JSON.stringify(t)}`);
        const v = row(i);
        if (v.length !== dim) return fail(res, 500, `row ${i} has ${v.length} components, expected ${dim}`);
        data.push({ object: 'embedding', index, embedding: Array.from(v) });
      }
      stats.requests++;
      stats.texts += texts.length;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'table', usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
