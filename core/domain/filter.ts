/**
 * The filter AST: must / must_not / should over field conditions, as in the core's proto. The
 * facade builds it from a ChunkFilter body, the core resolves group tracking ids, and each shard
 * evaluates it into a bitset over its internal ids.
 */

/** An optional number, wrapped so that "absent" survives protobuf. */
export interface Bound {
  readonly value: number;
}

/** Numeric bounds. */
export interface Range {
  readonly gt?: Bound | null;
  readonly gte?: Bound | null;
  readonly lt?: Bound | null;
  readonly lte?: Bound | null;
}

/** A match value (protobuf oneof `kind`). */
export interface Value {
  readonly text?: string;
  readonly number?: number;
  readonly flag?: boolean;
  readonly kind?: 'text' | 'number' | 'flag';
}

/** A geographic point. */
export interface GeoPoint {
  readonly lat: number;
  readonly lon: number;
}

/** A field condition; exactly one predicate is set. */
export interface FieldCondition {
  readonly field: string;
  readonly match?: readonly Value[];
  readonly match_any?: readonly Value[];
  readonly match_all?: readonly Value[];
  readonly range?: Range | null;
  readonly date_range?: Range | null;
  readonly boolean?: Value | null;
  readonly geo_radius?: { readonly center: GeoPoint; readonly radius: number } | null;
  readonly geo_bounding_box?: { readonly top_left: GeoPoint; readonly bottom_right: GeoPoint } | null;
  readonly geo_polygon?: {
    readonly exterior: { readonly points: readonly GeoPoint[] };
    readonly interiors?: readonly { readonly points: readonly GeoPoint[] }[];
  } | null;
  /** Only on `content`: the last word of each value also matches the words it begins (autocomplete). */
  readonly prefix_last_word?: boolean;
}

/** Chunks with one of these ids or tracking ids. */
export interface HasIdCondition {
  readonly ids?: readonly string[];
  readonly tracking_ids?: readonly string[];
}

/** One condition (protobuf oneof `kind`). */
export interface Condition {
  readonly field?: FieldCondition | null;
  readonly has_id?: HasIdCondition | null;
  readonly kind?: 'field' | 'has_id';
}

/** A filter: all of must, none of must_not, at least one of should (when given). */
export interface Filter {
  readonly must?: readonly Condition[];
  readonly must_not?: readonly Condition[];
  readonly should?: readonly Condition[];
}

/** The plain value of a {@link Value}, whichever member is set. */
export function plainValue(v: Value): string | number | boolean {
  if (v.kind === 'text' || (v.kind === undefined && typeof v.text === 'string')) return v.text ?? '';
  if (v.kind === 'number' || (v.kind === undefined && typeof v.number === 'number')) return v.number ?? 0;
  return v.flag ?? false;
}

/** The value of a bound, or undefined when absent. */
export const boundValue = (b: Bound | null | undefined): number | undefined => (b ? b.value : undefined);

/** Whether `x` lies within a range (every given bound holds). */
export function inRange(x: number, r: Range): boolean {
  const gt = boundValue(r.gt);
  const gte = boundValue(r.gte);
  const lt = boundValue(r.lt);
  const lte = boundValue(r.lte);
  return (
    (gt === undefined || x > gt) &&
    (gte === undefined || x >= gte) &&
    (lt === undefined || x < lt) &&
    (lte === undefined || x <= lte)
  );
}

/** Fields a condition may name (plus `metadata.<key>` and `group_metadata.<key>`). */
export const FILTER_FIELDS = [
  'tag_set',
  'link',
  'num_value',
  'time_stamp',
  'location',
  'tracking_id',
  'group_ids',
  'group_tracking_ids',
  'group_tag_set',
  'content',
] as const;

/** The condition kinds of a filter, for iteration. */
export const CLAUSES = ['must', 'must_not', 'should'] as const;

/** Most ids one must_not clause may exclude (scroll with sort pages by excluding seen ids). */
export const MAX_MUST_NOT_IDS = 1000;

/** `filter` with `must` conditions added to its must clause and `mustNot` ones to its must_not clause (null stays null when nothing is added). */
export function withConditions(filter: Filter | null, must: readonly Condition[], mustNot: readonly Condition[] = []): Filter | null {
  if (must.length === 0 && mustNot.length === 0) return filter;
  return {
    must: [...(filter?.must ?? []), ...must],
    must_not: [...(filter?.must_not ?? []), ...mustNot],
    should: filter?.should ?? [],
  };
}

/**
 * `filter` with a `content` condition per required phrase (must: every word of it occurs) and
 * per excluded word (must_not): how quoted phrases, `-word` and autocomplete's prefix reach the index.
 */
export function withTermConditions(filter: Filter | null, required: readonly string[], excluded: readonly string[]): Filter | null {
  if (required.length === 0 && excluded.length === 0) return filter;
  const must: Condition[] = required.map((p) => ({ field: { field: 'content', match_all: [{ text: p }] } }));
  const mustNot: Condition[] = excluded.map((w) => ({ field: { field: 'content', match_any: [{ text: w }] } }));
  return withConditions(filter, must, mustNot);
}

/**
 * The condition "the text contains every word of `text`", the last one as a prefix when
 * `prefixLastWord` (autocomplete's word still being typed).
 */
export const containsWords = (text: string, prefixLastWord: boolean): Condition => ({
  field: { field: 'content', match_all: [{ text }], ...(prefixLastWord ? { prefix_last_word: true } : {}) },
});

/** The condition "member of this group". */
export const inGroup = (groupId: string): Condition => ({ field: { field: 'group_ids', match_any: [{ text: groupId }] } });
