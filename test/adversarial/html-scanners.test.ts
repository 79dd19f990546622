/**
 * Text scanners over untrusted input run in linear time. Each input below made a regex (or a
 * rescan per opener) quadratic: 200 KB of `<a` took 44 s in htmlToText and stalled every tenant.
 * Linear code does each in tens of milliseconds; the bound is generous for a shared 2-core box.
 */
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../core/domain/html-text.js';
import { buildTextMap } from '../../facade/highlight/text-map.js';

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
