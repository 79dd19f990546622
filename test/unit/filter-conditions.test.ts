/** withConditions: the one way conditions are added to a search's filter (query syntax, typo words, recommendations). */
import { describe, expect, it } from 'vitest';
import { withConditions, type Condition, type Filter } from '../../core/domain/filter.js';

const a: Condition = { has_id: { ids: ['a'] } };
const b: Condition = { field: { field: 'tag_set', match_any: [{ text: 'x' }] } };
const c: Condition = { field: { field: 'content', match_all: [{ text: 'y' }] } };

describe('withConditions', () => {
  it('leaves the filter as it is (null included) when nothing is added', () => {
    expect(withConditions(null, [])).toBeNull();
    const f: Filter = { must: [a], must_not: [], should: [b] };
    expect(withConditions(f, [], [])).toBe(f);
  });

  it('appends to must and must_not, keeps should, and never changes the given filter', () => {
    const f: Filter = { must: [a], must_not: [b], should: [c] };
    const copy = structuredClone(f);
    expect(withConditions(f, [c], [a])).toEqual({ must: [a, c], must_not: [b, a], should: [c] });
    expect(f).toEqual(copy);
    expect(withConditions(null, [], [b])).toEqual({ must: [], must_not: [b], should: [] });
    expect(withConditions(null, [a])).toEqual({ must: [a], must_not: [], should: [] });
  });
});
