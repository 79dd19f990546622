import { describe, expect, it } from 'vitest';
import { createAnalyzer, DEFAULT_ANALYZER_OPTIONS, ENGLISH_STOP_WORDS } from '../../workers/shard/bm25/analyzer.js';

describe('analyzer', () => {
  const plain = createAnalyzer({ stem: false, removeStopWords: false });
  const std = createAnalyzer();

  it('applies NFKC before splitting and lowercasing', () => {
    // Full-width letters and digits, the "ﬁ" ligature and a superscript two fold to ASCII.
    expect(plain.analyze('ＡＢＣ１２３ ﬁne x²')).toEqual(['abc123', 'fine', 'x2']);
  });

  it('lowercases across scripts', () => {
    expect(plain.analyze('HELLO Ωμέγα ÉCOLE')).toEqual(['hello', 'ωμέγα', 'école']);
  });

  it('splits on anything that is not a letter or digit, keeping unicode letters and digits', () => {
    expect(plain.analyze("IL-6, p53; e.g. naïve_T-cells (2024) don't")).toEqual(
      ['il', '6', 'p53', 'e', 'g', 'naïve', 't', 'cells', '2024', 'don', 't'],
    );
    expect(plain.analyze('東京 مرحبا ١٢٣')).toEqual(['東京', 'مرحبا', '١٢٣']);
  });

  it('keeps combining marks inside words (Devanagari)', () => {
    expect(plain.analyze('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
  });

  it('drops tokens longer than 40 code points, counting astral characters once', () => {
    const forty = 'a'.repeat(40);
    expect(plain.analyze(`${forty} ${forty}b ok`)).toEqual([forty, 'ok']);
    const astral = '𝐀'.repeat(30); // 30 code points, 60 UTF-16 units; NFKC maps to ASCII anyway
    expect(plain.analyze(astral)).toEqual(['a'.repeat(30)]);
    const han = '𠀀'.repeat(30); // astral CJK, unchanged by NFKC: 30 code points are kept
    expect(plain.analyze(han)).toEqual([han]);
    expect(createAnalyzer({ maxTokenLength: 3 }).analyze('abcd abc')).toEqual(['abc']);
  });

  it('stems English with Porter, leaves digits and other scripts alone', () => {
    expect(std.analyze('Running runners ran easily; relational connections')).toEqual(
      ['run', 'runner', 'ran', 'easili', 'relat', 'connect'],
    );
    expect(std.analyze('cells 1990s ωμέγας')).toEqual(['cell', '1990s', 'ωμέγας']);
  });

  it('removes the 33 Lucene stop words only when asked, and before stemming', () => {
    expect(ENGLISH_STOP_WORDS.size).toBe(33);
    expect(DEFAULT_ANALYZER_OPTIONS.removeStopWords).toBe(false);
    expect(createAnalyzer({ removeStopWords: true }).analyze('The effect of this is not such')).toEqual(['effect']);
    expect(std.analyze('The effect of this')).toEqual(['the', 'effect', 'of', 'thi']);
  });

  it('gives the same tokens on repeated calls (stem cache), including after evictions', () => {
    const tiny = createAnalyzer({ stemCacheSize: 2 });
    const text = 'connections generalizations hopefulness connections';
    const first = tiny.analyze(text);
    expect(tiny.analyze(text)).toEqual(first);
    expect(first).toEqual(['connect', 'gener', 'hope', 'connect']);
  });
});
