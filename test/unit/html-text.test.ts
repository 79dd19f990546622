import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHTML } from 'entities';
import { htmlToText } from '../../core/domain/html-text.js';

/** The first, regex-based htmlToText (quadratic on unterminated openers): the oracle of the scanner. */
function regexHtmlToText(html: string): string {
  const DROP = /<!--[\s\S]*?-->|<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
  const BLOCK = /<\/?(p|div|br|li|ul|ol|tr|td|th|table|h[1-6]|section|article|header|footer|blockquote|pre|hr)\b[^>]*>/gi;
  const TAG = /<\/?[a-zA-Z][^>]*>/g;
  if (!html.includes('<') && !html.includes('&')) return html;
  return decodeHTML(html.replace(DROP, ' ').replace(BLOCK, '\n').replace(TAG, ''))
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .trim();
}

describe('htmlToText', () => {
  it.each([
    ['plain text', 'plain text'],
    ['  spaced  text  ', '  spaced  text  '],
    ['<p>Hello <b>world</b></p>', 'Hello world'],
    ['<p>one</p><p>two</p>', 'one\ntwo'],
    ['line<br>break<br/>again', 'line\nbreak\nagain'],
    ['<ul><li>a</li><li>b</li></ul>', 'a\nb'],
    ['<h1>Title</h1>Body', 'Title\nBody'],
    ['a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &#x263A; &nbsp;', 'a & b <c> "d" \'e\' ☺'],
    ['fish &amp chips', 'fish & chips'],
    ['<script>alert(1)</script>visible', 'visible'],
    ['<style>p { color: red }</style><p>styled</p>', 'styled'],
    ['<SCRIPT type="x">bad()</SCRIPT>ok', 'ok'],
    ['<!-- hidden -->shown', 'shown'],
    ['<div><span>nested <i>inline</i> text</span></div>', 'nested inline text'],
    ['a <a href="https://x.test/?a=1&b=2">link</a> b', 'a link b'],
    ['x < y and y > z', 'x < y and y > z'],
    ['<p>  lots   of \t space </p>', 'lots of space'],
    ['<p>a</p>\n\n\n<p>b</p>', 'a\nb'],
    ['Ünïcödé <i>html</i> ✓', 'Ünïcödé html ✓'],
    ['', ''],
  ])('%j → %j', (html, text) => {
    expect(htmlToText(html)).toBe(text);
  });

  it('never leaves a tag of the known shape behind and is idempotent on its output', () => {
    const word = fc.stringMatching(/^[a-z]{1,6}$/);
    const tag = fc.constantFrom('p', 'div', 'b', 'i', 'span', 'li', 'h2', 'br');
    const node = fc.tuple(tag, word).map(([t, w]) => `<${t} class="c">${w}</${t}>`);
    fc.assert(
      fc.property(fc.array(fc.oneof(node, word), { maxLength: 12 }), (parts) => {
        const out = htmlToText(parts.join(' '));
        expect(out).not.toMatch(/<\/?[a-z]+[^>]*>/);
        for (const p of parts) if (!p.startsWith('<')) expect(out).toContain(p);
        expect(htmlToText(out)).toBe(out);
      }),
    );
  });

  it('gives what the regex version gave on random well-formed html', () => {
    const word = fc.stringMatching(/^[a-zA-Z0-9&;#. ]{0,8}$/);
    const attr = fc.tuple(fc.constantFrom('class', 'href', 'id', 'data-x'), fc.stringMatching(/^[a-z0-9 &;=/'.-]{0,8}$/)).map(([k, v]) => ` ${k}="${v}"`);
    const name = fc.constantFrom('p', 'div', 'b', 'i', 'span', 'li', 'h2', 'H3', 'pre', 'a', 'blockquote', 'table', 'td');
    const hidden = fc.tuple(fc.constantFrom('script', 'style', 'noscript', 'template', 'SCRIPT'), word).map(([t, w]) => `<${t}>${w}</${t}>`);
    const comment = word.map((w) => `<!--${w}-->`);
    const html: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        word,
        hidden,
        comment,
        fc.constantFrom('<br>', '<br/>', '<hr />', '&nbsp;', '&lt;', '\n', '\t '),
        fc.tuple(name, fc.array(attr, { maxLength: 2 }), fc.array(tie('node'), { maxLength: 4 })).map(([t, as, kids]) => `<${t}${as.join('')}>${kids.join('')}</${t}>`),
      ),
    })).node;
    fc.assert(
      fc.property(fc.array(html, { maxLength: 6 }), (parts) => {
        const doc = parts.join('');
        expect(htmlToText(doc)).toBe(regexHtmlToText(doc));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives what the regex version gave on arbitrary markup soup (unclosed and stray openers too)', () => {
    const piece = fc.constantFrom(
      '<', '>', '</', '/', '<!--', '-->', '--', '!', 'script', 'SCRIPT', 'style', 'noscript', 'template', 'p', 'P', 'div', 'br',
      'h1', 'h7', 'a', 'pre', 'prex', '_', '-', ' ', '  ', '\n', '\t', '\r', '\v', '\u00a0', '&', '&amp;', '&amp', '&#65;', '&#', '"', "'", '=', 'x',
      '<p>', '</p>', '<script>', '</script>', '</script >', '</SCRIPT\n>', '<br/>', '<b>', '</b>', 'é',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (parts) => {
        const doc = parts.join('');
        expect(htmlToText(doc)).toBe(regexHtmlToText(doc));
      }),
      { numRuns: 5000 },
    );
  });

  it('gives the same text for long inputs, converted or remembered', () => {
    // Past 16 K units a conversion is remembered: the second call must answer what the first did,
    // for the same string and for an equal one built apart, and a long input never answers for another.
    const docs = [0, 1, 2].map((seed) => Array.from({ length: 4000 }, (_, i) => `<p>w${(i * 7 + seed) % 13} &amp; <b>x</b></p>\n`).join(''));
    for (const doc of docs) {
      const expected = regexHtmlToText(doc);
      expect(htmlToText(doc)).toBe(expected);
      expect(htmlToText(doc)).toBe(expected);
      expect(htmlToText(doc.slice(0, 10) + doc.slice(10))).toBe(expected);
    }
    expect(new Set(docs.map(htmlToText)).size).toBe(3);
  });
});
