import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bm25Index, type PairQuery } from '../../workers/shard/bm25/bm25-index.js';
import { PAIR_WEIGHT, pairFrequency, queryPairs } from '../../workers/shard/bm25/proximity.js';
import { PairSite, SequenceStore } from '../../workers/shard/bm25/sequence-store.js';
import { Shard } from '../../workers/shard/shard.js';
import { textDoc } from '../../workers/shard/text-doc.js';
import { encodeVarints, MAX_VARINT_BYTES } from '../../workers/shard/bm25/varint.js';
import { decodeBm25Snapshot, loadBm25Snapshot, saveBm25Snapshot } from '../../workers/shard/persist/bm25-snapshot.js';
import { V2_INDEX_OPTIONS, v2Ops } from '../helpers/bm25-v2-corpus.js';
import { pairTf } from '../helpers/proximity-oracle.js';

/** Ids around every code-length boundary, up to the largest u32. */
const idArb = fc.oneof(
  fc.nat(300),
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.constantFrom(127, 128, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 0xffffffff),
);

/** LEB128 decoded the plain way (the store decodes in place, inline). */
function decodeAll(codes: Uint8Array, from: number, to: number): number[] {
  const out: number[] = [];
  let v = 0;
  let scale = 1;
  for (let r = from; r < to; r++) {
    v += (codes[r]! & 0x7f) * scale;
    scale *= 128;
    if (codes[r]! < 0x80) {
      out.push(v);
      v = 0;
      scale = 1;
    }
  }
  return out;
}

describe('LEB128 codes', () => {
  it('round-trip any u32 values, and code values under 128 in one byte', () => {
    fc.assert(
      fc.property(fc.array(idArb, { maxLength: 200 }), (ids) => {
        const codes = new Uint8Array(3 + ids.length * MAX_VARINT_BYTES);
        expect(decodeAll(codes, 3, encodeVarints(ids, ids.length, codes, 3))).toEqual(ids);
      }),
      { numRuns: 500 },
    );
    const codes = new Uint8Array(10);
    expect(encodeVarints([0, 127, 128], 3, codes, 0)).toBe(4);
    expect(encodeVarints([0xffffffff], 1, codes, 0)).toBe(MAX_VARINT_BYTES);
  });
});

/** Small ids mostly, some past 256 and 65,536 distinct values' worth. */
const denseIdArb = fc.oneof({ weight: 4, arbitrary: fc.nat(300) }, { weight: 1, arbitrary: fc.nat(200_000) });

