/**
 * collectGarbageSoon: a process started without --expose-gc frees arrays its thread dropped, which
 * an idle thread otherwise keeps until some later collection (what a shard compacted at rest left
 * behind, workers/shard/collect-garbage.ts).
 */
import { expect, it } from 'vitest';
import { collectGarbageSoon } from '../../workers/shard/collect-garbage.js';
import { eventually } from '../helpers/eventually.js';

const MiB = 1024 * 1024;

it('frees the arrays a thread dropped, without --expose-gc on the command line', async () => {
  expect(process.execArgv.some((a) => a.includes('expose-gc'))).toBe(false);
  let arrays: Uint8Array[] | null = Array.from({ length: 16 }, () => new Uint8Array(4 * MiB).fill(1));
  // Still held: this collection moves them to the old generation, as a shard's arrays are.
  await collectGarbageSoon();
  const held = process.memoryUsage().arrayBuffers;
  expect(held).toBeGreaterThanOrEqual(64 * MiB);
  expect(arrays.length).toBe(16);
  arrays = null;
  await collectGarbageSoon();
  // V8 releases the arrays' memory just after the collection, from a thread of its own.
  const after = await eventually({ what: 'the dropped arrays to be freed', timeoutMs: 5_000, intervalMs: 20 }, () => {
    const now = process.memoryUsage().arrayBuffers;
    return now <= held - 60 * MiB && now;
  });
  expect(after).toBeLessThanOrEqual(held - 60 * MiB);
});
