/** Route scopes of API keys and memberships: `METHOD /api/path` with `{param}` wildcards. */

const cache = new Map<string, RegExp>();

function compile(scope: string): RegExp {
  let re = cache.get(scope);
  if (!re) {
    const escaped = scope
      .trim()
      .replace(/\s+/g, ' ')
      .split(/(\{[^}/]*\})/)
      .map((part) => (/^\{[^}/]*\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${escaped}/?$`, 'i');
    if (cache.size > 10_000) cache.clear();
    cache.set(scope, re);
  }
  return re;
}

/**
 * Whether a request may pass the scopes. Null or an empty list means every route (the reference
 * implementation forbids everything on `[]`; the spec says empty means all).
 */
export function scopesAllow(scopes: readonly string[] | null | undefined, method: string, path: string): boolean {
  if (!scopes || scopes.length === 0) return true;
  const route = `${method.toUpperCase()} ${path}`;
  return scopes.some((scope) => compile(scope).test(route));
}

/** Whether a scope string has the `METHOD /api/path` shape. */
export function isValidScope(scope: string): boolean {
  return /^(GET|POST|PUT|PATCH|DELETE) \/api(\/[^\s]*)?$/i.test(scope.trim());
}
