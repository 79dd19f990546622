import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';
import { decodeNarrow, MIN_NARROW_SHIFT, NARROW_MIN_ENTRIES, narrowShift } from '../../workers/shard/bm25/doc-blocks.js';
import { advance } from '../../workers/shard/bm25/gallop.js';
import { PostingsStore } from '../../workers/shard/bm25/postings-store.js';
import { bruteForceTf, close } from '../helpers/bm25-tf-oracle.js';

// Long postings lists keep doc ids as a u32 base per group and a u16 offset (doc-blocks.ts) when
// every group spans under 65,536 ids, else plain u32; a list changes layout as it grows, is
// purged, sorted or loaded. A plain model checks every list, and MaxScore's reads against brute force.

type Model = Map<number, number[]>;

/** Every way a reader sees term t's doc ids equals the model's, and `advance` finds each target. */
function expectSame(store: PostingsStore, model: Model, rand: () => number): void {
  for (const [t, want] of model) {
    expect(Array.from(store.docsOf(t))).toEqual(want);
    const { bases, shift, lows, n } = store.blockDocs(t);
    expect(n).toBe(want.length);
    expect(Array.from(decodeNarrow(bases, shift, lows, n, new Uint32Array(n)))).toEqual(want);
    if (!want.every((d, i) => i === 0 || want[i - 1]! <= d)) continue;
    for (let q = 0; q < 20 && n > 0; q++) {
      const target = Math.floor(rand() * (want[n - 1]! + 2));
      const from = Math.floor(rand() * n);
      let p = from;
      while (p < n && want[p]! < target) p++;
      expect(advance(bases, shift, lows, n, from, target)).toBe(p);
    }
  }
}

describe('PostingsStore doc-id blocks', () => {
  it('picks the widest group that fits, and none when even groups of 4 span 65,536 ids', () => {
    const dense = Uint32Array.from({ length: 1000 }, (_, i) => 5 + i * 500);
    expect(narrowShift(dense, dense.length)).toBe(7);
    // 128 entries 600 apart span 76,200: groups of 64 (37,800) fit.
    const wider = Uint32Array.from({ length: 1000 }, (_, i) => i * 600);
    expect(narrowShift(wider, wider.length)).toBe(6);
    const sparse = Uint32Array.from({ length: 1000 }, (_, i) => i * 20_000);
    expect(narrowShift(sparse, sparse.length)).toBe(MIN_NARROW_SHIFT);
    const jumps = Uint32Array.from({ length: 1000 }, (_, i) => i * 40_000);
    expect(narrowShift(jumps, jumps.length)).toBe(-1);
    // A group below its first id cannot be coded (offsets are unsigned).
    expect(narrowShift(Uint32Array.of(10, 20, 30, 5), 4)).toBe(-1);
  });

  it('codes an offset of 65,535 in a group and not 65,536, and finds doc ids across a jump between groups', () => {
    const store = new PostingsStore(0.9, 0.4);
    store.intern('edge');
    const want: number[] = [];
    const add = (doc: number): void => {
      store.append(0, doc, 1, 10);
      want.push(doc);
    };
    // Dense ids, then a jump of 100,000 at a group start (index 8,192 of groups of 128): still narrow.
    for (let d = 0; d < NARROW_MIN_ENTRIES + 50; d++) add(d < NARROW_MIN_ENTRIES ? d : d + 100_000);
    expect(store.shiftOf(0)).toBe(7);
    const { bases, shift, lows, n } = store.blockDocs(0);
    for (const target of [NARROW_MIN_ENTRIES - 1, NARROW_MIN_ENTRIES, 70_000, NARROW_MIN_ENTRIES + 100_000, NARROW_MIN_ENTRIES + 100_001]) {
      for (const from of [0, 100, NARROW_MIN_ENTRIES - 128, NARROW_MIN_ENTRIES]) {
        let p = from;
        while (p < n && want[p]! < target) p++;
        expect(advance(bases, shift, lows, n, from, target)).toBe(p);
      }
    }
    // Index 8,242 is inside the group starting at 8,192 (base 108,192).
    const base = want[NARROW_MIN_ENTRIES]!;
    add(base + 0xffff);
    expect(store.shiftOf(0)).toBe(7);
    add(base + 0x10000);
    expect(Array.from(store.docsOf(0))).toEqual(want);
    expect(store.shiftOf(0)).toBeLessThan(7);
  });

  it('keeps every list intact through appends that fit or break its groups, recycled ids, sorting, purges and loads', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.double({ min: 0, max: 0.9, noNaN: true }), (seed, deadShare) => {
        let s = seed;
        const rand = (): number => ((s = (s * 1_103_515_245 + 12_345) >>> 0) >>> 8) / 2 ** 24;
        const store = new PostingsStore(0.9, 0.4);
        const model: Model = new Map();
        // Term 0 gets recycled (out-of-order) ids, term 2 jumps past a u16 offset now and then, all
        // three grow past the length where lists are coded narrow.
        const next = new Map<number, number>();
        for (let t = 0; t < 3; t++) {
          store.intern(`t${t}`);
          model.set(t, []);
          next.set(t, 0);
        }
        let narrowSeen = 0;
        let plainSeen = 0;
        const steps = 3 * NARROW_MIN_ENTRIES * 1.3;
        for (let step = 0; step < steps; step++) {
          const t = Math.floor(rand() * 3);
          const r = rand();
          let doc: number;
          if (t === 0 && r < 0.01 && model.get(t)!.length > 0) {
            doc = Math.floor(rand() * model.get(t)!.at(-1)!); // a recycled id, out of order
          } else {
            doc = next.get(t)! + (t === 2 && r < 0.003 ? 70_000 + Math.floor(rand() * 10_000) : 1 + Math.floor(rand() * 300));
            next.set(t, doc);
          }
          store.append(t, doc, 1 + (doc % 3), 10);
          model.get(t)!.push(doc);
          if (step % 2000 === 1999) {
            const st = store.arenaStats();
            narrowSeen += st.narrowLists;
            plainSeen += st.ownLists - st.narrowLists;
          }
        }
        expectSame(store, model, rand);
        for (const [t, docs] of model) {
          store.ensureSorted(t);
          docs.sort((a, b) => a - b);
        }
        expectSame(store, model, rand);
        // Sorted, the recycled ids' list is coded narrow again unless a jump sits inside a group.
        narrowSeen += store.arenaStats().narrowLists;
        const top = Math.max(...[...next.values()]) + 1;
        const alive = new Uint8Array(top).map((_, d) => ((d * 2_654_435_761) % 1000 >= deadShare * 1000 ? 1 : 0));
        for (const [t, docs] of model) {
          store.purge(t, alive, new Uint32Array(top).fill(10));
          // A recycled id may repeat one already in the list: both entries go or stay together.
          model.set(t, docs.filter((d) => alive[d] === 1));
        }
        expectSame(store, model, rand);
        const loaded = new PostingsStore(0.9, 0.4);
        for (const [t, docs] of model) {
          loaded.intern(`t${t}`);
          loaded.load(t, Uint32Array.from(docs), Uint16Array.from(docs, (d) => 1 + (d % 3)), docs.length, 3, 10);
        }
        expectSame(loaded, model, rand);
        for (const [t, docs] of model) expect(Array.from(loaded.tfsOf(t))).toEqual(docs.map((d) => 1 + (d % 3)));
        return narrowSeen > 0 && plainSeen > 0;
      }),
      { seed: 11, numRuns: 8 },
    );
  });

  it('takes about 2 bytes a doc id for a dense long list, 4 for one that cannot be narrowed or is short', () => {
    const store = new PostingsStore(0.9, 0.4);
    store.intern('dense');
    store.intern('sparse');
    for (let d = 0; d < 100_000; d++) store.append(0, d * 3, 1, 10);
    const dense = store.memoryParts()['postings doc ids']!;
    expect(dense).toBeLessThan(100_000 * 2.1);
    for (let d = 0; d < 100_000; d++) store.append(1, d * 70_000, 1, 10);
    expect(store.memoryParts()['postings doc ids']! - dense).toBe(100_000 * 4);
    // Shorter lists stay plain: reading a narrow doc id costs a second load.
    store.intern('short');
    for (let d = 0; d < NARROW_MIN_ENTRIES - 1_000; d++) store.append(2, d, 1, 10);
    expect(store.shiftOf(2)).toBe(0);
  });
});

