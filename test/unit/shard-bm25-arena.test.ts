import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadBm25Snapshot, saveBm25Snapshot } from '../../workers/shard/persist/bm25-snapshot.js';
import { ownString } from '../../workers/shard/bm25/analyzer.js';
import { Bm25Index, bm25Idf } from '../../workers/shard/bm25/bm25-index.js';
import { ARENA_MAX, PostingsStore } from '../../workers/shard/bm25/postings-store.js';

// The postings arena: short lists share size-class slots (moved up as they grow, their old slots
// reused through free lists), long lists own arrays, purges move lists down or back into the arena.
// A plain model (arrays of [doc, tf]) checks every list after every step.

type Model = Map<number, [number, number][]>;

function expectSame(store: PostingsStore, model: Model): void {
  for (const [t, entries] of model) {
    expect(store.len[t]).toBe(entries.length);
    expect(Array.from(store.docsOf(t))).toEqual(entries.map((e) => e[0]));
    expect(Array.from(store.tfsOf(t))).toEqual(entries.map((e) => e[1]));
  }
}

describe('PostingsStore arena', () => {
  it('keeps every list intact through growth across size classes, purges and reloads', () => {
    fc.assert(
      fc.property(
        // Term weights skewed so some lists cross ARENA_MAX while most stay short.
        fc.array(fc.tuple(fc.nat(7), fc.integer({ min: 1, max: 3000 })), { minLength: 1, maxLength: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (bursts, deadShare) => {
          const store = new PostingsStore(0.9, 0.4);
          const model: Model = new Map();
          const docLen = new Uint32Array(200_000).fill(10);
          let doc = 0;
          for (let t = 0; t < 8; t++) {
            expect(store.intern(`term${t}`)).toBe(t);
            model.set(t, []);
          }
          for (const [t, n] of bursts) {
            // Bursts of one term interleave with others, so slots are freed and reused mid-run.
            for (let i = 0; i < n; i++) {
              const tf = 1 + ((doc * 7) % 5);
              store.append(t, doc, tf, 10);
              model.get(t)!.push([doc, tf]);
              doc++;
            }
          }
          expectSame(store, model);
          // Purge a share of the docs: lists shrink to smaller classes or back into the arena.
          const alive = new Uint8Array(doc);
          for (let d = 0; d < doc; d++) alive[d] = (d * 2654435761) % 1000 >= deadShare * 1000 ? 1 : 0;
          for (const [t, entries] of model) {
            store.purge(t, alive, docLen);
            model.set(t, entries.filter(([d]) => alive[d] === 1));
          }
          expectSame(store, model);
          // Lists keep growing correctly after a purge.
          for (const t of model.keys()) {
            store.append(t, doc, 2, 10);
            model.get(t)!.push([doc++, 2]);
          }
          expectSame(store, model);
          const { used, capacity } = store.arenaStats();
          expect(used).toBeLessThanOrEqual(capacity);
          // A bulk load (as from a snapshot) into a reserved arena gives the same lists, still growable.
          const loaded = new PostingsStore(0.9, 0.4);
          let words = 0;
          for (const entries of model.values()) words += PostingsStore.arenaWords(entries.length);
          loaded.reserveArena(words);
          for (const [t, entries] of model) {
            loaded.intern(`term${t}`);
            loaded.load(t, Uint32Array.from(entries, (e) => e[0]), Uint16Array.from(entries, (e) => e[1]), entries.length, 5, 10);
          }
          expect(loaded.arenaStats().used).toBe(words);
          expectSame(loaded, model);
          // Giving back growth room keeps every list and takes the arena words the load took (a
          // long list may be plain in one and narrow in the other: the load sees its exact size).
          store.compactStorage();
          expectSame(store, model);
          expect(store.arenaStats()).toMatchObject({ used: words, capacity: words });
          expect(store.memoryParts()['postings slack (own arrays)']).toBe(0);
          for (const t of model.keys()) {
            loaded.append(t, doc, 4, 10);
            store.append(t, doc, 4, 10);
            model.get(t)!.push([doc++, 4]);
          }
          expectSame(loaded, model);
          expectSame(store, model);
          // And the lists still purge and grow after it.
          for (const [t, entries] of model) {
            store.purge(t, alive, docLen);
            model.set(t, entries.filter(([d]) => alive[d] === 1));
          }
          expectSame(store, model);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('moves a list to its own arrays past ARENA_MAX and back into the arena when purged small', () => {
    const store = new PostingsStore(0.9, 0.4);
    const t = store.intern('big');
    const u = store.intern('small');
    for (let d = 0; d < ARENA_MAX + 10; d++) {
      store.append(t, 2 * d, 1, 5);
      if (d % 50 === 0) store.append(u, 2 * d + 1, 3, 5);
    }
    expect(store.arenaStats().ownLists).toBe(1);
    const alive = new Uint8Array(4 * ARENA_MAX);
    for (let d = 0; d < 20; d++) alive[4 * d] = 1;
    store.purge(t, alive, new Uint32Array(4 * ARENA_MAX).fill(5));
    expect(store.arenaStats().ownLists).toBe(0);
    expect(Array.from(store.docsOf(t))).toEqual(Array.from({ length: 20 }, (_, d) => 4 * d));
    expect(store.docsOf(u).length).toBe(Math.floor((ARENA_MAX + 9) / 50) + 1);
  });

  it('ownString returns an equal string', () => {
    for (const s of ['', 'short', 'phosphorylation', 'été-東京-😀-longer-than-thirteen', 'a'.repeat(100)]) expect(ownString(s)).toBe(s);
    const text = 'the phosphorylation of interleukins';
    const slice = text.slice(4, 19);
    expect(ownString(slice)).toBe('phosphorylation');
  });
});

describe('Bm25Index over arena and own lists', () => {
  it('matches brute force with lists on both sides of ARENA_MAX, deletes, compaction and a snapshot', () => {
    const index = new Bm25Index({ k1: 0.9, b: 0.4, compactMinDead: 64, compactDeadRatio: 0.1 });
    const docs = new Map<string, string[]>();
    const words = (i: number): string[] => {
      const out = [`w${i % 3}`]; // w0..w2: long lists (own arrays)
      if (i % 5 === 0) out.push(`v${i % 40}`); // v*: short lists
      if (i % 97 === 0) out.push('rare', 'rare');
      return out;
    };
    const n = 3 * ARENA_MAX + 200;
    for (let i = 0; i < n; i++) {
      docs.set(`d${i}`, words(i));
      index.upsert(`d${i}`, words(i).join(' '));
    }
    // Delete most docs of w1 so its list is purged below ARENA_MAX, then re-add a few (recycled ids).
    for (let i = 1; i < n; i += 3) if (i % 9 !== 1) {
      index.remove(`d${i}`);
      docs.delete(`d${i}`);
    }
    index.compact();
    for (let i = n; i < n + 50; i++) {
      docs.set(`d${i}`, words(i));
      index.upsert(`d${i}`, words(i).join(' '));
    }
    const brute = (q: string[]): { id: string; score: number }[] => {
      let total = 0;
      for (const w of docs.values()) total += w.length;
      const N = docs.size;
      const out: { id: string; score: number }[] = [];
      const df = new Map(q.map((t) => [t, [...docs.values()].filter((w) => w.includes(t)).length]));
      for (const [id, w] of docs) {
        let s = 0;
        for (const t of q) {
          const f = w.filter((x) => x === t).length;
          if (f > 0) s += (bm25Idf(N, df.get(t)!) * f * 1.9) / (f + 0.9 * (0.6 + (0.4 * w.length) / (total / N)));
        }
        if (s > 0) out.push({ id, score: s });
      }
      return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, 10);
    };
    const search = (ix: Bm25Index, q: string[]) => {
      const r = ix.search(q, 10, { ...ix.stats(), docFreqs: ix.termDocFreqs(q) });
      return r.chunkIds.map((id, i) => ({ id, score: r.scores[i]! }));
    };
    const copy = loadBm25Snapshot(saveBm25Snapshot(index));
    for (const q of [['w0'], ['w1'], ['w1', 'v5'], ['rare', 'w2'], ['v10', 'v15', 'w0'], ['rare']]) {
      const want = brute(q);
      for (const ix of [index, copy]) {
        const got = search(ix, q);
        expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
        got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 9));
      }
    }
  });
});
