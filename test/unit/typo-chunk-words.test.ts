/**
 * A chunk's typo words kept as exceptions to its BM25 terms' usual words (typo/chunk-words.ts):
 * after any sequence of upserts, updates and deletes, the vocabulary's counts are those rebuilt
 * from the surviving chunks' texts, and each chunk's rebuilt word ids are exactly its words.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Shard } from '../../workers/shard/shard.js';
import { textDoc } from '../../workers/shard/text-doc.js';
import { Vocabulary } from '../../workers/shard/typo/vocabulary.js';

/**
 * Words whose typo form and BM25 terms disagree in every way: stems shared by several words,
 * words the index splits or drops (digits, apostrophes, a 45-letter word), NFKC and case
 * variants, non-ASCII letters, stop words.
 */
const POOL = [
  'run', 'runs', 'running', 'runner', 'connect', 'connected', 'connection', 'the', 'of', 'a',
  'café', 'naïve', 'straße', 'x2', 'covid19', '3d', "don't", 'ab-cd', 'Hello', 'HELLO', 'ﬁne', 'fine',
  'z'.repeat(45), 'river', 'stone', 'ember', '42',
];

/** Word -> number of texts holding it, as a vocabulary built from `texts` alone counts. */
function oracleCounts(texts: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const t of texts) for (const w of new Set(Vocabulary.wordsOf(t))) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
}

const sorted = (entries: Iterable<[string, number]>): [string, number][] => [...entries].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));

type Op = { kind: 'upsert'; chunk: number; words: number[] } | { kind: 'delete'; chunk: number } | { kind: 'typo' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('upsert' as const), chunk: fc.nat(11), words: fc.array(fc.nat(POOL.length - 1), { maxLength: 9 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), chunk: fc.nat(11) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('typo' as const) }) },
);

/** Runs `ops` on a shard (typo on from the start or turned on and filled by a 'typo' op); returns it and the live texts. */
function run(ops: readonly Op[], typoFirst: boolean): { shard: Shard; live: Map<string, string> } {
  const shard = new Shard({ k1: 0.9, b: 0.4 });
  if (typoFirst) shard.enableTypo();
  const live = new Map<string, string>();
  let seq = 0;
  for (const op of ops) {
    if (op.kind === 'upsert') {
      const text = op.words.map((w) => POOL[w]).join(' ');
      shard.apply([textDoc(`c${op.chunk}`, text)], [], ++seq);
      live.set(`c${op.chunk}`, text);
    } else if (op.kind === 'delete') {
      shard.apply([], [`c${op.chunk}`], ++seq);
      live.delete(`c${op.chunk}`);
    } else if (!shard.enableTypo()) {
      shard.fillTypo([...live].map(([chunkId, text]) => ({ chunkId, text })));
    }
  }
  return { shard, live };
}

/** Every live chunk's rebuilt word ids name exactly its distinct words. */
function expectWordsPerChunk(shard: Shard, live: Map<string, string>): void {
  const v = shard.vocabulary!;
  for (const [chunkId, text] of live) {
    const id = shard.index.internalId(chunkId)!;
    const got = Array.from(shard.wordIdsOf(id), (w) => v.wordOf(w)).sort();
    expect(got).toEqual([...new Set(Vocabulary.wordsOf(text))].sort());
  }
}

describe('typo word ids kept relative to BM25 terms', () => {
  it('keeps vocabulary counts equal to counts rebuilt from the surviving chunks, whatever the add/update/delete sequence', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), fc.boolean(), (ops, typoFirst) => {
        const { shard, live } = run(ops, typoFirst);
        if (!shard.vocabulary) return;
        expect(sorted(shard.vocabulary.entries())).toEqual(oracleCounts([...live.values()]));
        expectWordsPerChunk(shard, live);
      }),
      { numRuns: 400 },
    );
  });

  it('stays exact when usual words are chosen again for terms only a new chunk holds, and their ids are reused', () => {
    const shard = new Shard({ k1: 0.9, b: 0.4 });
    shard.enableTypo();
    // 'running' becomes the usual word of term "run"; 'runs' is an exception in c1.
    shard.apply([textDoc('c0', 'running stone'), textDoc('c1', 'runs stone')], [], 1);
    // c0 leaves: 'running' is uncounted (its vocabulary id freed), c1 still depends on "run" -> 'running'.
    shard.apply([], ['c0'], 2);
    // A new word may take the freed id; c2 holds "run" as well, so its usual word must not change.
    shard.apply([textDoc('c2', 'ember run')], [], 3);
    shard.apply([], ['c1'], 4);
    // Only c3 holds "run" now: its usual word may be chosen again.
    shard.apply([textDoc('c2', 'ember')], [], 5);
    shard.apply([textDoc('c3', 'runner run runs')], [], 6);
    const live = new Map([['c2', 'ember'], ['c3', 'runner run runs']]);
    expect(sorted(shard.vocabulary!.entries())).toEqual(oracleCounts([...live.values()]));
    expectWordsPerChunk(shard, live);
  });

  it('stores no exception for chunks whose words are their terms surface forms', () => {
    const shard = new Shard({ k1: 0.9, b: 0.4 });
    shard.enableTypo();
    const words = ['river', 'stone', 'maple', 'cloud', 'ember', 'harbor', 'lantern', 'meadow'];
    shard.apply(Array.from({ length: 200 }, (_, i) => textDoc(`c${i}`, `${words[i % 8]} ${words[(i * 3 + 1) % 8]} ${words[(i * 5 + 2) % 8]}`)), [], 1);
    expect(shard.chunkWords.memoryParts().data).toBe(0);
  });
});
