/**
 * The HTML splitter of POST /api/chunk/split against golden inputs worked out by hand from the
 * reference's rules (split at opening heading tags; pieces of at most 5 words, or of only their
 * headings, are carried to the front of the next one; the last piece always stands; remove
 * strings; chunks without heading or body dropped), and its linear time on hostile input.
 */
import { describe, expect, it } from 'vitest';
import { headingsText, headingTagSpans, splitHtml } from '../../core/domain/split-html.js';

describe('splitHtml golden cases', () => {
  it('splits a page at each heading, heading text and HTML body per chunk', () => {
    const html = '<h1>Intro</h1><p>This is the introduction paragraph with enough words.</p><h2>Details</h2><p>Here are the details of the thing in question.</p>';
    expect(splitHtml(html)).toEqual([
      { headings: 'Intro', body: '<h1>Intro</h1><p>This is the introduction paragraph with enough words.</p>' },
      { headings: 'Details', body: '<h2>Details</h2><p>Here are the details of the thing in question.</p>' },
    ]);
  });

  it('carries a piece of only headings (or of at most 5 words) to the front of the next, joined by a space', () => {
    const html = '<h1>Guide</h1>\n<h2>Install</h2>\n<p>Run the installer and follow every prompt on screen.</p>\n<h2>Notes</h2>\n<p>Short.</p>';
    expect(splitHtml(html)).toEqual([
      { headings: 'Guide\nInstall', body: '<h1>Guide</h1> <h2>Install</h2>\n<p>Run the installer and follow every prompt on screen.</p>' },
      // The last piece stands whatever its length.
      { headings: 'Notes', body: '<h2>Notes</h2>\n<p>Short.</p>' },
    ]);
    // Five words are not enough; six are.
    const five = '<h1>A</h1><p>one two three four</p><h1>B</h1><p>the rest of the page is here</p>';
    expect(splitHtml(five)).toEqual([{ headings: 'A\nB', body: '<h1>A</h1><p>one two three four</p> <h1>B</h1><p>the rest of the page is here</p>' }]);
    const six = '<h1>A</h1><p>one two three four five</p><h1>B</h1><p>the rest of the page is here</p>';
    expect(splitHtml(six)).toEqual([
      { headings: 'A', body: '<h1>A</h1><p>one two three four five</p>' },
      { headings: 'B', body: '<h1>B</h1><p>the rest of the page is here</p>' },
    ]);
  });

  it('keeps a trailing run of headings as one chunk', () => {
    expect(splitHtml('<h1>A</h1><h2>B</h2>')).toEqual([{ headings: 'A\nB', body: '<h1>A</h1> <h2>B</h2>' }]);
  });

  it('drops text before the first heading (a chunk without a heading)', () => {
    const html = '<p>Preamble text without any heading at all here.</p><h1>Real</h1><p>Body text of the real section goes here.</p>';
    expect(splitHtml(html)).toEqual([{ headings: 'Real', body: '<h1>Real</h1><p>Body text of the real section goes here.</p>' }]);
  });

  it('removes heading_remove_strings from headings and body_remove_strings from bodies, every occurrence', () => {
    const html = '<h2 class="x"># Setup #</h2><p>Note: install the package before running anything else. Note: twice.</p>';
    expect(splitHtml(html, ['#'], ['Note:'])).toEqual([
      { headings: ' Setup ', body: '<h2 class="x"># Setup #</h2><p> install the package before running anything else.  twice.</p>' },
    ]);
    // A heading emptied by removal drops its chunk.
    expect(splitHtml('<h1>###</h1><p>words words words words words words</p>', ['###'])).toEqual([]);
  });

  it('splits on any case and attributes, not on a tag broken across lines, <h7>, <hr> or <head>', () => {
    const html = '<H3 id="a">Upper</H3><p>one two three four five six</p><h2\nid="b">Broken</h2><p>x</p><h7>no</h7><hr><head></head>';
    expect(headingTagSpans(html).map(([s, e]) => html.slice(s, e))).toEqual(['<H3 id="a">']);
    expect(splitHtml(html)).toEqual([{ headings: 'Upper\nBroken', body: html }]);
  });

  it('decodes entities and drops inner tags in heading text', () => {
    expect(headingsText('<h1>Q&amp;A <em>now</em></h1><p>x</p><h2>Two</h2>')).toBe('Q&A now\nTwo');
    // A heading opened inside another closes it; a stray closing heading tag closes the open one.
    expect(headingsText('<h1>One<h2>Two</h1>after</h3>')).toBe('One\nTwo');
  });

  it('answers nothing for empty input', () => {
    expect(splitHtml('')).toEqual([]);
    expect(splitHtml('   ')).toEqual([]);
  });

  it('runs in linear time on heading-tag openings that never close', () => {
    for (const html of ['<h1'.repeat(80_000), '<h1 '.repeat(60_000) + '>', '<h1\n'.repeat(60_000), '<a'.repeat(120_000)]) {
      const started = performance.now();
      splitHtml(html);
      expect(performance.now() - started, html.slice(0, 8)).toBeLessThan(1000);
    }
  });
});
