/**
 * Text scanners over untrusted input run in linear time. Each input below made a regex (or a
 * rescan per opener) quadratic or worse: 200 KB of `<a` took 44 s in htmlToText and stalled every
 * tenant; 60,000 slashes in a reranker URL cost 3.2 s per search. Where a regex was replaced, the
 * replacement is also checked against it (the old regex as oracle) on random inputs.
 * Linear code does each in tens of milliseconds; the bound is generous for a shared 2-core box.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lastWordBeingTyped } from '../../core/domain/completions.js';
import { htmlToText } from '../../core/domain/html-text.js';
import { trimTrailingSlashes } from '../../core/domain/trim-slashes.js';
import { splitSentences } from '../../core/embed/segment.js';
import { buildTextMap } from '../../facade/highlight/text-map.js';
import { scopesAllow } from '../../facade/scopes.js';

const SIZE = 200_000;
/** Generous: the linear scanners take ~50 ms per 200 KB here; the quadratic ones took seconds to minutes. */
const BOUND_MS = 1000;

const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

/** Milliseconds `f` takes. */
function timed(f: () => unknown): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

const PATHOLOGICAL: Record<string, string> = {
  'unterminated tags <a': fill('<a'),
  'unterminated closing tags </a': fill('</a'),
  'unclosed <script': fill('<script'),
  'unclosed <script> elements': fill('<script>'),
  'unclosed <style x> elements': fill('<style x>'),
  'unclosed <!--': fill('<!--'),
  'block openers without >': fill('<p'),
  'close tag prefixes without >': '<script>' + fill('</script '),
  'unterminated quoted attributes': fill('<a x="'),
  'unterminated single-quoted attributes': fill("<a b='"),
  '& runs': fill('&'),
  '&amp without ;': fill('&amp'),
  'partial named entities': fill('&notin'),
  'one long numeric entity': '&#' + fill('1'),
  'whitespace run then a tag': ' '.repeat(SIZE) + '<b',
  // Passes 2 and 3 run their regexes up to the last `>`: openers on either side of it.
  'openers then one > at the end': fill('<a') + '>',
  'block openers then one > at the end': fill('<p ') + '>',
  'one > first, then openers': '>' + fill('<a'),
  'one > in the middle of openers': fill('<p').slice(0, SIZE / 2) + '>' + fill('<a').slice(0, SIZE / 2),
  'tags between whitespace runs': fill('<b> \t\n '),
};

describe('html scanners are linear', () => {
  for (const [name, html] of Object.entries(PATHOLOGICAL)) {
    it(`htmlToText: ${name}`, () => {
      expect(timed(() => htmlToText(html))).toBeLessThan(BOUND_MS);
    });
    it(`buildTextMap: ${name}`, () => {
      expect(timed(() => buildTextMap(html))).toBeLessThan(BOUND_MS);
    });
  }

  it('keeps unterminated openers as text and still reads what follows', () => {
    expect(htmlToText('x <a'.repeat(3))).toBe('x <ax <ax <a');
    expect(buildTextMap('x <a'.repeat(3)).text).toBe('x <ax <ax <a');
    expect(htmlToText('<script>'.repeat(3) + 'x<p>y')).toBe('x\ny');
    expect(buildTextMap('<a x="<b>y').text).toBe('<a x="y');
  });
});

describe('model-server URL trimming is linear', () => {
  it('trims 60,000 slashes (not at the end) fast and trims the end as before', () => {
    const url = 'http://reranker.test' + '/'.repeat(60_000) + 'x';
    expect(timed(() => trimTrailingSlashes(url))).toBeLessThan(BOUND_MS);
    expect(timed(() => trimTrailingSlashes(url + '/'.repeat(60_000)))).toBeLessThan(BOUND_MS);
    fc.assert(
      fc.property(fc.stringMatching(/^[a:/]{0,12}$/), (u) => {
        expect(trimTrailingSlashes(u)).toBe(u.replace(/\/+$/, ''));
      }),
    );
  });
});

