/**
 * Conditions on the fields of a chunk's groups (`group_tag_set`, `group_metadata.<key>`), resolved
 * as the reference resolves them: through the store, before the shards see the filter. The
 * dataset's groups that satisfy a condition are found, and the condition becomes `group_ids`
 * matching any of them (none found: a group id no chunk has), which the shards evaluate as any
 * other. The groups are read once per search, and only when the filter names such a field.
 */
import { CLAUSES, type Condition, type FieldCondition, type Filter } from '../domain/filter.js';
import type { GroupRecord } from '../domain/group.js';
import { matchesValues, metadataMatcher } from '../domain/value-match.js';

/** The prefix of a condition on a key of the groups' metadata. */
export const GROUP_METADATA_PREFIX = 'group_metadata.';

/** A group id no group has: the rewritten condition of a value no group matches. */
const NO_GROUP = '\u0000no-such-group';

/** Whether a condition names a field of the chunk's groups. */
const onGroupField = (c: Condition): boolean =>
  c.field != null && (c.field.field === 'group_tag_set' || (c.field.field.startsWith(GROUP_METADATA_PREFIX) && c.field.field.length > GROUP_METADATA_PREFIX.length));

/** Whether group `g` satisfies `cond`, a condition on `group_tag_set` or `group_metadata.<key>`. */
export function groupMatches(g: GroupRecord, cond: FieldCondition): boolean {
  if (cond.field === 'group_tag_set') return matchesValues(g.tagSet, cond);
  return metadataMatcher(cond.field.slice(GROUP_METADATA_PREFIX.length).split('.'), cond)(g.metadata);
}

/** Rewrites the group-field conditions of `filter` into `group_ids` ones; `groups` is called at most once. */
export async function resolveGroupFields(filter: Filter, groups: () => Promise<readonly GroupRecord[]>): Promise<Filter> {
  if (!CLAUSES.some((clause) => (filter[clause] ?? []).some(onGroupField))) return filter;
  const all = await groups();
  const out: Record<string, Condition[]> = {};
  for (const clause of CLAUSES) {
    out[clause] = (filter[clause] ?? []).map((cond) => {
      if (!onGroupField(cond)) return cond;
      const ids = all.filter((g) => groupMatches(g, cond.field!)).map((g) => g.id);
      return { field: { field: 'group_ids', match_any: (ids.length > 0 ? ids : [NO_GROUP]).map((text) => ({ text })) } };
    });
  }
  return out;
}
