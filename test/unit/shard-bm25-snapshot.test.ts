import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BM25_SNAPSHOT_VERSION,
  loadBm25Snapshot,
  saveBm25Snapshot,
  SnapshotFormatError,
} from '../../workers/shard/persist/bm25-snapshot.js';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'théta', '東京', 'x1'];

function search(index: Bm25Index, q: string) {
  const terms = index.analyzer.analyze(q);
  return index.search(terms, 10, { ...index.stats(), docFreqs: index.termDocFreqs(terms) });
}

describe('BM25 snapshot', () => {
  it('round-trips: same state, same stats, same results, and keeps accepting writes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(30), fc.array(fc.nat(WORDS.length - 1), { maxLength: 12 }), fc.boolean()), { maxLength: 60 }),
        fc.boolean(),
        (ops, stopWords) => {
          const index = new Bm25Index({ k1: 1.1, b: 0.6, analyzer: { removeStopWords: stopWords }, compactMinDead: 1024 });
          for (const [id, ws, del] of ops) {
            if (del) index.remove(`c${id}`);
            else index.upsert(`c${id}`, ws.map((w) => WORDS[w]).join(' '));
          }
          const queries = WORDS.map((w, i) => `${w} ${WORDS[(i + 3) % WORDS.length]}`);
          const before = queries.map((q) => search(index, q));
          const buf = saveBm25Snapshot(index);
          const copy = loadBm25Snapshot(buf);
          expect(copy.options.k1).toBe(1.1);
          expect(copy.options.b).toBe(0.6);
          expect(copy.analyzer.options).toEqual(index.analyzer.options);
          expect(copy.exportState()).toEqual(index.exportState());
          expect(copy.stats()).toEqual(index.stats());
          expect(queries.map((q) => search(copy, q))).toEqual(before);
          // Saving the loaded copy gives the same bytes: the format is deterministic.
          expect(saveBm25Snapshot(copy).equals(buf)).toBe(true);
          // A loaded index is a normal index: ids stay stable and writes go on.
          for (const [id] of ops) expect(copy.internalId(`c${id}`)).toBe(index.internalId(`c${id}`));
          copy.upsert('new', 'alpha alpha');
          index.upsert('new', 'alpha alpha');
          expect(search(copy, 'alpha')).toEqual(search(index, 'alpha'));
        },
      ),
      { seed: 99, numRuns: 100 },
    );
  });

  it('rejects an unknown format version with a clear error', () => {
    const index = new Bm25Index();
    index.upsert('a', 'hello world');
    const buf = saveBm25Snapshot(index);
    const future = Buffer.from(buf);
    future.writeUInt32LE(BM25_SNAPSHOT_VERSION + 1, 8);
    expect(() => loadBm25Snapshot(future)).toThrow(SnapshotFormatError);
    expect(() => loadBm25Snapshot(future)).toThrow(new RegExp(`unsupported BM25 snapshot format version ${BM25_SNAPSHOT_VERSION + 1} .*reads versions 2 to ${BM25_SNAPSHOT_VERSION}`));
  });

  it('rejects bad magic and truncated buffers', () => {
    const index = new Bm25Index();
    index.upsert('a', 'hello world');
    const buf = saveBm25Snapshot(index);
    const bad = Buffer.from(buf);
    bad[0] = 0x58;
    expect(() => loadBm25Snapshot(bad)).toThrow(/bad magic/);
    for (const cut of [13, 40, buf.length - 1]) {
      expect(() => loadBm25Snapshot(buf.subarray(0, cut))).toThrow(SnapshotFormatError);
    }
  });
});
