/**
 * What one search's `filters` (a ChunkFilter inside its stored request params) counts for
 * `popular_filters`: its uses, each a (clause, field, filter type) with the values it named. The
 * one rule of both the filter rollups' writers (./filter-rollup-batch.ts) and the report's raw
 * reads (./reports/search-popular-filters.ts), so that a search counts the same wherever it is
 * read from.
 *
 * Values are bounded per search, so that one search cannot make its insert write thousands of
 * rollup rows (a search event's free request params may hold 64 KB of ids): a value counts only
 * when its key is at most {@link MAX_VALUE_LENGTH} characters (long text, geo polygons), and only
 * the first {@link MAX_VALUES_PER_SEARCH} (use, value) pairs of a search count, in the order they
 * appear. Uses (the fields and their counts) are never bounded.
 */

/** Longest value key (in UTF-16 units) counted among a filter's common values. */
export const MAX_VALUE_LENGTH = 256;

/** Most (use, value) pairs one search counts among common values. */
export const MAX_VALUES_PER_SEARCH = 100;

/** The clauses of a ChunkFilter. */
const CLAUSES = ['must', 'should', 'must_not'] as const;

/** The predicates of a field condition, each one filter type. */
const FIELD_PREDICATES = ['match', 'match_any', 'match_all', 'range', 'date_range', 'boolean', 'geo_radius', 'geo_bounding_box', 'geo_polygon'] as const;

/** An id condition's lists: each a "field" of filter type {@link HAS_ID}. */
const ID_LISTS = ['ids', 'tracking_ids'] as const;

/** The filter type of an ids/tracking_ids condition. */
const HAS_ID = 'has_id';

/** One (clause, field, filter type) a search used, with the values it counts (distinct, in order). */
export interface FilterUse {
  readonly clause: string;
  readonly field: string;
  readonly filterType: string;
  readonly values: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with object keys sorted: PostgreSQL's jsonb reorders keys, SQLite keeps them as stored. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A value as a `common_values` key: strings as they are, anything else as JSON with sorted keys (the same on both engines). */
const valueKey = (v: unknown): string => (typeof v === 'string' ? v : canonicalJson(v));

/** The values a predicate used: each element of a match list, else the predicate itself. Empty when unset. */
function predicateValues(predicate: string, v: unknown): unknown[] {
  if (v === null || v === undefined) return [];
  if (predicate.startsWith('match') || ID_LISTS.includes(predicate as (typeof ID_LISTS)[number])) return Array.isArray(v) ? v : [];
  if (predicate === 'boolean') return typeof v === 'boolean' ? [v] : [];
  return isObject(v) ? [v] : [];
}

/**
 * JSON text of filters (or of request params holding them) parsed as every reader sees it:
 * PostgreSQL's raw path turns the escape `\u0000` into `\ufffd` before its jsonb cast (jsonb
 * refuses it, ./reports/report-sql.ts), so every reader does, and no counted text holds a NUL
 * (which PostgreSQL's text columns refuse). Undefined for text that is not JSON.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.replaceAll('\\u0000', '\\ufffd'));
  } catch {
    return undefined;
  }
}

/** The uses of a search whose stored request params are `paramsText`. */
export function usesOfParams(paramsText: string): FilterUse[] {
  const params = parseJson(paramsText);
  return isObject(params) ? usesOf(params.filters) : [];
}

/** The uses of the JSON text of a search's `filters` member (as the raw path reads it). */
export const usesOfFiltersText = (filtersText: string): FilterUse[] => usesOf(parseJson(filtersText));

/** The uses of one search's parsed `filters`, values bounded as the module comment says. */
function usesOf(filters: unknown): FilterUse[] {
  const uses = new Map<string, { clause: string; field: string; filterType: string; values: Set<string> }>();
  if (!isObject(filters)) return [];
  let counted = 0;
  const use = (clause: string, field: string, filterType: string, values: unknown[]) => {
    if (values.length === 0) return;
    const key = JSON.stringify([clause, field, filterType]);
    let u = uses.get(key);
    if (!u) uses.set(key, (u = { clause, field, filterType, values: new Set() }));
    for (const v of values) {
      if (counted >= MAX_VALUES_PER_SEARCH) return;
      const k = valueKey(v);
      if (k.length > MAX_VALUE_LENGTH || u.values.has(k)) continue;
      u.values.add(k);
      counted++;
    }
  };
  for (const clause of CLAUSES) {
    const conditions = filters[clause];
    if (!Array.isArray(conditions)) continue;
    for (const c of conditions) {
      if (!isObject(c)) continue;
      if (typeof c.field === 'string') {
        for (const p of FIELD_PREDICATES) use(clause, c.field, p, predicateValues(p, c[p]));
      } else {
        for (const list of ID_LISTS) use(clause, list, HAS_ID, predicateValues(list, c[list]));
      }
    }
  }
  return [...uses.values()].map((u) => ({ clause: u.clause, field: u.field, filterType: u.filterType, values: [...u.values] }));
}
