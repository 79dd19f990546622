/**
 * Route scopes of API keys and memberships: `METHOD /api/path` where a whole path segment may be
 * a `{param}` placeholder. Matched segment by segment, never through a regex: scopes are
 * caller-chosen text, and a regex built from them (`{x}{x}{x}...` as adjacent `[^/]+`) once took
 * seconds per request and stalled every tenant.
 */

/** Most scopes one key or membership may carry. */
export const MAX_SCOPES = 128;
/** Longest scope string accepted, in characters (real routes are under 80). */
export const MAX_SCOPE_LENGTH = 256;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** A scope split into its method and path segments; `null` marks a `{param}` segment. */
interface ParsedScope {
  readonly method: string;
  readonly segments: readonly (string | null)[];
}

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);

function isParamChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

/** Whether a segment is exactly `{name}` with name of letters, digits, `_` or `-` (the reference's placeholder). */
function isPlaceholder(segment: string): boolean {
  if (segment.length < 3 || segment.charCodeAt(0) !== 123 || segment.charCodeAt(segment.length - 1) !== 125) return false;
  for (let i = 1; i < segment.length - 1; i++) if (!isParamChar(segment.charCodeAt(i))) return false;
  return true;
}

/** Splits a path into segments after `/api`, dropping one trailing slash; one pass. */
function pathSegments(path: string): string[] {
  const segments = path.split('/');
  // A leading '/' gives an empty first element; a trailing '/' an empty last one.
  segments.shift();
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  return segments;
}

/** Parses a scope, or returns why it is not one. Linear in the scope's length. */
export function parseScope(raw: string): ParsedScope | string {
  if (raw.length > MAX_SCOPE_LENGTH) return `a scope must be at most ${MAX_SCOPE_LENGTH} characters long`;
  let start = 0;
  let end = raw.length;
  while (start < end && isSpace(raw.charCodeAt(start))) start++;
  while (end > start && isSpace(raw.charCodeAt(end - 1))) end--;
  let split = start;
  while (split < end && !isSpace(raw.charCodeAt(split))) split++;
  const method = raw.slice(start, split).toUpperCase();
  let pathStart = split;
  while (pathStart < end && isSpace(raw.charCodeAt(pathStart))) pathStart++;
  const path = raw.slice(pathStart, end);
  if (!METHODS.has(method) || pathStart === split) {
    return 'each scope must look like "METHOD /api/path" (GET, POST, PUT, PATCH or DELETE), e.g. "POST /api/chunk/search"';
  }
  for (let i = 0; i < path.length; i++) {
    if (isSpace(path.charCodeAt(i))) return 'the path of a scope must not contain spaces';
  }
  if (path !== '/api' && !path.startsWith('/api/')) return 'the path of a scope must start with /api';
  const segments: (string | null)[] = [];
  for (const segment of pathSegments(path)) {
    if (isPlaceholder(segment)) {
      segments.push(null);
    } else if (segment.includes('{') || segment.includes('}')) {
      return `a {param} placeholder must be a whole path segment of letters, digits, _ or - (e.g. /api/chunk/{chunk_id}); got "${segment}"`;
    } else {
      segments.push(segment.toLowerCase());
    }
  }
  return { method, segments };
}

/** Whether a scope string is well-formed (see {@link parseScope}). */
export function isValidScope(scope: string): boolean {
  return typeof parseScope(scope) !== 'string';
}

const cache = new Map<string, ParsedScope | null>();

function parsedScope(scope: string): ParsedScope | null {
  let parsed = cache.get(scope);
  if (parsed === undefined) {
    const result = parseScope(scope);
    // A malformed scope stored before validation was strict matches nothing.
    parsed = typeof result === 'string' ? null : result;
    if (cache.size > 10_000) cache.clear();
    cache.set(scope, parsed);
  }
  return parsed;
}

function matches(scope: ParsedScope, method: string, segments: readonly string[]): boolean {
  if (scope.method !== method || scope.segments.length !== segments.length) return false;
  for (let i = 0; i < segments.length; i++) {
    const want = scope.segments[i];
    const got = segments[i]!;
    if (want === null ? got.length === 0 : want !== got) return false;
  }
  return true;
}

/**
 * Whether a request may pass the scopes. Null or an empty list means every route (the reference
 * implementation forbids everything on `[]`; the spec says empty means all). Paths compare
 * case-insensitively and with an optional trailing slash; a placeholder stands for exactly one
 * non-empty segment.
 */
export function scopesAllow(scopes: readonly string[] | null | undefined, method: string, path: string): boolean {
  if (!scopes || scopes.length === 0) return true;
  const m = method.toUpperCase();
  const segments = pathSegments(path.toLowerCase());
  for (const scope of scopes) {
    const parsed = parsedScope(scope);
    if (parsed && matches(parsed, m, segments)) return true;
  }
  return false;
}
