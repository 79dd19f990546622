/**
 * The files of a shard snapshot: written whole or not at all (temp file + rename), temp files of
 * writes that never finished removed once they are old, younger ones (a write in flight) kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitShardSnapshot, prepareShardSnapshot, readShardSnapshot, removeStaleTemps, STALE_TMP_MS, writeParts } from '../../workers/shard/persist/shard-snapshot.js';
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
  it('writes the fields of many chunks a slice at a time as one JSON document, and whether the typo vocabulary was on', async () => {
    const dir = tempDir();
    const shard = new Shard(PARAMS);
    shard.enableTypo();
    // More chunks than one slice of the fields' JSON (4,096), with tags and text for the typo words.
    const docs = Array.from({ length: 9_000 }, (_, i): ShardDoc => ({ chunkId: `c${i}`, text: `alpha w${i} tail${i % 7}`, trackingId: `t${i}`, link: null, tagSet: [`g${i % 3}`], numValue: i, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: { i } }));
    shard.apply(docs, [], 3);
    await commitShardSnapshot(prepareShardSnapshot(dir, 0, shard));
    const raw = fs.readFileSync(path.join(dir, 'shard-0.bin'));
    // The fields section (after magic, version, seq, the BM25 bytes and its own length) parses whole.
    const bm25Len = raw.readUInt32LE(8 + 4 + 8);
    const fieldsAt = 8 + 4 + 8 + 4 + bm25Len;
    expect(raw.readUInt32LE(fieldsAt)).toBe(raw.length - fieldsAt - 4);
    const fields = JSON.parse(raw.subarray(fieldsAt + 4).toString('utf8')) as { docs: { chunkId: string; numValue: number; words?: number[] }[]; words?: string[]; typo: boolean };
    expect(fields.docs.map((d) => d.chunkId)).toEqual(docs.map((d) => d.chunkId));
    expect(fields.typo).toBe(true);
    // The words are not written: the load does not count them (the core fills the vocabulary again).
    expect(fields.words).toBeUndefined();
    expect(fields.docs.some((d) => d.words !== undefined)).toBe(false);
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    expect(back.stats().chunkCount).toBe(9_000);
    for (const i of [0, 4095, 4096, 8191, 8192, 8999]) {
      const id = back.index.internalId(`c${i}`)!;
      expect(back.fields.doc(id, (i) => back.index.chunkId(i))).toMatchObject({ chunkId: `c${i}`, trackingId: `t${i}`, tagSet: [`g${i % 3}`], numValue: i });
      expect(back.fields.metadata(id)).toEqual({ i });
    }
    expect(back.typoWanted).toBe(true);
    expect(back.vocabulary).toBeNull();
    // What the core does after such a load (DatasetTypos.warm): turn it on and fill it from the store.
    expect(back.enableTypo()).toBe(false);
    back.fillTypo(docs.map((d) => ({ chunkId: d.chunkId, text: d.text })));
    expect(back.typoAnswers([{ word: 'tail3', maxDistance: 1 }])).toEqual(shard.typoAnswers([{ word: 'tail3', maxDistance: 1 }]));
  });

  it("loads a snapshot written with the typo words (before 2026-11-30) without counting them, and one of a shard without typo as not wanting it", async () => {
    const dir = tempDir();
    const shard = new Shard(PARAMS);
    shard.apply(Array.from({ length: 3 }, (_, i): ShardDoc => ({ chunkId: `c${i}`, text: `alpha w${i}`, trackingId: null, link: null, tagSet: [], numValue: null, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: null })), [], 5);
    await commitShardSnapshot(prepareShardSnapshot(dir, 0, shard));
    const plain = readShardSnapshot(dir, 0, PARAMS)!;
    expect(plain.typoWanted).toBe(false);
    const raw = fs.readFileSync(path.join(dir, 'shard-0.bin'));
    const fieldsAt = 8 + 4 + 8 + 4 + raw.readUInt32LE(8 + 4 + 8);
    const body = JSON.parse(raw.subarray(fieldsAt + 4).toString('utf8')) as { docs: Record<string, unknown>[] };
    // The old layout: each chunk's word ids into the body's `words`, and `typo` on.
    const old = JSON.stringify({ docs: body.docs.map((d, i) => ({ ...d, words: [0, i + 1] })), denseFile: null, words: ['alpha', 'w0', 'w1', 'w2'], typo: true });
    const length = Buffer.alloc(4);
    length.writeUInt32LE(Buffer.byteLength(old), 0);
    fs.writeFileSync(path.join(dir, 'shard-0.bin'), Buffer.concat([raw.subarray(0, fieldsAt), length, Buffer.from(old)]));
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    expect(back.appliedSeq).toBe(5);
    expect(back.stats().chunkCount).toBe(3);
    expect(back.typoWanted).toBe(true);
    expect(back.vocabulary).toBeNull();
  });

  it('writes every part in order however few bytes each write takes, and fails a write that makes no progress', async () => {
    const parts = [Buffer.from('magic-'), Buffer.alloc(0), Buffer.from('0123456789abcdef'), Buffer.from('x'), Buffer.from('tail')];
    const size = parts.reduce((n, p) => n + p.length, 0);
    for (const most of [1, 3, 7, 100]) {
      const file = Buffer.alloc(size, '.');
      // A file handle whose writes take at most `most` bytes, at the position asked.
      const handle = {
        writev: async (buffers: readonly NodeJS.ArrayBufferView[], position?: number | null) => {
          const bytes = Buffer.concat(buffers.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength))).subarray(0, most);
          bytes.copy(file, position ?? 0);
          return { bytesWritten: bytes.length, buffers: [...buffers] };
        },
      };
      await writeParts(handle as never, parts, size);
      expect(file.toString()).toBe('magic-0123456789abcdefxtail');
    }
    const stuck = { writev: async (buffers: readonly NodeJS.ArrayBufferView[]) => ({ bytesWritten: 0, buffers: [...buffers] }) };
    await expect(writeParts(stuck as never, parts, size)).rejects.toThrow(/no progress at byte 0 of 27/);
  });

  it('a written snapshot reads back as the shard, and the next one replaces it with nothing left over', async () => {
    const dir = tempDir();
    await commitShardSnapshot(prepareShardSnapshot(dir, 0, shardOf(5, 7)));
    const first = readShardSnapshot(dir, 0, PARAMS)!;
    expect(first.appliedSeq).toBe(7);
    expect(first.stats().chunkCount).toBe(5);
    // Encoded before the second is written: what a write in flight leaves of the first.
    const second = prepareShardSnapshot(dir, 0, shardOf(8, 9));
    expect(readShardSnapshot(dir, 0, PARAMS)!.appliedSeq).toBe(7);
    await commitShardSnapshot(second);
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    expect(back.appliedSeq).toBe(9);
    expect(back.stats().chunkCount).toBe(8);
    expect(fs.readdirSync(dir)).toEqual(['shard-0.bin']);
  });

  it('writes the shard as it was when the snapshot was taken, whatever the shard does while it is encoded and written', async () => {
    const dir = tempDir();
    const shard = shardOf(6, 4);
    shard.apply([{ chunkId: 'tagged', text: 'gamma', trackingId: 't', link: null, tagSet: ['red'], numValue: 1, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: { k: 1 } }], [], 5);
    const taken = prepareShardSnapshot(dir, 0, shard);
    const expected = { seq: shard.appliedSeq, stats: shard.stats(), alpha: shard.search('alpha', null, 20, null, null, true, false, null, false) };
    // The shard goes on between the turns that encode and write the snapshot.
    const committing = commitShardSnapshot(taken);
    shard.apply([{ chunkId: 'late', text: 'alpha alpha alpha', trackingId: null, link: null, tagSet: [], numValue: null, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: null }], ['c0', 'tagged'], 6);
    await new Promise((resolve) => setImmediate(resolve));
    shard.apply([], ['c1', 'c2'], 7);
    await committing;
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    expect(back.appliedSeq).toBe(expected.seq);
    expect(back.stats()).toEqual(expected.stats);
    expect(back.search('alpha', null, 20, null, null, true, false, null, false)).toEqual(expected.alpha);
    expect(back.scroll({ must: [{ field: { field: 'tag_set', match_any: [{ text: 'red' }] } }] }, null, 10, null, false).chunkIds).toEqual(['tagged']);
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
