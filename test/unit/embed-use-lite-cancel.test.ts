/**
 * Cancelling query embeddings never costs a USE-Lite thread: piscina terminates the thread of a
 * running task whose signal fires, and the replacement reloads the model (seconds of CPU for every
 * tenant). Real model, real threads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UseLiteEmbedder } from '../../core/embed/use-lite.js';

const QUERIES = Array.from({ length: 24 }, (_, i) => `how do I configure search option number ${i}`);
/** A document of ~60 sentences: long enough that its task runs for a while on a thread. */
const LONG_DOC = Array.from({ length: 60 }, (_, i) => `The committee reviewed budget item ${i} for the fiscal year and approved it.`).join(' ');

let embedder: UseLiteEmbedder;
let expected: Float32Array[];

beforeAll(async () => {
  embedder = new UseLiteEmbedder({ model: 'use-lite', dimension: 512, queryPrefix: '', threads: 2 });
  expected = await embedder.embed(QUERIES, 'query');
}, 60_000);

afterAll(async () => {
  await embedder.close();
});

/** Starts one single-query embedding per query, each with its own signal; aborts them all after `ms`. */
async function cancelAll(ms: number): Promise<void> {
  const controllers = QUERIES.map(() => new AbortController());
  const calls = QUERIES.map((q, i) => embedder.embed([q], 'query', controllers[i]!.signal));
  await new Promise((r) => setTimeout(r, ms));
  for (const c of controllers) c.abort();
  const settled = await Promise.allSettled(calls);
  settled.forEach((s, i) => {
    // One that finished before its abort must still be right; the others are timeouts.
    if (s.status === 'fulfilled') expect(Array.from(s.value[0]!)).toEqual(Array.from(expected[i]!));
    else expect(s.reason).toMatchObject({ code: 'timeout' });
  });
  expect(settled.some((s) => s.status === 'rejected')).toBe(true);
}

describe('cancelling USE-Lite embeddings', () => {
  it('keeps every thread when many in-flight query embeddings are cancelled, running or waiting', async () => {
    // Aborts land at different points: before dispatch, mid-model-call, between calls.
    for (const ms of [0, 1, 5, 12, 25, 40]) await cancelAll(ms);
    expect(embedder.threadsLost).toBe(0);
    // The threads still hold a working model: the same queries give the same vectors.
    const again = await embedder.embed(QUERIES, 'query');
    again.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(expected[i]!)));
    expect(embedder.threadsLost).toBe(0);
  }, 60_000);

  it('stops the caller waiting at once, while the running task finishes on its thread', async () => {
    const ctl = new AbortController();
    const order: string[] = [];
    const cancelled = embedder.embed([LONG_DOC], 'doc', ctl.signal).then(
      () => order.push('cancelled call resolved'),
      (err: unknown) => order.push(`cancelled call rejected ${(err as { code?: string }).code}`),
    );
    // The same work on the other thread, not cancelled: it ends when the cancelled task would.
    const sibling = embedder.embed([LONG_DOC], 'doc').then(() => order.push('sibling resolved'));
    await new Promise((r) => setTimeout(r, 30));
    ctl.abort();
    await Promise.all([cancelled, sibling]);
    expect(order).toEqual(['cancelled call rejected timeout', 'sibling resolved']);
    expect(embedder.threadsLost).toBe(0);
  }, 60_000);
});
