/**
 * Splitting document sections into chunks: sizes within [target / 2, target × 1.25] (only a
 * section's last chunk, or a single over-long word, outside), the preferred boundary (paragraph,
 * line, sentence, word), overlap between consecutive chunks, every word covered in order, no
 * chunk across sections; and a chunk's HTML, whose text gives back its words.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../core/domain/html-text.js';
import { documentChunkHtml } from '../../core/files/document-chunk-html.js';
import type { DocumentSection } from '../../core/files/document-text.js';
import { splitDocument, type DocumentChunk } from '../../core/files/split-document.js';

const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

const isSpace = (c: string | undefined): boolean => c === undefined || /\s/.test(c);

/**
 * Where each chunk lies in the section's text, found under the rules it must keep: the first
 * starts at the first word, each next one starts after the previous one's start and at the latest
 * right after the spaces that follow its end, ends past it, and the last ends at the last word;
 * every chunk begins and ends at word edges. Such a placement existing means every word is
 * covered, in order.
 */
function placements(text: string, chunks: readonly DocumentChunk[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const chunk of chunks) {
    const previous = out.at(-1);
    let latest = previous ? previous.end : 0;
    while (isSpace(text[latest]) && latest < text.length) latest++;
    let start = -1;
    for (let p = text.indexOf(chunk.text, previous ? previous.start + 1 : 0); p !== -1 && p <= latest; p = text.indexOf(chunk.text, p + 1)) {
      const end = p + chunk.text.length;
      if (previous && end <= previous.end) continue;
      if (!isSpace(text[p - 1]) || !isSpace(text[end])) continue;
      if (!previous && text.slice(0, p).trim() !== '') continue;
      start = p;
      break;
    }
    expect(start, `chunk ${JSON.stringify(chunk.text.slice(0, 40))} follows the previous one`).toBeGreaterThanOrEqual(0);
    out.push({ start, end: start + chunk.text.length });
  }
  expect(text.slice(out.at(-1)?.end ?? 0).trim()).toBe('');
  return out;
}

/** Checks one section's chunks: bounds, every word covered in order, overlap at most overlapChars. */
function checkSection(section: DocumentSection, chunks: readonly DocumentChunk[], target: number, overlap: number): void {
  const max = Math.floor(target * 1.25);
  const places = placements(section.text, chunks);
  chunks.forEach((chunk, i) => {
    expect(chunk.headings).toEqual(section.headings);
    if (chunk.text.length > max) expect(words(chunk.text)).toHaveLength(1);
    if (i > 0) expect(Math.max(0, places[i - 1]!.end - places[i]!.start)).toBeLessThanOrEqual(overlap);
  });
}

/** Sentences of words of 1..9 letters, in lines and paragraphs, deterministic for a seed. */
function prose(seed: number, paragraphs: number): string {
  let state = seed;
  const random = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const lines: string[] = [];
    for (let l = 0, lineCount = 1 + random(3); l < lineCount; l++) {
      const sentences: string[] = [];
      for (let s = 0, sentenceCount = 1 + random(4); s < sentenceCount; s++) {
        const sentence = Array.from({ length: 3 + random(12) }, () => 'abcdefghi'.slice(0, 1 + random(9)));
        sentences.push(`${sentence.join(' ')}.`);
      }
      lines.push(sentences.join(' '));
    }
    out.push(lines.join('\n'));
  }
  return out.join('\n\n');
}

