/**
 * The facade's one shared reader of answer streams against a real Redis: every entry of many
 * streams written concurrently reaches its own follower once and in order, a follower that starts
 * waiting while the shared read is blocked gets its entries at once (not at the read's 5 s
 * timeout), and a wait with nothing written ends empty at its own time.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SharedStreamReader } from '../../core/client/rag-stream-reader.js';
import { ragStreamKey, type StreamEvent } from '../../core/domain/rag.js';

let control: Redis;
let reader: SharedStreamReader;

beforeAll(() => {
  control = new Redis(inject('redisUrl'));
  reader = new SharedStreamReader(control, inject('redisUrl'));
});

afterAll(() => {
  reader?.close();
  control?.disconnect();
});

const add = (id: string, event: StreamEvent) => control.xadd(ragStreamKey(id), '*', 'e', JSON.stringify(event));

/** Follows one answer to its `done`, as facade/rag/answer.ts does; returns its text. */
async function follow(id: string): Promise<string> {
  let after = '0';
  let text = '';
  for (;;) {
    const entries = await reader.read(id, after, 1000);
    for (const { id: entryId, event } of entries) {
      after = entryId;
      if (event.t === 'delta') text += event.text;
      else return text;
    }
  }
}

describe('SharedStreamReader', () => {
  it('hands every entry of 50 concurrent streams to its own follower, once and in order', async () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const followed = ids.map((id) => follow(id));
    const expected = ids.map((id) => Array.from({ length: 30 }, (_, i) => `${id}:${i} `).join(''));
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < 30; i++) {
          await add(id, { t: 'delta', text: `${id}:${i} ` });
          if (i % 7 === 0) await new Promise((r) => setTimeout(r, Math.random() * 5));
        }
        await add(id, { t: 'done', usage: { promptTokens: 1, completionTokens: 30 } });
      }),
    );
    expect(await Promise.all(followed)).toEqual(expected);
    for (const id of ids) await control.del(ragStreamKey(id));
  }, 30_000);

  it('serves a follower that starts while the shared read is blocked at once', async () => {
    const quiet = randomUUID();
    const late = randomUUID();
    // The shared read blocks on the quiet stream (5 s) ...
    const quietRead = reader.read(quiet, '0', 3000);
    await new Promise((r) => setTimeout(r, 100));
    // ... when another follower starts and its first entry is written.
    const started = Date.now();
    const lateRead = reader.read(late, '0', 3000);
    await add(late, { t: 'delta', text: 'hello' });
    const entries = await lateRead;
    expect(Date.now() - started).toBeLessThan(500);
    expect(entries.map((e) => e.event)).toEqual([{ t: 'delta', text: 'hello' }]);
    // The quiet one ends empty at its own time.
    expect(await quietRead).toEqual([]);
    await control.del(ragStreamKey(late));
  });

  it('ends a wait with nothing written at its own time, and reads what came meanwhile next', async () => {
    const id = randomUUID();
    const started = Date.now();
    expect(await reader.read(id, '0', 150)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(1000);
    await add(id, { t: 'error', message: 'boom', provider: true });
    expect((await reader.read(id, '0', 1000)).map((e) => e.event)).toEqual([{ t: 'error', message: 'boom', provider: true }]);
    await control.del(ragStreamKey(id));
  });
});
