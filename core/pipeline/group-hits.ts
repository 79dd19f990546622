/**
 * Ranked chunks grouped by the groups they belong to, as the reference's group-by search
 * (Qdrant `group_by: group_ids`): a chunk in several groups counts in each, chunks in no group
 * are skipped, groups rank by their best chunk, and each keeps its best `groupSize` chunks.
 *
 * The chunk ranking is fetched as a prefix of growing length until the requested groups are
 * settled: the first groups met walking the ranking are the best groups, so once enough of them
 * are met, and each group on the page holds `groupSize` chunks or all of its members, a longer
 * prefix cannot change the answer. The prefix doubles from a small multiple of what the page
 * needs and stops at `cap` (the dataset's MAX_LIMIT, at most {@link MAX_GROUPING_PREFIX}), beyond
 * which the answer is what the prefix holds. A filter that hides some members of a group keeps
 * that group from counting as complete, so such a page may fetch up to the cap.
 */
import type { GroupRecord } from '../domain/group.js';
import type { Store } from '../../store/repository.js';
import type { Hit } from './hit-chunks.js';

/** One group of the answer, its chunks best first. */
export interface GroupHits {
  readonly group: GroupRecord;
  readonly hits: Hit[];
}

/** What page of groups is wanted. */
export interface GroupWindow {
  /** Groups to skip (earlier pages). */
  readonly skip: number;
  /** Groups to return. */
  readonly take: number;
  /** Chunks shown per group; 0 shows groups without their chunks (as the reference does). */
  readonly groupSize: number;
  /** Also count every group the ranking reaches (up to `cap` chunks). */
  readonly countGroups: boolean;
  /** Longest prefix of the chunk ranking fetched. */
  readonly cap: number;
}

/** The page of groups and, when counted, how many groups the ranking reaches. */
export interface GroupedResult {
  readonly groups: GroupHits[];
  readonly totalGroups: number;
}

/** The best `limit` chunks of the ranking, best first; fewer means the ranking ended. */
export type FetchRanking = (limit: number) => Promise<Hit[]>;

/** Smallest prefix fetched first. */
const MIN_PREFIX = 20;

/** Longest prefix any grouping fetches, whatever the dataset's MAX_LIMIT (each chunk of it is read from the store). */
export const MAX_GROUPING_PREFIX = 10_000;

/** Groups of the ranking in rank order, each with its first `perGroup` chunks. */
function groupRanking(ranking: readonly Hit[], memberships: ReadonlyMap<string, GroupRecord[]>, perGroup: number): GroupHits[] {
  const byId = new Map<string, GroupHits>();
  for (const r of ranking) {
    for (const g of memberships.get(r.id) ?? []) {
      let entry = byId.get(g.id);
      if (!entry) byId.set(g.id, (entry = { group: g, hits: [] }));
      if (entry.hits.length < perGroup) entry.hits.push(r);
    }
  }
  return [...byId.values()];
}

/** Groups a chunk ranking into one page of groups (see the module comment for when it stops fetching). */
export async function groupedPage(store: Store, datasetId: string, fetch: FetchRanking, w: GroupWindow): Promise<GroupedResult> {
  const wanted = w.skip + w.take;
  if (w.take === 0 && !w.countGroups) return { groups: [], totalGroups: 0 };
  // Group order needs one chunk per group even when none is shown.
  const perGroup = Math.max(1, w.groupSize);
  const memberships = new Map<string, GroupRecord[]>();
  const memberCounts = new Map<string, number>();
  const learn = async (ranking: readonly Hit[]) => {
    const unknown = ranking.map((r) => r.id).filter((id) => !memberships.has(id));
    if (unknown.length === 0) return;
    for (const [id, groups] of await store.groups.groupsOfChunks(datasetId, unknown)) memberships.set(id, groups);
  };
  const members = async (g: GroupRecord): Promise<number> => {
    let n = memberCounts.get(g.id);
    if (n === undefined) memberCounts.set(g.id, (n = (await store.groups.chunks(g.id, 1, 1)).total));
    return n;
  };
  /** Whether the page's groups are final: enough groups, each full or holding all its members. */
  const settled = async (groups: readonly GroupHits[]): Promise<boolean> => {
    if (groups.length < wanted) return false;
    for (const g of groups.slice(w.skip, wanted)) {
      if (g.hits.length < perGroup && g.hits.length < (await members(g.group))) return false;
    }
    return true;
  };

  let limit = Math.min(w.cap, Math.max(MIN_PREFIX, wanted * perGroup * 2));
  let ranking: Hit[] = [];
  let groups: GroupHits[] = [];
  for (;;) {
    ranking = await fetch(limit);
    await learn(ranking);
    groups = groupRanking(ranking, memberships, perGroup);
    const ended = ranking.length < limit;
    if (ended || limit >= w.cap || (await settled(groups))) break;
    limit = Math.min(w.cap, limit * 2);
  }
  let totalGroups = groups.length;
  if (w.countGroups && ranking.length >= limit && limit < w.cap) {
    // Counting pages needs every group the ranking reaches, not only the page's.
    const all = await fetch(w.cap);
    await learn(all);
    totalGroups = groupRanking(all, memberships, 1).length;
  }
  const page = groups.slice(w.skip, wanted).map((g) => ({ group: g.group, hits: g.hits.slice(0, w.groupSize) }));
  return { groups: page, totalGroups };
}
