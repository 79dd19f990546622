import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';
import { TermScanner } from '../../workers/shard/bm25/term-scanner.js';
import { TokenTable, hashOf, ABSENT } from '../../workers/shard/bm25/token-table.js';

// The indexing fast path (ASCII split + token table) must give exactly the analyzer's terms: same
// tokens, same order, same stop-word and long-token drops, whatever the mix of scripts and case.
const PIECES = [
  'The', 'running', 'RUNS', 'runner', 'a', 'and', 'Not', 'x1', '42', 'COVID-19', 'phosphorylation',
  'interleukinreceptorsignallingpathwayswhichareverylong', 'café', 'ﬁne', 'Ｆｕｌｌ', '東京', 'naïve', 'über',
  'İstanbul', 'ǅemal', 'x²', 'hello_world', "it's", '😀', 'ΣΟΦΙΑ', 'e\u0301t\u00e9', '𝐀𝐁𝐂', '𠀀𠀁', '🙂x', 'a\ud800b', '①②', 'Ⅻ',
];
const SEPARATORS = [' ', '  ', ', ', '. ', '\n', '\t', '-', '/', '(', ')', ''];

const text = fc
  .array(fc.tuple(fc.nat(PIECES.length - 1), fc.nat(SEPARATORS.length - 1)), { maxLength: 30 })
  .map((parts) => parts.map(([p, s]) => PIECES[p]! + SEPARATORS[s]!).join(''));

describe('TermScanner', () => {
  it('maps every text to the term ids of analyzer.analyze(text)', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.integer({ min: 3, max: 40 }), (texts, stop, maxLen) => {
        const analyzer = createAnalyzer({ removeStopWords: stop, maxTokenLength: maxLen });
        const dict = new Map<string, number>();
        const terms: string[] = [];
        const intern = (s: string): number => {
          let t = dict.get(s);
          if (t === undefined) dict.set(s, (t = terms.push(s) - 1));
          return t;
        };
        const scanner = new TermScanner(analyzer, intern);
        // Twice: the second pass reads every token from the table.
        for (const pass of [0, 1]) {
          for (const t of texts) {
            const n = scanner.scan(t);
            expect(Array.from(scanner.ids.subarray(0, n), (id) => terms[id]), `pass ${pass}: ${JSON.stringify(t)}`).toEqual(analyzer.analyze(t));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('indexes like upsertTokens(analyze(text))', () => {
    const a = new Bm25Index();
    const b = new Bm25Index();
    const docs = ['Running RUNNERS ran', 'café CAFÉ cafe', 'x1 X1 x2', '東京 tokyo Tokyo', 'the THE The'];
    docs.forEach((d, i) => {
      a.upsert(`c${i}`, d);
      b.upsertTokens(`c${i}`, b.analyzer.analyze(d));
    });
    expect(a.exportState()).toEqual(b.exportState());
  });
});

describe('TokenTable', () => {
  it('finds what it stored, reads A-Z as a-z, and clears itself when full', () => {
    const table = new TokenTable(1000);
    const words = Array.from({ length: 999 }, (_, i) => `w${i.toString(36)}x`);
    words.forEach((w, i) => table.set(w, 0, w.length, hashOf(w), i));
    words.forEach((w, i) => expect(table.get(`..${w.toUpperCase()}..`, 2, 2 + w.length, hashOf(w))).toBe(i));
    expect(table.get('nope', 0, 4, hashOf('nope'))).toBe(ABSENT);
    table.set('last', 0, 4, hashOf('last'), 7);
    table.set('over', 0, 4, hashOf('over'), 8); // the 1001st entry clears the table first
    expect(table.size).toBe(1);
    expect(table.get('last', 0, 4, hashOf('last'))).toBe(ABSENT);
    expect(table.get('over', 0, 4, hashOf('over'))).toBe(8);
  });
});