describe('splitDocument', () => {
  it('keeps chunks within bounds, covers every word in order, and overlaps consecutive chunks', () => {
    const text = prose(7, 40);
    const target = 300;
    const overlap = 60;
    const chunks = splitDocument([{ headings: ['Doc'], text }], { targetChars: target, overlapChars: overlap });
    expect(chunks.length).toBeGreaterThan(10);
    checkSection({ headings: ['Doc'], text }, chunks, target, overlap);
    chunks.slice(0, -1).forEach((chunk) => {
      expect(chunk.text.length).toBeGreaterThanOrEqual(target / 2);
      expect(chunk.text.length).toBeLessThanOrEqual(target * 1.25);
    });
    // Each chunk after the first starts with text the previous one ends with, about overlapChars long.
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!.text;
      const current = chunks[i]!.text;
      let shared = 0;
      for (let n = Math.min(previous.length, current.length); n > 0; n--) {
        if (previous.endsWith(current.slice(0, n))) {
          shared = n;
          break;
        }
      }
      // Words are at most 9 letters: the overlap starts at the first word within 60 characters of the end.
      expect(shared).toBeGreaterThan(overlap - 11);
      expect(shared).toBeLessThanOrEqual(overlap);
    }
  });

  it('holds its invariants for any text, target and overlap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(' ', '  ', '\n', '\n\n', '. ', '! ', '.\n', '\t'), fc.stringMatching(/^[a-z]{1,30}$/), fc.constant('x'.repeat(200))), { maxLength: 200 }),
        fc.integer({ min: 20, max: 400 }),
        fc.integer({ min: 0, max: 600 }),
        (parts, target, overlap) => {
          const section = { headings: ['H'], text: parts.join('') };
          const chunks = splitDocument([section], { targetChars: target, overlapChars: overlap });
          if (words(section.text).length === 0) expect(chunks).toEqual([]);
          checkSection(section, chunks, target, Math.min(overlap, Math.floor(target / 2)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ends chunks at paragraph ends before line, sentence and word ends', () => {
    // Paragraphs of 70 characters, target 100: a paragraph end falls in every window.
    const paragraph = (n: number): string => `Paragraph ${n} has a first line.\nIt goes on, with a sentence. And one more.`.padEnd(70, '.');
    const text = [1, 2, 3, 4, 5].map(paragraph).join('\n\n');
    const chunks = splitDocument([{ headings: [], text }], { targetChars: 100, overlapChars: 0 });
    expect(chunks.map((c) => c.text)).toEqual([1, 2, 3, 4, 5].map(paragraph));
  });

  it('ends chunks at sentence ends within a paragraph, and at line ends before sentence ends', () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} is about forty chars.`);
    const chunks = splitDocument([{ headings: [], text: sentences.join(' ') }], { targetChars: 100, overlapChars: 0 });
    for (const chunk of chunks) expect(chunk.text).toMatch(/^Sentence .*\.$/);
    expect(chunks.map((c) => c.text).join(' ')).toBe(sentences.join(' '));

    const lines = `${sentences.slice(0, 2).join(' ')} Cut\nhere ${sentences.slice(2, 4).join(' ')}`;
    const [first] = splitDocument([{ headings: [], text: lines }], { targetChars: 100, overlapChars: 0 });
    expect(first?.text.endsWith('Cut')).toBe(true);
  });

  it('never lets a chunk span two sections', () => {
    const sections: DocumentSection[] = [
      { headings: ['A'], text: prose(1, 6) },
      { headings: ['A', 'B'], text: 'Short section.' },
      { headings: ['C'], text: prose(2, 6) },
    ];
    const chunks = splitDocument(sections, { targetChars: 120, overlapChars: 30 });
    for (const section of sections) {
      checkSection(
        section,
        chunks.filter((c) => c.headings === section.headings),
        120,
        30,
      );
    }
    expect(chunks.filter((c) => c.headings === sections[1]!.headings).map((c) => c.text)).toEqual(['Short section.']);
    expect(chunks.map((c) => c.headings)).toEqual([...chunks.map((c) => c.headings)].sort((x, y) => sections.findIndex((s) => s.headings === x) - sections.findIndex((s) => s.headings === y)));
  });

  it('keeps a single very long word whole, as a chunk of its own, and the text around it within bounds', () => {
    const long = `${'x'.repeat(1000)}`;
    const before = prose(3, 2);
    const text = `${before} ${long} tail words after the long one.`;
    const chunks = splitDocument([{ headings: [], text }], { targetChars: 100, overlapChars: 20 });
    expect(chunks.filter((c) => c.text.includes('x'.repeat(1000))).map((c) => c.text)).toEqual([long]);
    for (const chunk of chunks) if (chunk.text !== long) expect(chunk.text.length).toBeLessThanOrEqual(125);
    checkSection({ headings: [], text }, chunks, 100, 20);
    expect(splitDocument([{ headings: [], text: long }], { targetChars: 100, overlapChars: 20 })).toEqual([{ headings: [], text: long }]);
  });

  it('cuts text without spaces (Chinese) at its words, within bounds', () => {
    const text = '我们的搜索服务可以读取文档并把它们切成小块。'.repeat(30);
    const chunks = splitDocument([{ headings: [], text }], { targetChars: 50, overlapChars: 0 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(62);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    // Sentence ends are preferred there too.
    expect(chunks.slice(0, -1).every((c) => c.text.endsWith('。'))).toBe(true);
  });

  it('gives no chunks for an empty document or blank sections', () => {
    expect(splitDocument([], { targetChars: 100, overlapChars: 10 })).toEqual([]);
    expect(splitDocument([{ headings: ['A'], text: '' }, { headings: [], text: ' \n\n\t ' }], { targetChars: 100, overlapChars: 10 })).toEqual([]);
  });

  it('takes an overlap above half the target as half the target, and still moves on', () => {
    const text = prose(5, 10);
    const chunks = splitDocument([{ headings: [], text }], { targetChars: 80, overlapChars: 10_000 });
    checkSection({ headings: [], text }, chunks, 80, 40);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(100);
  });
});

describe('documentChunkHtml', () => {
  it('gives back the heading path and the chunk words through htmlToText, markup escaped', () => {
    const chunk: DocumentChunk = {
      headings: ['Guide', 'Install <fast> & "safe"'],
      text: 'First paragraph with <script>alert(1)</script> & &amp; in it.\nA second line.\n\nSecond paragraph.',
    };
    const html = documentChunkHtml(chunk);
    expect(html).not.toContain('<script>');
    expect(html).toBe(
      '<p><strong>Guide &gt; Install &lt;fast&gt; &amp; &quot;safe&quot;</strong></p>' +
        '<p>First paragraph with &lt;script&gt;alert(1)&lt;/script&gt; &amp; &amp;amp; in it.<br>A second line.</p>' +
        '<p>Second paragraph.</p>',
    );
    expect(words(htmlToText(html))).toEqual([...words('Guide > Install <fast> & "safe"'), ...words(chunk.text)]);
  });

  it('gives back the words of any chunk, and has no heading line without headings', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.string({ maxLength: 200 }), (headings, text) => {
        const html = documentChunkHtml({ headings, text });
        const heading = headings.filter((h) => h.trim() !== '').join(' > ');
        expect(words(htmlToText(html))).toEqual([...words(heading), ...words(text)]);
        if (heading === '') expect(html.startsWith('<p><strong>')).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
