import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';
import { TermScanner } from '../../workers/shard/bm25/term-scanner.js';
import { TokenTable, hashBytes, ABSENT } from '../../workers/shard/bm25/token-table.js';

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

  it('matches the analyzer on long texts, long tokens and after a long text (buffers grown and dropped)', () => {
    const analyzer = createAnalyzer({ removeStopWords: true, maxTokenLength: 300 });
    const terms: string[] = [];
    const dict = new Map<string, number>();
    const scanner = new TermScanner(analyzer, (s) => dict.get(s) ?? (dict.set(s, terms.push(s) - 1), terms.length - 1));
    const longWord = 'x'.repeat(280); // past the 255 bytes the token table keeps: resolved every time
    const texts = [
      `${'The café of ﬁne Ｆｕｌｌ words and '.repeat(40_000)}${longWord} ${longWord}`, // ~1.3M chars: past the 1 MiB kept
      `short ${longWord} text and THE end`,
      Array.from({ length: 3000 }, (_, i) => `w${i} the`).join(' '), // more tokens than the first ids buffer
    ];
    for (const t of texts) {
      const n = scanner.scan(t);
      expect(Array.from(scanner.ids.subarray(0, n), (id) => terms[id])).toEqual(analyzer.analyze(t));
    }
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
  const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
  const hashOf = (s: string): number => {
    const b = utf8(s);
    return hashBytes(b, 0, b.length);
  };

  it('finds what it stored by its bytes, and clears itself when full', () => {
    const table = new TokenTable(1000);
    const words = Array.from({ length: 999 }, (_, i) => `w${i.toString(36)}x`);
    words.forEach((w, i) => table.set(utf8(w), 0, w.length, hashOf(w), i));
    words.forEach((w, i) => expect(table.get(utf8(`..${w}..`), 2, 2 + w.length, hashOf(w))).toBe(i));
    expect(table.get(utf8('nope'), 0, 4, hashOf('nope'))).toBe(ABSENT);
    // A hash collision (same hash and length, other bytes) is told apart by the bytes.
    expect(table.get(utf8('w0y'), 0, 3, hashOf('w0x'))).toBe(ABSENT);
    table.set(utf8('last'), 0, 4, hashOf('last'), 7);
    table.set(utf8('over'), 0, 4, hashOf('over'), 8); // the 1001st entry clears the table first
    expect(table.size).toBe(1);
    expect(table.get(utf8('last'), 0, 4, hashOf('last'))).toBe(ABSENT);
    expect(table.get(utf8('over'), 0, 4, hashOf('over'))).toBe(8);
  });

  it('keeps multi-byte tokens apart and does not cache tokens past 255 bytes', () => {
    const table = new TokenTable(100);
    const cafe = utf8('café');
    const cafe2 = utf8('cafè');
    table.set(cafe, 0, cafe.length, hashBytes(cafe, 0, cafe.length), 1);
    expect(table.get(cafe2, 0, cafe2.length, hashBytes(cafe2, 0, cafe2.length))).toBe(ABSENT);
    expect(table.get(cafe, 0, cafe.length, hashBytes(cafe, 0, cafe.length))).toBe(1);
    const long = utf8('x'.repeat(256));
    table.set(long, 0, long.length, hashBytes(long, 0, long.length), 2);
    expect(table.get(long, 0, long.length, hashBytes(long, 0, long.length))).toBe(ABSENT);
  });
});
