/**
 * The files of a shard snapshot: written whole or not at all (temp file + rename), temp files of
 * writes that never finished removed once they are old, younger ones (a write in flight) kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitShardSnapshotAsync, prepareShardSnapshot, readShardSnapshot, removeStaleTemps, shardFile, STALE_TMP_MS, writeShardSnapshot } from '../../workers/shard/persist/shard-snapshot.js';
import type { ShardDoc } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';

const PARAMS = { k1: 0.9, b: 0.4 };
const dirs: string[] = [];
const tempDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-snapfiles-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function shardOf(n: number, seq: number): Shard {
  const shard = new Shard(PARAMS);
  shard.apply(
    Array.from({ length: n }, (_, i): ShardDoc => ({ chunkId: `c${i}`, text: `alpha beta w${i}`, trackingId: null, link: null, tagSet: [], numValue: null, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: null })),
    [],
    seq,
  );
  return shard;
}

describe('shard snapshot files', () => {
  it('written in this thread or off it, the same file reads back the same shard', async () => {
    const dir = tempDir();
    writeShardSnapshot(dir, 0, shardOf(5, 7));
    const sync = fs.readFileSync(shardFile(dir, 0));
    await commitShardSnapshotAsync(prepareShardSnapshot(dir, 0, shardOf(5, 7)));
    expect(fs.readFileSync(shardFile(dir, 0)).equals(sync)).toBe(true);
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    expect(back.appliedSeq).toBe(7);
    expect(back.stats().chunkCount).toBe(5);
    expect(fs.readdirSync(dir)).toEqual(['shard-0.bin']);
  });

  it('removes temp files of writes that never finished once old, and keeps young ones and other shards\'', () => {
    const dir = tempDir();
    const old = path.join(dir, 'shard-0.bin.tmp-11-0-3');
    const young = path.join(dir, 'shard-0.bin.tmp-12-0-4');
    const otherShard = path.join(dir, 'shard-1.bin.tmp-11-0-5');
    for (const f of [old, young, otherShard]) fs.writeFileSync(f, 'partial');
    const past = (Date.now() - STALE_TMP_MS - 60_000) / 1000;
    fs.utimesSync(old, past, past);
    fs.utimesSync(otherShard, past, past);
    removeStaleTemps(dir, 0);
    expect(fs.readdirSync(dir).sort()).toEqual(['shard-0.bin.tmp-12-0-4', 'shard-1.bin.tmp-11-0-5']);
    removeStaleTemps(path.join(dir, 'absent'), 0);
  });
});