describe('Bm25Index over doc-id blocks against brute force', () => {
  it('ranks exactly over dense, sparse and plain long lists spread across 140,000 ids', () => {
    // Term "dens" in every 3rd doc (groups of 128), "mid" in the first 8,000 and every 600th (groups
    // of 64), "far" in two runs 130,000 ids apart (a group straddles the jump: plain u32), "rare"
    // in a few (an arena list); filler everywhere.
    const index = new Bm25Index({ compactMinDead: 1 << 30 });
    const live = new Map<string, Map<string, number>>();
    const lens = new Map<string, number>();
    const N = 140_000;
    for (let i = 0; i < N; i++) {
      const tokens = ['fill'];
      if (i % 3 === 0) tokens.push('dens', ...(i % 7 === 0 ? ['dens'] : []));
      if (i < 8_000 || i % 600 === 0) tokens.push('mid');
      if (i < 4_102 || (i >= 130_000 && i < 134_102)) tokens.push('far', ...(i % 5 === 0 ? ['far', 'far'] : []));
      if (i % 9_973 === 0) tokens.push('rare');
      const id = `c${i.toString().padStart(6, '0')}`;
      index.upsertTokens(id, tokens);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      live.set(id, tf);
      lens.set(id, tokens.length);
    }
    const post = (index as unknown as { post: PostingsStore }).post;
    const termId = (w: string): number => post.termIds.get(w)!;
    expect(['dens', 'mid', 'far', 'rare'].map((w) => post.shiftOf(termId(w)))).toEqual([7, 6, 0, 0]);
    expect(post.arenaStats().narrowLists).toBe(3); // fill, dens, mid
    // Large k keeps the threshold low, so that several lists stay essential (term-at-a-time windows).
    for (const q of [['dens'], ['mid', 'far'], ['far', 'rare', 'dens'], ['mid', 'dens', 'fill'], ['far'], ['dens', 'fill'], ['mid', 'dens']]) {
      for (const k of [1, 10, 100, 5_000]) {
        const got = index.search(q, k, { ...index.stats(), docFreqs: index.termDocFreqs(q) });
        const want = bruteForceTf(live, lens, q, null).slice(0, k);
        expect(got.chunkIds).toEqual(want.map((w) => w.id));
        for (let i = 0; i < want.length; i++) expect(close(got.scores[i]!, want[i]!.score)).toBe(true);
      }
    }
  });
});
