/**
 * The meaning of a filter, checked once in the core: known fields, predicates that fit the
 * field, the must_not id limit; and group tracking ids resolved to group ids through the store
 * (the groups' own fields: group-fields.ts).
 */
import { badRequest } from '../domain/errors.js';
import {
  CLAUSES,
  FILTER_FIELDS,
  MAX_MUST_NOT_IDS,
  type Condition,
  type FieldCondition,
  type Filter,
} from '../domain/filter.js';
import { GROUP_METADATA_PREFIX } from './group-fields.js';

type Predicate = 'match' | 'match_any' | 'match_all' | 'range' | 'date_range' | 'boolean' | 'geo';

const ALLOWED: Record<string, readonly Predicate[]> = {
  tag_set: ['match', 'match_any', 'match_all'],
  link: ['match', 'match_any', 'match_all'],
  tracking_id: ['match', 'match_any', 'match_all'],
  group_ids: ['match', 'match_any', 'match_all'],
  group_tracking_ids: ['match', 'match_any', 'match_all'],
  group_tag_set: ['match', 'match_any', 'match_all'],
  num_value: ['match', 'match_any', 'match_all', 'range'],
  time_stamp: ['range', 'date_range'],
  location: ['geo'],
  metadata: ['match', 'match_any', 'match_all', 'range', 'date_range', 'boolean'],
  group_metadata: ['match', 'match_any', 'match_all', 'range', 'date_range', 'boolean'],
  content: ['match', 'match_any', 'match_all'],
};

/** The predicates set on a field condition. */
function predicates(c: FieldCondition): Predicate[] {
  const out: Predicate[] = [];
  if ((c.match?.length ?? 0) > 0) out.push('match');
  if ((c.match_any?.length ?? 0) > 0) out.push('match_any');
  if ((c.match_all?.length ?? 0) > 0) out.push('match_all');
  if (c.range) out.push('range');
  if (c.date_range) out.push('date_range');
  if (c.boolean) out.push('boolean');
  if (c.geo_radius || c.geo_bounding_box || c.geo_polygon) out.push('geo');
  return out;
}

function checkField(c: FieldCondition, where: string): void {
  const field = c.field;
  const kind =
    field.startsWith('metadata.') && field.length > 'metadata.'.length
      ? 'metadata'
      : field.startsWith(GROUP_METADATA_PREFIX) && field.length > GROUP_METADATA_PREFIX.length
        ? 'group_metadata'
        : field;
  const allowed = ALLOWED[kind];
  if (!allowed) {
    throw badRequest(
      `${where}: unknown filter field "${field}"; use one of ${FILTER_FIELDS.join(', ')}, metadata.<key> or group_metadata.<key>`,
    );
  }
  if (c.prefix_last_word === true && kind !== 'content') {
    throw badRequest(`${where}: prefix_last_word applies only to field "content", not "${field}"`);
  }
  const preds = predicates(c);
  if (preds.length === 0) throw badRequest(`${where}: no filter condition provided for field "${field}"`);
  for (const p of preds) {
    if (!allowed.includes(p)) {
      throw badRequest(`${where}: ${p === 'geo' ? 'geo conditions' : p} cannot be used on field "${field}" (allowed: ${allowed.join(', ')})`);
    }
  }
}

/** Throws 400 naming the first meaningless condition. */
export function checkFilter(filter: Filter): void {
  for (const clause of CLAUSES) {
    (filter[clause] ?? []).forEach((cond: Condition, i: number) => {
      const where = `filters.${clause}[${i}]`;
      if (cond.has_id) {
        const n = (cond.has_id.ids?.length ?? 0) + (cond.has_id.tracking_ids?.length ?? 0);
        if (n === 0) throw badRequest(`${where}: ids or tracking_ids must not be empty`);
        if (clause === 'must_not' && n > MAX_MUST_NOT_IDS) {
          throw badRequest(`${where}: a must_not condition accepts at most ${MAX_MUST_NOT_IDS} ids, got ${n}`);
        }
      } else if (cond.field) {
        checkField(cond.field, where);
      } else {
        throw badRequest(`${where}: a condition needs a field or ids/tracking_ids`);
      }
    });
  }
}

/** Rewrites `group_tracking_ids` conditions into `group_ids` ones; unknown tracking ids match nothing. */
export async function resolveGroupTrackingIds(
  filter: Filter,
  lookup: (trackingId: string) => Promise<string | undefined>,
): Promise<Filter> {
  const mapCondition = async (cond: Condition): Promise<Condition> => {
    const f = cond.field;
    if (!f || f.field !== 'group_tracking_ids') return cond;
    const resolve = async (values: FieldCondition['match']) =>
      values === undefined
        ? undefined
        : Promise.all(
            values.map(async (v) => ({ text: (await lookup(String(v.text ?? v.number ?? ''))) ?? '\u0000no-such-group' })),
          );
    const exactAll = await resolve(f.match_all);
    const exactAny = await resolve([...(f.match_any ?? []), ...(f.match ?? [])]);
    return {
      field: {
        field: 'group_ids',
        match_any: (f.match_all?.length ?? 0) > 0 ? undefined : exactAny,
        match_all: (f.match_all?.length ?? 0) > 0 ? exactAll : undefined,
      },
    };
  };
  const out: Record<string, Condition[]> = {};
  for (const clause of CLAUSES) out[clause] = await Promise.all((filter[clause] ?? []).map(mapCondition));
  return out;
}
