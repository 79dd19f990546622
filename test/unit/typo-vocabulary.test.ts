import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Vocabulary, type VocabularyMatch } from '../../workers/shard/typo/vocabulary.js';
import { VocabularySnapshotError } from '../../workers/shard/typo/vocabulary-snapshot.js';
import { boundedLevenshtein } from '../../workers/shard/typo/levenshtein.js';

/** Textbook full-matrix Levenshtein over UTF-16 units: the oracle. */
function levenshtein(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

/** Brute force over the model of the vocabulary: every word within distance 2, sorted as lookup sorts. */
function scan(model: Map<string, number>, word: string, minIndexedCount = 1): VocabularyMatch[] {
  const out: VocabularyMatch[] = [];
  for (const [w, count] of model) {
    if (Math.abs(w.length - word.length) > 2) continue; // the distance is at least the length difference
    const distance = levenshtein(word, w);
    if (distance === 0 || (distance <= 2 && count >= minIndexedCount)) out.push({ word: w, distance, count });
  }
  return out.sort((a, b) => a.distance - b.distance || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
}

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A small alphabet makes near words (and shared deletion keys) common, which is what is under test.
function randomWord(rand: () => number, alphabet = 'abcde'): string {
  const len = 1 + Math.floor(rand() * 11);
  let w = '';
  for (let i = 0; i < len; i++) w += alphabet[Math.floor(rand() * alphabet.length)];
  return w;
}

function typo(rand: () => number, w: string): string {
  const i = Math.floor(rand() * (w.length + 1));
  const c = 'abcdef'[Math.floor(rand() * 6)]!;
  switch (Math.floor(rand() * 3)) {
    case 0:
      return w.slice(0, i) + c + w.slice(i);
    case 1:
      return w.slice(0, i) + w.slice(i + 1);
    default:
      return w.slice(0, i) + c + w.slice(i + 1);
  }
}

describe('boundedLevenshtein', () => {
  it('equals the full matrix up to the cutoff, max + 1 past it', () => {
    const units = (s: string) => Uint16Array.from(s, (c) => c.charCodeAt(0));
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 }), fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 }), fc.integer({ min: 0, max: 3 }), (a, b, k) => {
        const d = levenshtein(a, b);
        expect(boundedLevenshtein(units(a), 0, a.length, units(b), 0, b.length, k)).toBe(d <= k ? d : k + 1);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Vocabulary', () => {
  for (const [prefixLength, minIndexedCount] of [[2, 1], [4, 1], [7, 1], [4, 2], [7, 3]] as const) {
    it(`lookup equals a brute-force scan after random adds and removes (prefix length ${prefixLength}, min indexed count ${minIndexedCount})`, () => {
      const rand = rng(1000 + prefixLength + 100 * minIndexedCount);
      const vocab = new Vocabulary({ prefixLength, minIndexedCount });
      const model = new Map<string, number>();
      const docs: string[][] = [];
      for (let step = 0; step < 2000; step++) {
        if (docs.length > 0 && rand() < 0.4) {
          const doc = docs.splice(Math.floor(rand() * docs.length), 1)[0]!;
          vocab.remove(doc);
          for (const w of new Set(doc)) {
            const c = model.get(w)! - 1;
            if (c === 0) model.delete(w);
            else model.set(w, c);
          }
        } else {
          const doc = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => randomWord(rand));
          docs.push(doc);
          vocab.add(doc);
          for (const w of new Set(doc)) model.set(w, (model.get(w) ?? 0) + 1);
        }
        if (step % 100 === 0) {
          expect(vocab.size).toBe(model.size);
          expect(new Map(vocab.entries())).toEqual(model);
          const words = [...model.keys()];
          for (let q = 0; q < 20; q++) {
            const base = words.length > 0 && rand() < 0.7 ? words[Math.floor(rand() * words.length)]! : randomWord(rand);
            const query = rand() < 0.5 ? typo(rand, typo(rand, base)) : typo(rand, base);
            const expected = scan(model, query, minIndexedCount);
            for (const k of [0, 1, 2] as const) expect(vocab.lookup(query, k), `${query} k=${k}`).toEqual(expected.filter((m) => m.distance <= k));
            expect(vocab.count(base)).toBe(model.get(base) ?? 0);
          }
        }
      }
      // Everything removed: nothing left to find.
      for (const doc of docs) vocab.remove(doc);
      expect(vocab.size).toBe(0);
      expect(vocab.lookup('abc', 2)).toEqual([]);
    });
  }

  it('counts documents, not occurrences, and forgets a word at 0', () => {
    const v = new Vocabulary();
    v.add(['apple', 'apple', 'pear']);
    v.add(['apple']);
    expect(v.count('apple')).toBe(2);
    expect(v.count('pear')).toBe(1);
    v.remove(['pear', 'apple', 'apple']);
    expect(v.count('apple')).toBe(1);
    expect(v.count('pear')).toBe(0);
    expect(v.size).toBe(1);
    v.remove(['nothing']);
    expect(v.size).toBe(1);
  });

  it('answers a batch: exact counts, and candidates only for absent words', () => {
    const v = new Vocabulary();
    v.add(['protein', 'proteins']);
    v.add(['protein']);
    expect(v.answer([{ word: 'protein', maxDistance: 1 }, { word: 'protien', maxDistance: 2 }, { word: 'proteins', maxDistance: 0 }])).toEqual([
      { exact: 2, candidates: [] },
      // 'proteins' is 3 edits from 'protien' (two substitutions and an insertion): out of reach.
      { exact: 0, candidates: [{ word: 'protein', distance: 2, count: 2 }] },
      { exact: 1, candidates: [] },
    ]);
  });

  it('round-trips through bytes after churn, and rejects foreign or damaged bytes', () => {
    const rand = rng(7);
    const v = new Vocabulary({ prefixLength: 5, minIndexedCount: 2 });
    const docs = Array.from({ length: 2000 }, () => Array.from({ length: 5 }, () => randomWord(rand, 'abcdefghijklmnopqrstuvwxyzé')));
    for (const d of docs) v.add(d);
    for (const d of docs.slice(0, 700)) v.remove(d);
    const bytes = v.toBytes();
    expect(new Map(Vocabulary.fromBytes(bytes).entries())).toEqual(new Map(v.entries()));
    const back = Vocabulary.fromBytes(bytes);
    expect(back.size).toBe(v.size);
    expect(back.toBytes()).toEqual(bytes);
    for (let q = 0; q < 200; q++) {
      const w = typo(rand, docs[Math.floor(rand() * docs.length)]![0]!);
      expect(back.lookup(w, 2)).toEqual(v.lookup(w, 2));
    }
    // Still fully incremental after loading.
    for (const d of docs.slice(700)) back.remove(d);
    expect(back.size).toBe(0);

    expect(() => Vocabulary.fromBytes(new Uint8Array(40))).toThrow(VocabularySnapshotError);
    expect(() => Vocabulary.fromBytes(bytes.subarray(0, bytes.length - 4))).toThrow(VocabularySnapshotError);
    const future = bytes.slice();
    future[8] = 99;
    expect(() => Vocabulary.fromBytes(future)).toThrow(/version 99/);
    // An unaligned view of valid bytes loads (snapshots are often sections of a bigger buffer).
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(Vocabulary.fromBytes(shifted.subarray(1)).size).toBe(v.size);
  });

  it('tokenises like the reference dictionary builder', () => {
    expect(Vocabulary.wordsOf('Hello, world! It\'s 2024: CRISPR-Cas9 works;really?\tYes.\nNo')).toEqual([
      'hello',
      'world',
      'its',
      'crisprcas',
      'works',
      'really',
      'yes',
      'no',
    ]);
    expect(Vocabulary.wordsOf('Ünïcode ÉTÉ 123 ... ,,')).toEqual(['ünïcode', 'été']);
    expect(Vocabulary.wordsOf('x'.repeat(80))).toEqual(['x'.repeat(50)]);
    expect(Vocabulary.wordsOf('é'.repeat(60) + '1')).toEqual(['é'.repeat(50)]);
    expect(Vocabulary.wordsOf('')).toEqual([]);
  });

  it('rejects distances it was not built for', () => {
    expect(() => new Vocabulary().lookup('abc', 3 as 2)).toThrow(RangeError);
  });
});

describe('Vocabulary.addText', () => {
  it('counts exactly the words of wordsOf, ids included, on random texts with punctuation, digits and non-ASCII', () => {
    const pieces = ['Alpha', 'beta', 'GAMMA', 'x-ray', 'covid-19', 'naïve', 'Straße', 'e.g.', 'a,b', '  ', '\t', '\n', '!', '?;', ':', 'déjà vu', '日本語', '123', "don't", 'zz\u00a0top', 'A'.repeat(60)];
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((p) => p.join(' ')), { maxLength: 20 }), (texts) => {
        const a = new Vocabulary();
        const b = new Vocabulary();
        for (const t of texts) {
          const ia = a.addText(t);
          const ib = b.addDocument(Vocabulary.wordsOf(t));
          expect(Array.from(ia, (id) => a.wordOf(id))).toEqual(Array.from(ib, (id) => b.wordOf(id)));
        }
        expect(new Map(a.entries())).toEqual(new Map(b.entries()));
      }),
    );
  });
});
