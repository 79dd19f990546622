/**
 * Route scopes of API keys and memberships: `METHOD /api/path` with `{param}` wildcards.
 *
 * Matched without regexes: a scope used to compile to `^...[^/]+...$`, and wildcards side by side
 * (`{a}{b}{c}...`) made that regex backtrack exponentially on every request of the key. A `{param}`
 * matches one or more characters other than `/`, so a scope and a route are compared segment by
 * segment (between slashes), each segment as literals separated by wildcards, leftmost first.
 */
import { ForwardIndexOf } from '../core/domain/text-scan.js';

/** One path segment of a scope: literals with a wildcard between each two (`minGap[i]` characters at least). */
interface SegmentPattern {
  /** Literal text before, between and after the wildcards (lowercased); one more than the wildcards. */
  readonly literals: readonly string[];
  /** Least characters each wildcard stands for (adjacent `{a}{b}` count as one wildcard of 2). */
  readonly minGap: readonly number[];
}

const cache = new Map<string, SegmentPattern[]>();

/** Splits a scope into literals and `{param}` wildcards (a `{` without a `}` before the next `/` is literal). */
function compile(scope: string): SegmentPattern[] {
  let compiled = cache.get(scope);
  if (compiled) return compiled;
  const text = scope.trim().replace(/\s+/g, ' ').toLowerCase();
  const segments: SegmentPattern[] = [];
  let literals: string[] = [''];
  let minGap: number[] = [];
  const closeBrace = new ForwardIndexOf(text, '}');
  const slash = new ForwardIndexOf(text, '/');
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '/') {
      segments.push({ literals, minGap });
      literals = [''];
      minGap = [];
      i++;
      continue;
    }
    if (c === '{') {
      const close = closeBrace.find(i + 1);
      const nextSlash = slash.find(i + 1);
      if (close >= 0 && (nextSlash < 0 || close < nextSlash)) {
        // A wildcard right after another one widens it instead of adding an empty literal.
        if (minGap.length > 0 && literals[literals.length - 1] === '') minGap[minGap.length - 1]!++;
        else {
          minGap.push(1);
          literals.push('');
        }
        i = close + 1;
        continue;
      }
    }
    literals[literals.length - 1] += c;
    i++;
  }
  segments.push({ literals, minGap });
  compiled = segments;
  if (cache.size > 10_000) cache.clear();
  cache.set(scope, compiled);
  return compiled;
}

/** Whether one path segment matches: the first and last literals anchor, the middle ones are found leftmost. */
function segmentMatches(p: SegmentPattern, s: string): boolean {
  const { literals, minGap } = p;
  const first = literals[0]!;
  if (minGap.length === 0) return s === first;
  const last = literals[literals.length - 1]!;
  if (!s.startsWith(first) || !s.endsWith(last)) return false;
  let pos = first.length;
  for (let k = 1; k < literals.length - 1; k++) {
    const at = s.indexOf(literals[k]!, pos + minGap[k - 1]!);
    if (at < 0) return false;
    pos = at + literals[k]!.length;
  }
  return pos + minGap[minGap.length - 1]! <= s.length - last.length;
}

function matches(pattern: readonly SegmentPattern[], route: string): boolean {
  const parts = route.split('/');
  if (parts.length !== pattern.length) return false;
  for (let k = 0; k < parts.length; k++) if (!segmentMatches(pattern[k]!, parts[k]!)) return false;
  return true;
}

/**
 * Whether a request may pass the scopes. Null or an empty list means every route (the reference
 * implementation forbids everything on `[]`; the spec says empty means all).
 */
export function scopesAllow(scopes: readonly string[] | null | undefined, method: string, path: string): boolean {
  if (!scopes || scopes.length === 0) return true;
  const route = `${method} ${path}`.toLowerCase();
  // As `^scope/?$`: one trailing slash of the request is optional.
  const trimmed = route.endsWith('/') ? route.slice(0, -1) : null;
  return scopes.some((scope) => {
    const pattern = compile(scope);
    return matches(pattern, route) || (trimmed !== null && matches(pattern, trimmed));
  });
}

/** Whether a scope string has the `METHOD /api/path` shape. */
export function isValidScope(scope: string): boolean {
  return /^(GET|POST|PUT|PATCH|DELETE) \/api(\/[^\s]*)?$/i.test(scope.trim());
}
