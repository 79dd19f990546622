import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../core/domain/html-text.js';

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
});