describe('autocomplete\'s word being typed is found in linear time', () => {
  const oldLastWord = (text: string) => /([\p{L}\p{N}\p{M}]+)$/u.exec(text.normalize('NFKC').toLowerCase())?.[1] ?? null;

  it('a 200 KB word not at the end of the query', () => {
    expect(timed(() => lastWordBeingTyped(fill('a') + '!'))).toBeLessThan(BOUND_MS);
  });

  it('finds what the regexes found', () => {
    const text = fc.array(fc.constantFrom('a', 'É', '1', ' ', '*', '!', '\u0301', '\u00a0', '\t', '😀', '\ud800', 'ß'), { maxLength: 12 }).map((p) => p.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(lastWordBeingTyped(t)).toBe(oldLastWord(t));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('sentence splitting for embeddings is linear', () => {
  const OLD_END = /(?<=[.!?]["'\u201d\u2019)\]]*)\s+(?=["'\u201c\u2018(\[]?[\p{Lu}\p{N}])/u;

  it('a 200 KB run of quotes', () => {
    expect(timed(() => splitSentences(fill('"') + ' A'))).toBeLessThan(BOUND_MS);
    expect(timed(() => splitSentences(fill(')') + ' a'))).toBeLessThan(BOUND_MS);
  });

  it('splits where the lookbehind regex split', () => {
    const piece = fc.constantFrom('a', 'B', '7', 'É', ' ', '  ', '.', '!', '?', '"', "'", ')', ']', '(', '[', '\u201c', '\u201d', 'e.g.', '\n', 'word');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (parts) => {
        const line = parts.join('').replace(/\s+/g, ' ').trim();
        // splitSentences glues short fragments; compare on lines of long words so none is glued.
        const long = line.replace(/\S+/g, (w) => `${w} x y`);
        const expected = long.split(OLD_END).filter((x) => x !== '');
        const flat = splitSentences(long);
        if (expected.every((x) => x.split(' ').length >= 3)) expect(flat).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('scope matching is linear', () => {
  const oldAllow = (scope: string, route: string): boolean => {
    const escaped = scope
      .trim()
      .replace(/\s+/g, ' ')
      .split(/(\{[^}/]*\})/)
      .map((part) => (/^\{[^}/]*\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return new RegExp(`^${escaped}/?$`, 'i').test(route);
  };

  it('wildcards side by side against a long segment', () => {
    // Not whole segments: such a scope is refused at key creation and a stored one matches nothing.
    const scope = 'GET /api/' + '{p}'.repeat(30) + 'x';
    const path = '/api/' + 'a'.repeat(5000);
    expect(timed(() => scopesAllow([scope], 'GET', path))).toBeLessThan(BOUND_MS);
    expect(scopesAllow([scope], 'GET', path)).toBe(false);
    expect(scopesAllow([scope], 'GET', '/api/' + 'a'.repeat(30) + 'x')).toBe(false);
  });

  it('a scope of 200 KB of unclosed braces', () => {
    expect(timed(() => scopesAllow(['GET /api/' + fill('{')], 'GET', '/api/x'))).toBeLessThan(BOUND_MS);
  });

  it('allows exactly what the regex allowed, for scopes whose placeholders are whole segments', () => {
    const segment = fc.constantFrom('a', 'b', 'ab', 'A', '.', '*', '{id}', '{x}');
    const routePart = fc.constantFrom('/', 'a', 'b', 'ab', '.', '{', '}', '*', 'A', ' ');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), fc.array(routePart, { maxLength: 8 }), fc.constantFrom('GET', 'post'), (segments, rp, method) => {
        const scope = `GET /api${segments.map((x) => `/${x}`).join('')}`;
        const path = `/api/${rp.join('')}`;
        expect(scopesAllow([scope], method, path)).toBe(oldAllow(scope, `${method.toUpperCase()} ${path}`));
      }),
      { numRuns: 5000 },
    );
  });
});