describe('SequenceStore', () => {
  it('holds the distinct ids and kept positions set last for each document, through clears, compactions and a restore', () => {
    type Op = { doc: number; ids: number[] | null; skipped: number[] };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ doc: fc.nat(50), ids: fc.option(fc.array(denseIdArb, { maxLength: 40 }), { freq: 4 }), skipped: fc.array(fc.nat(300), { maxLength: 5 }) }),
          { maxLength: 300 },
        ),
        (ops: Op[]) => {
          const store = new SequenceStore();
          const oracle = new Map<number, { terms: number[]; kept: number[] }>();
          const skip = new Uint8Array(301);
          for (const { doc, ids, skipped } of ops) {
            if (ids === null) {
              store.clear(doc);
              oracle.delete(doc);
              continue;
            }
            for (const t of skipped) skip[t] = 1;
            store.set(doc, ids, ids.length, skip);
            oracle.set(doc, { terms: [...new Set(ids)].sort((x, y) => x - y), kept: ids.filter((t) => skip[t] !== 1) });
            skip.fill(0);
          }
          const { offsets, codes } = store.export(60);
          const copy = SequenceStore.restore(offsets, codes);
          const site = new PairSite();
          for (let d = 0; d < 60; d++) {
            const want = oracle.get(d) ?? { terms: [], kept: [] };
            for (const s of [store, copy]) {
              expect(Array.from(s.terms(d))).toEqual(want.terms);
              expect(Array.from(s.get(d))).toEqual(want.kept);
              // A pair located: the two ids' local indexes (in the asked order) and the kept positions.
              const mid = want.terms[want.terms.length >> 1] ?? 5;
              const last = want.terms[want.terms.length - 1] ?? 9;
              for (const [a, b] of [[mid, want.terms[0] ?? 3], [mid, mid + 1], [last, mid], [mid, mid]] as [number, number][]) {
                const found = s.locate(d, a, b, site);
                expect(found).toBe(want.terms.includes(a) && want.terms.includes(b));
                if (!found) continue;
                expect([site.la, site.lb]).toEqual([want.terms.indexOf(a), want.terms.indexOf(b)]);
                expect((site.to - site.from) / site.width).toBe(want.kept.length);
              }
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('codes a document given its distinct ids (in any order) exactly as one whose ids it finds itself', () => {
    // The index hands over the distinct terms it counted: ids past the scratch arrays' first
    // size (1,024) and in first-seen order, which the store must sort.
    fc.assert(
      fc.property(
        fc.array(fc.record({ doc: fc.nat(20), ids: fc.array(fc.oneof(fc.nat(40), fc.nat(6000)), { maxLength: 60 }) }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(6000), { maxLength: 30 }),
        (writes, skipped) => {
          const skip = new Uint8Array(6001);
          for (const t of skipped) skip[t] = 1;
          const found = new SequenceStore();
          const given = new SequenceStore();
          for (const { doc, ids } of writes) {
            found.set(doc, ids, ids.length, skip);
            const firstSeen = Uint32Array.from(new Set(ids));
            given.setDistinct(doc, ids, ids.length, firstSeen, firstSeen.length, skip);
          }
          const a = found.export(21);
          const b = given.export(21);
          expect(Array.from(b.offsets)).toEqual(Array.from(a.offsets));
          expect(Buffer.from(b.codes).equals(Buffer.from(a.codes))).toBe(true);
          for (let d = 0; d <= 20; d++) expect(Array.from(given.get(d))).toEqual(Array.from(found.get(d)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('spreads documents over pages, one larger than a page in arrays of its own, through compactions and a restore', () => {
    // ~4 KB documents: several pages' worth, churned so that compactions rewrite them, and one
    // document of 300,000 positions over ~95,000 distinct ids (4-byte local indexes, ~1.4 MB:
    // more than a page).
    let seed = 7;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const docOf = (d: number): number[] => Array.from({ length: d === 42 ? 300_000 : 1_000 + (d % 50) }, () => rand(d === 42 ? 100_000 : 200_000));
    const store = new SequenceStore();
    const oracle = new Map<number, number[]>();
    for (let round = 0; round < 4; round++) {
      for (let d = round % 2; d < 1_200; d += 2) {
        const ids = docOf(d);
        store.set(d, ids, ids.length, null);
        oracle.set(d, ids);
      }
      for (let d = (round + 1) % 2; d < 1_200; d += 4) {
        store.clear(d);
        oracle.delete(d);
      }
    }
    const { offsets, codes } = store.export(1_200);
    const copy = SequenceStore.restore(offsets, codes);
    for (const s of [store, copy]) {
      for (let d = 0; d < 1_200; d++) {
        const want = oracle.get(d) ?? [];
        expect(Array.from(s.get(d))).toEqual(want);
        expect(Array.from(s.terms(d))).toEqual([...new Set(want)].sort((x, y) => x - y));
      }
    }
    // Pages are never grown by copying once full: what is not data is at most the page being
    // filled, the unused ends of full pages and the garbage of cleared documents.
    const live = copy.memoryParts();
    expect(live.data).toBe(codes.length);
    expect(live.slack).toBeLessThan(2 ** 18 + 300_000);
  });

  it('codes local indexes 1, 2 or 4 bytes wide as a document has more distinct ids', () => {
    const store = new SequenceStore();
    for (const distinct of [1, 256, 257, 65_536, 65_537]) {
      const ids = Array.from({ length: distinct + 3 }, (_, i) => (i * 7919) % distinct);
      store.set(0, ids, ids.length, null);
      const v = store.open(0);
      expect(v.width).toBe(distinct <= 256 ? 1 : distinct <= 65_536 ? 2 : 4);
      expect(v.to - v.from).toBe(ids.length * v.width);
      expect(Array.from(store.get(0))).toEqual(ids);
    }
  });

  it('keeps a set of ids without positions (typo-vocabulary words), smaller than with them', () => {
    const withPositions = new SequenceStore();
    const setOnly = new SequenceStore();
    const ids = [900, 3, 77, 3, 12_000, 77];
    withPositions.set(5, ids, ids.length, null);
    setOnly.set(5, ids, ids.length, null, false);
    expect(Array.from(setOnly.terms(5))).toEqual([3, 77, 900, 12_000]);
    expect(setOnly.get(5)).toHaveLength(0);
    expect(setOnly.memoryParts().data).toBe(withPositions.memoryParts().data - ids.length);
  });

  it('counts proximity pairs as the brute-force count over the kept positions', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(12), { maxLength: 60 }), fc.nat(12), fc.nat(12), fc.array(fc.nat(12), { maxLength: 3 }), (ids, a, b, skipped) => {
        const skip = new Uint8Array(13);
        for (const t of skipped) skip[t] = 1;
        const store = new SequenceStore();
        store.set(3, ids, ids.length, skip);
        const kept = ids.filter((t) => skip[t] !== 1);
        // Skipped words are no content: queryPairs never asks for them, and they have no position.
        const want = skip[a] === 1 || skip[b] === 1 ? 0 : pairTf(kept, a, b);
        const site = new PairSite();
        const found = store.locate(3, a, b, site);
        expect(found).toBe(ids.includes(a) && ids.includes(b));
        expect(found ? pairFrequency(site) : 0).toBe(want);
      }),
      { numRuns: 1000 },
    );
  });

  it('locates a pair and counts it as brute force at every local-index width and id size', () => {
    // Documents of 1-, 2- and 4-byte local indexes, ids past one varint byte, and queried ids
    // absent below, between and above the document's (decoding stops early in each case).
    const store = new SequenceStore();
    const site = new PairSite();
    const pickArb = fc.tuple(fc.nat(12), fc.nat(2));
    fc.assert(
      fc.property(fc.constantFrom(3, 250, 300, 70_000), fc.array(pickArb, { minLength: 1, maxLength: 200 }), fc.nat(1000), fc.nat(1000), fc.nat(7), (distinct, picks, x, y, doc) => {
        // Distinct ids are 1 mod 3 (0 and 2 mod 3 are never present), from 3 * 2^20, with gaps of
        // one and two varint bytes. Picked ids sit next to ids whose local index differs by 256
        // or 65,536 (the same low byte).
        const vocab = (i: number): number => 3 * 2 ** 20 + 1 + 3 * (i * 50 + ((i * 7919) % 50));
        const local = ([i, high]: [number, number]): number => (i + [0, 256, 65_536][high]! < distinct ? i + [0, 256, 65_536][high]! : i);
        const filler = Array.from({ length: distinct }, (_, i) => vocab(i));
        const ids = [...picks.map((p) => vocab(local(p))), ...filler, ...picks.map(([i]) => vocab(i % 5))];
        store.set(doc, ids, ids.length, null);
        const want = (a: number, b: number): number => (ids.includes(a) && ids.includes(b) ? pairTf(ids, a, b) : -1);
        for (const [a, b] of [
          [ids[x % picks.length]!, ids[y % picks.length]!],
          [vocab(x % distinct), vocab(y % distinct)],
          [vocab(y % 5), vocab(x % 5)],
          [x * 3, vocab(y % distinct)],
          [vocab(x % distinct), vocab(distinct) + y],
          [vocab(x % distinct), vocab(x % distinct)],
        ] as [number, number][]) {
          const found = store.locate(doc, a, b, site);
          expect(found ? pairFrequency(site) : -1).toBe(want(a, b));
        }
      }),
      { numRuns: 60 },
    );
    expect(store.locate(99, 1, 4, site)).toBe(false);
  });
});

// Stop words ('the', 'of', 'and', 'a') are stored too: a removal must release their postings.
const VOCAB = ['the', 'of', 'and', 'a', 'apple', 'river', 'stone', 'cloud', 'tiger', 'lamp', 'ocean', 'théta', '東京'];

type IndexOp = { kind: 'upsert'; id: number; words: number[] } | { kind: 'remove'; id: number } | { kind: 'compact' } | { kind: 'reload' };
const indexOpArb: fc.Arbitrary<IndexOp> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('upsert' as const), id: fc.nat(25), words: fc.array(fc.nat(VOCAB.length - 1), { maxLength: 14 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(25) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reload' as const) }) },
);

describe('removals through the stored tokens', () => {
  it('keep every document frequency exact against a recount of the live documents', () => {
    fc.assert(
      fc.property(fc.array(indexOpArb, { maxLength: 80 }), fc.boolean(), (ops, removeStopWords) => {
        const options = { compactMinDead: 3, compactDeadRatio: 0.2, analyzer: { removeStopWords } };
        let index = new Bm25Index(options);
        const live = new Map<string, string>();
        for (const op of ops) {
          if (op.kind === 'upsert') {
            const text = op.words.map((w) => VOCAB[w]).join(' ');
            index.upsert(`c${op.id}`, text);
            live.set(`c${op.id}`, text);
          } else if (op.kind === 'remove') {
            index.remove(`c${op.id}`);
            live.delete(`c${op.id}`);
          } else if (op.kind === 'compact') {
            index.compact();
          } else {
            // A loaded index removes from tokens it did not write itself.
            index = loadBm25Snapshot(saveBm25Snapshot(index), options);
          }
        }
        const terms = [...new Set(VOCAB.flatMap((w) => index.analyzer.analyze(w)))];
        const recount = terms.map((t) => [...live.values()].filter((text) => index.analyzer.analyze(text).includes(t)).length);
        expect(Array.from(index.termDocFreqs(terms))).toEqual(recount);
        expect(index.termCount).toBe(recount.filter((n) => n > 0).length);
        const totalLength = [...live.values()].reduce((n, text) => n + index.analyzer.analyze(text).length, 0);
        expect(index.stats()).toEqual({ docCount: live.size, totalLength });
      }),
      { numRuns: 300 },
    );
  });

  it('keep them exact in a loaded index past a thousand terms', () => {
    // Term ids past the sequence store's first scratch size: a lost mark would release a term twice.
    let index = new Bm25Index();
    for (let i = 0; i < 1500; i++) index.upsert(`c${i}`, `w${i} the w${i} w${i + 1}`);
    index = loadBm25Snapshot(saveBm25Snapshot(index));
    for (let i = 0; i < 1500; i += 2) index.remove(`c${i}`);
    const terms = Array.from({ length: 1501 }, (_, i) => `w${i}`);
    // w(i) is in docs i - 1 and i, and only the odd docs are left.
    const recount = terms.map((_, i) => [i - 1, i].filter((d) => d >= 0 && d < 1500 && d % 2 === 1).length);
    expect(Array.from(index.termDocFreqs(terms))).toEqual(recount);
    expect(index.termDocFreqs(['the'])[0]).toBe(750);
    expect(index.termCount).toBe(recount.filter((n) => n > 0).length + 1);
  });
});

/** BM25 and fulltext top 10 of a few queries, with every document frequency. */
function answers(index: Bm25Index): unknown[] {
  const out: unknown[] = [];
  for (const q of ['apple river', 'the stone of the cloud', 'tiger lamp ocean', '東京 théta x1', 'running stone', 'a cloud is a river']) {
    const terms = index.analyzer.analyze(q);
    const pairs = queryPairs(terms, (t) => index.isStopTerm(t));
    const stats = { ...index.stats(), docFreqs: index.termDocFreqs(terms) };
    const pq: PairQuery = { pairs, docFreqs: index.pairDocFreqs(pairs), weight: PAIR_WEIGHT };
    const plain = index.search(terms, 10, stats);
    const full = index.search(terms, 10, stats, null, pq);
    out.push(q, Array.from(stats.docFreqs), Array.from(pq.docFreqs), plain.chunkIds, Array.from(plain.scores), full.chunkIds, Array.from(full.scores));
  }
  return out;
}

describe('a version 2 snapshot (forward index + content sequences)', () => {
  const file = path.join(import.meta.dirname, '../fixtures/bm25-snapshot-v2.bin');

  function replayed(): Bm25Index {
    const index = new Bm25Index(V2_INDEX_OPTIONS);
    for (const op of v2Ops()) {
      if (op.text === undefined) index.remove(op.id);
      else index.upsert(op.id, op.text, op.boost ?? null);
    }
    index.compact();
    return index;
  }

  it('loads with the same results as the index rebuilt by today code, and removes exactly', () => {
    const buf = fs.readFileSync(file);
    expect(buf.readUInt32LE(8)).toBe(2);
    const old = loadBm25Snapshot(buf, V2_INDEX_OPTIONS);
    const fresh = replayed();
    expect(old.stats()).toEqual(fresh.stats());
    expect(old.termCount).toBe(fresh.termCount);
    // The same state to the byte: the sequences' coding is canonical (distinct terms sorted,
    // content positions in text order), so version 2's parts convert to exactly today's.
    const freshState = fresh.exportState();
    expect(old.exportState()).toEqual(freshState);
    expect(answers(old)).toEqual(answers(fresh));
    // Removing every document releases every term, stop words included.
    for (const id of new Set(v2Ops().map((op) => op.id))) {
      old.remove(id);
      fresh.remove(id);
      expect(old.termDocFreqs(freshState.terms)).toEqual(fresh.termDocFreqs(freshState.terms));
    }
    expect(old.termCount).toBe(0);
  });

  it('is written back as the current version with the same results', () => {
    const old = loadBm25Snapshot(fs.readFileSync(file), V2_INDEX_OPTIONS);
    const buf = saveBm25Snapshot(old);
    expect(buf.readUInt32LE(8)).toBe(3);
    expect(decodeBm25Snapshot(buf).tokenCodes.length).toBeGreaterThan(0);
    expect(answers(loadBm25Snapshot(buf, V2_INDEX_OPTIONS))).toEqual(answers(old));
  });
});

describe('the typo vocabulary through the stored word sets', () => {
  it('counts each word in as many live chunks as a shard built from the live chunks alone', () => {
    const words = ['river', 'stone', 'maple', 'cloud', 'ember', 'harbor', 'lantern', 'meadow', 'quartz', 'willow', 'aster', 'birch'];
    const text = (i: number): string => Array.from({ length: 8 }, (_, j) => words[(i * 5 + j * 7) % words.length]).join(' ');
    const docs = Array.from({ length: 60 }, (_, i) => textDoc(`c${i}`, text(i)));
    const churned = new Shard({ k1: 0.9, b: 0.4 });
    churned.enableTypo();
    churned.apply(docs, [], 1);
    // Half removed, a quarter rewritten with other words.
    churned.apply(docs.slice(40).map((d, i) => textDoc(d.chunkId, text(i + 100))), docs.slice(0, 30).map((d) => d.chunkId), 2);
    const live = [...docs.slice(30, 40), ...docs.slice(40).map((d, i) => textDoc(d.chunkId, text(i + 100)))];
    const fresh = new Shard({ k1: 0.9, b: 0.4 });
    fresh.enableTypo();
    fresh.apply(live, [], 1);
    const lookups = words.map((word) => ({ word, maxDistance: 0 }));
    expect(churned.typoAnswers(lookups).map((a) => a.exact)).toEqual(fresh.typoAnswers(lookups).map((a) => a.exact));
  });
});
