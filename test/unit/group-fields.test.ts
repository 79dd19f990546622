/**
 * Conditions on the groups' own fields (core/router/group-fields.ts): which groups each predicate
 * selects, the rewrite into `group_ids`, and that a filter without such a field reads no group.
 */
import { describe, expect, it } from 'vitest';
import type { Condition, FieldCondition, Filter } from '../../core/domain/filter.js';
import type { GroupRecord } from '../../core/domain/group.js';
import { checkFilter } from '../../core/router/filter-check.js';
import { groupMatches, resolveGroupFields } from '../../core/router/group-fields.js';

/** A group with the given tags and metadata. */
const group = (id: string, tagSet: string[], metadata: unknown): GroupRecord => ({
  id,
  datasetId: 'ds',
  name: id,
  description: '',
  trackingId: null,
  metadata,
  tagSet,
  fileId: null,
  createdAt: 0,
  updatedAt: 0,
});

const GROUPS = [
  group('g1', ['water', 'salt'], { continent: 'europe', size: 3, open: true, since: '2024-01-05T00:00:00Z', nested: { tier: 'gold' } }),
  group('g2', ['water'], { continent: ['asia', 'europe'], size: 10, open: false }),
  group('g3', [], { size: '7' }),
];

const texts = (...v: string[]) => v.map((text) => ({ text }));
/** Ids of the groups `cond` selects. */
const selected = (cond: FieldCondition) => GROUPS.filter((g) => groupMatches(g, cond)).map((g) => g.id);

describe('group fields', () => {
  it('selects groups by tag set and by metadata with every predicate', () => {
    expect(selected({ field: 'group_tag_set', match_any: texts('salt', 'none') })).toEqual(['g1']);
    expect(selected({ field: 'group_tag_set', match_all: texts('water', 'salt') })).toEqual(['g1']);
    expect(selected({ field: 'group_tag_set', match_any: texts('water') })).toEqual(['g1', 'g2']);
    expect(selected({ field: 'group_metadata.continent', match_any: texts('europe') })).toEqual(['g1', 'g2']);
    expect(selected({ field: 'group_metadata.continent', match_all: texts('asia', 'europe') })).toEqual(['g2']);
    expect(selected({ field: 'group_metadata.continent', match: texts('sia') })).toEqual(['g2']);
    expect(selected({ field: 'group_metadata.size', range: { gte: { value: 3 }, lt: { value: 10 } } })).toEqual(['g1']);
    expect(selected({ field: 'group_metadata.size', match_any: [{ number: 7 }] })).toEqual(['g3']);
    expect(selected({ field: 'group_metadata.open', boolean: { flag: false, kind: 'flag' } })).toEqual(['g2']);
    expect(selected({ field: 'group_metadata.since', date_range: { gt: { value: Date.parse('2024-01-01T00:00:00Z') } } })).toEqual(['g1']);
    expect(selected({ field: 'group_metadata.nested.tier', match_any: texts('gold') })).toEqual(['g1']);
  });

  it('rewrites each clause into group_ids, an impossible id when no group matches, and keeps the rest', async () => {
    const other: Condition = { field: { field: 'tag_set', match_any: texts('x') } };
    const filter: Filter = {
      must: [{ field: { field: 'group_tag_set', match_any: texts('water') } }, other],
      must_not: [{ field: { field: 'group_metadata.size', range: { gt: { value: 5 } } } }],
      should: [{ field: { field: 'group_metadata.continent', match_any: texts('mars') } }],
    };
    let reads = 0;
    const out = await resolveGroupFields(filter, async () => (reads++, GROUPS));
    expect(reads).toBe(1);
    const ids = (c: Condition | undefined) => c?.field?.match_any?.map((v) => v.text);
    expect(out.must![0]!.field!.field).toBe('group_ids');
    expect(ids(out.must![0])).toEqual(['g1', 'g2']);
    expect(out.must![1]).toBe(other);
    expect(ids(out.must_not![0])).toEqual(['g2']);
    expect(ids(out.should![0])).toHaveLength(1);
    expect(GROUPS.map((g) => g.id)).not.toContain(ids(out.should![0])![0]);
  });

  it('reads no group for a filter without a group field', async () => {
    const filter: Filter = { must: [{ field: { field: 'tag_set', match_any: texts('x') } }] };
    let reads = 0;
    expect(await resolveGroupFields(filter, async () => (reads++, GROUPS))).toBe(filter);
    expect(reads).toBe(0);
  });

  it('accepts the group fields with their predicates and refuses geo on them', () => {
    expect(() => checkFilter({ must: [{ field: { field: 'group_tag_set', match_all: texts('a') } }] })).not.toThrow();
    expect(() => checkFilter({ must: [{ field: { field: 'group_metadata.a', range: { lt: { value: 1 } } } }] })).not.toThrow();
    expect(() => checkFilter({ must: [{ field: { field: 'group_tag_set', range: { lt: { value: 1 } } } }] })).toThrow(/range cannot be used on field "group_tag_set"/);
    expect(() => checkFilter({ must: [{ field: { field: 'group_metadata.', match_any: texts('a') } }] })).toThrow(/unknown filter field "group_metadata\."/);
  });
});
