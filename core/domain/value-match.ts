/**
 * How a filter's match values compare with stored values: one meaning for the shards, which
 * evaluate a chunk's fields, and for the core, which evaluates a group's (`group_tag_set`,
 * `group_metadata.<key>`) before a search.
 */
import { inRange, plainValue, type FieldCondition, type Value } from './filter.js';
import { parseTimestamp } from './time.js';

/** Values of a (possibly nested, possibly array) metadata path. */
export function metadataValues(meta: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [meta];
  for (const key of path) {
    const next: unknown[] = [];
    for (const c of current) {
      if (c !== null && typeof c === 'object' && !Array.isArray(c) && key in c) {
        next.push((c as Record<string, unknown>)[key]);
      }
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** Whether a scalar equals a match value (numbers compare numerically, text exactly). */
export function equals(actual: unknown, v: Value): boolean {
  const want = plainValue(v);
  if (typeof want === 'number') return typeof actual === 'number' ? actual === want : typeof actual === 'string' && actual.trim() !== '' && Number(actual) === want;
  if (typeof want === 'boolean') return actual === want;
  return typeof actual === 'string' ? actual === want : typeof actual === 'number' || typeof actual === 'boolean' ? String(actual) === want : false;
}

/** Whether a scalar contains a match value as a substring (text) or equals it (numbers). */
export function contains(actual: unknown, v: Value): boolean {
  const want = plainValue(v);
  if (typeof want !== 'string') return equals(actual, v);
  if (typeof actual === 'string') return actual.includes(want);
  return typeof actual === 'number' || typeof actual === 'boolean' ? String(actual).includes(want) : false;
}

/** Evaluates a match/match_any/match_all predicate over a multi-valued field. */
export function matchesValues(values: readonly unknown[], cond: FieldCondition): boolean {
  if (cond.match_any && cond.match_any.length > 0) return cond.match_any.some((v) => values.some((a) => equals(a, v)));
  if (cond.match_all && cond.match_all.length > 0) return cond.match_all.every((v) => values.some((a) => equals(a, v)));
  if (cond.match && cond.match.length > 0) return cond.match.some((v) => values.some((a) => contains(a, v)));
  return false;
}

/**
 * A test of whether a metadata value satisfies a `metadata.<key>`-style condition at `path`: a
 * range of numbers, a range of dates (timestamp text), a boolean, or match values. The predicate
 * is chosen once, not per value tested: the shards run the test over every chunk of a scan.
 */
export function metadataMatcher(path: readonly string[], cond: FieldCondition): (meta: unknown) => boolean {
  if (cond.range) {
    const r = cond.range;
    return (meta) => metadataValues(meta, path).some((v) => typeof v === 'number' && inRange(v, r));
  }
  if (cond.date_range) {
    const r = cond.date_range;
    return (meta) =>
      metadataValues(meta, path).some((v) => {
        const t = typeof v === 'string' ? parseTimestamp(v) : undefined;
        return t !== undefined && inRange(t, r);
      });
  }
  if (cond.boolean) {
    const want = cond.boolean;
    return (meta) => metadataValues(meta, path).some((v) => equals(v, want));
  }
  return (meta) => matchesValues(metadataValues(meta, path), cond);
}
