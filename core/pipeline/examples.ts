/**
 * The examples of a recommendation, named by chunk ids, chunk tracking ids, group ids and group
 * tracking ids, resolved to chunks of the dataset (a group stands for its members). Every name
 * must exist: a 404 lists those that do not.
 */
import type { ChunkRecord } from '../domain/chunk.js';
import { badRequest, notFound } from '../domain/errors.js';
import type { GroupRecord } from '../domain/group.js';
import type { Store } from '../../store/repository.js';
import type { Examples } from './recommend.js';

/** Most chunks the example groups of one recommendation may hold together. */
export const MAX_GROUP_EXAMPLE_CHUNKS = 10_000;

/** Page size used to read the members of an example group. */
const MEMBERS_PAGE = 1000;

/** One side (positive or negative) of a recommendation's examples, by name. */
export interface ExampleNames {
  readonly chunkIds: readonly string[];
  readonly trackingIds: readonly string[];
  readonly groupIds: readonly string[];
  readonly groupTrackingIds: readonly string[];
}

/** `items` as a short list for an error message. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, 10).map((s) => JSON.stringify(s)).join(', ');
  return items.length > 10 ? `${shown} and ${items.length - 10} more` : shown;
}

/** The chunks named by ids and tracking ids (each once); 404 naming those that do not exist. */
async function chunksOf(store: Store, datasetId: string, names: ExampleNames, kind: 'positive' | 'negative'): Promise<ChunkRecord[]> {
  const byId = await store.chunks.getMany(datasetId, names.chunkIds);
  const byTracking = await store.chunks.getManyByTrackingIds(datasetId, names.trackingIds);
  const foundIds = new Set(byId.map((c) => c.id));
  const foundTracking = new Set(byTracking.map((c) => c.trackingId));
  const missingIds = names.chunkIds.filter((id) => !foundIds.has(id));
  const missingTracking = names.trackingIds.filter((t) => !foundTracking.has(t));
  if (missingIds.length > 0) throw notFound(`${kind}_chunk_ids ${listed(missingIds)} do not exist in this dataset`);
  if (missingTracking.length > 0) throw notFound(`${kind}_tracking_ids ${listed(missingTracking)} do not exist in this dataset`);
  return [...byId, ...byTracking];
}

/** The groups named by ids and tracking ids; 404 naming those that do not exist. */
async function groupsOf(store: Store, datasetId: string, names: ExampleNames, kind: 'positive' | 'negative'): Promise<GroupRecord[]> {
  const byId = await Promise.all(names.groupIds.map(async (id) => [id, await store.groups.get(datasetId, id)] as const));
  const byTracking = await Promise.all(names.groupTrackingIds.map(async (t) => [t, await store.groups.getByTrackingId(datasetId, t)] as const));
  const missingIds = byId.filter(([, g]) => !g).map(([id]) => id);
  const missingTracking = byTracking.filter(([, g]) => !g).map(([t]) => t);
  if (missingIds.length > 0) throw notFound(`${kind}_group_ids ${listed(missingIds)} do not exist in this dataset`);
  if (missingTracking.length > 0) throw notFound(`${kind}_group_tracking_ids ${listed(missingTracking)} do not exist in this dataset`);
  return [...new Map([...byId, ...byTracking].map(([, g]) => [g!.id, g!])).values()];
}

/** Every chunk of the groups into `out`; 400 when it and `already` other examples exceed MAX_GROUP_EXAMPLE_CHUNKS. */
async function addMembers(store: Store, groups: readonly GroupRecord[], out: Map<string, ChunkRecord>, already: number): Promise<void> {
  for (const g of groups) {
    for (let page = 1; ; page++) {
      const { chunks, total } = await store.groups.chunks(g.id, page, MEMBERS_PAGE);
      for (const c of chunks) out.set(c.id, c);
      if (out.size + already > MAX_GROUP_EXAMPLE_CHUNKS) {
        throw badRequest(`the example groups hold more than ${MAX_GROUP_EXAMPLE_CHUNKS} chunks; recommend from smaller groups`);
      }
      if (chunks.length === 0 || page * MEMBERS_PAGE >= total) break;
    }
  }
}

/** One side's chunks: the named chunks and the members of the named groups, each once. */
async function side(store: Store, datasetId: string, names: ExampleNames, kind: 'positive' | 'negative', already: number): Promise<ChunkRecord[]> {
  const out = new Map((await chunksOf(store, datasetId, names, kind)).map((c) => [c.id, c]));
  const groups = await groupsOf(store, datasetId, names, kind);
  if (groups.length > 0) await addMembers(store, groups, out, already);
  return [...out.values()];
}

/** Resolves both sides; 400 when example groups were named and hold no chunk to recommend from. */
export async function resolveExamples(store: Store, datasetId: string, positive: ExampleNames, negative: ExampleNames): Promise<Examples> {
  const positives = await side(store, datasetId, positive, 'positive', 0);
  const negatives = await side(store, datasetId, negative, 'negative', positives.length);
  if (positives.length === 0) {
    const byGroup = positive.groupIds.length + positive.groupTrackingIds.length > 0;
    throw badRequest(byGroup ? 'the positive groups have no chunks to recommend from' : 'a recommendation needs at least one positive example');
  }
  return { positives, negatives };
}
