/**
 * The published `trieve-ts-sdk` pointed at quarry: every call it makes for keys, datasets, chunks
 * and groups must work unchanged and return the right data (asserted field by field).
 */
import { TrieveSDK } from 'trieve-ts-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, unique } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { countRows } from '../helpers/store-snapshot.js';

let stack: Stack;
let orgId: string;
/** SDK with the operator key, scoped to the organization. */
let operator: TrieveSDK;
/** SDK with an owner key minted through the SDK, scoped to the organization. */
let owner: TrieveSDK;
let ownerKey: string;
/** SDK scoped to the dataset the tests write into. */
let sdk: TrieveSDK;
let datasetId: string;
const datasetTracking = unique('sdk-ds');

beforeAll(async () => {
  stack = await startStack();
  orgId = await createOrganization(stack);
  operator = new TrieveSDK({ apiKey: stack.adminKey, baseUrl: stack.baseUrl, organizationId: orgId });
  const key = await operator.createOrganizationApiKey({ name: 'sdk owner', role: 2 });
  expect(key.api_key).toMatch(/^tr-[A-Za-z0-9]{32}$/);
  ownerKey = key.api_key;
  owner = new TrieveSDK({ apiKey: ownerKey, baseUrl: stack.baseUrl, organizationId: orgId });
  const dataset = await owner.createDataset({ dataset_name: 'SDK dataset', tracking_id: datasetTracking });
  expect(dataset).toMatchObject({ name: 'SDK dataset', tracking_id: datasetTracking, organization_id: orgId });
  datasetId = dataset.id;
  sdk = new TrieveSDK({ apiKey: ownerKey, baseUrl: stack.baseUrl, organizationId: orgId, datasetId });
});
afterAll(async () => {
  await stack?.stop();
});

describe('keys and organization', () => {
  it('createOrganizationApiKey mints a key with the asked role that works', async () => {
    const read = await owner.createOrganizationApiKey({ name: 'sdk read', role: 0, dataset_ids: [datasetId] });
    const reader = new TrieveSDK({ apiKey: read.api_key, baseUrl: stack.baseUrl, datasetId });
    await expect(reader.createChunk({ chunk_html: 'not allowed' })).rejects.toThrow(/Forbidden/);
    expect(await reader.getDatasetUsageById(datasetId)).toMatchObject({ dataset_id: datasetId });
  });

  it('getOrganizationById returns the organization', async () => {
    const org = await owner.getOrganizationById(orgId);
    expect(org).toMatchObject({ id: orgId, deleted: false, registerable: true });
  });

  it('updateUserRole changes the role of a user of the organization', async () => {
    const created = await fetch(`${stack.baseUrl}/api/auth/create_api_only_user`, {
      method: 'POST',
      headers: { authorization: stack.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ user_email: `${unique('sdk')}@example.com`, user_name: 'SDK user' }),
    }).then((r) => r.json() as Promise<{ api_key: string; organization_id: string; user: { id: string } }>);
    const userSdk = new TrieveSDK({ apiKey: created.api_key, baseUrl: stack.baseUrl, organizationId: created.organization_id });
    await userSdk.updateUserRole({ user_id: created.user.id, role: 1 });
    const role = await countRows(stack, 'memberships', 'user_id = ? AND organization_id = ? AND role = 1', created.user.id, created.organization_id);
    expect(role).toBe(1);
    // Now an admin: raising back to owner is refused.
    await expect(userSdk.updateUserRole({ user_id: created.user.id, role: 2 })).rejects.toThrow(/Forbidden/);
  });
});

describe('chunks', () => {
  it('createChunk (single and bulk), get by id / tracking id / many, update, delete', async () => {
    const single = await sdk.createChunk({
      chunk_html: '<p>Hello SDK</p>',
      tracking_id: 'sdk-1',
      tag_set: ['a', 'b'],
      metadata: { k: 'v', n: [1, 2] },
      link: 'https://example.com/1',
      time_stamp: '2024-01-31T10:00:00Z',
      num_value: 3,
      location: { lat: 1, lon: 2 },
    });
    const one = single.chunk_metadata as any;
    expect(one).toMatchObject({ tracking_id: 'sdk-1', chunk_html: '<p>Hello SDK</p>', tag_set: ['a', 'b'], metadata: { k: 'v', n: [1, 2] } });

    const bulk = await sdk.createChunk([
      { chunk_html: 'bulk 1', tracking_id: 'sdk-2' },
      { chunk_html: 'bulk 2', tracking_id: 'sdk-3' },
    ]);
    const many = bulk.chunk_metadata as any[];
    expect(many.map((c) => c.tracking_id)).toEqual(['sdk-2', 'sdk-3']);

    const byId = (await sdk.getChunkById({ chunkId: one.id })) as any;
    expect(byId).toMatchObject({
      id: one.id,
      chunk_html: '<p>Hello SDK</p>',
      tag_set: ['a', 'b'],
      link: 'https://example.com/1',
      time_stamp: '2024-01-31 10:00:00.000',
      num_value: 3,
      location: { lat: 1, lon: 2 },
      dataset_id: datasetId,
    });
    expect(((await sdk.getChunkByTrackingId({ trackingId: 'sdk-2' })) as any).id).toBe(many[0].id);
    const byIds = (await sdk.getChunksByIds({ ids: [many[1].id, one.id] })) as any[];
    expect(byIds.map((c) => c.id)).toEqual([many[1].id, one.id]);
    const byTids = (await sdk.getChunksByTrackingIds({ tracking_ids: ['sdk-3', 'sdk-1'] })) as any[];
    expect(byTids.map((c) => c.tracking_id)).toEqual(['sdk-3', 'sdk-1']);

    await sdk.updateChunk({ chunk_id: one.id, chunk_html: '<p>Updated</p>', metadata: { k: 'w' } });
    const updated = (await sdk.getChunkById({ chunkId: one.id })) as any;
    expect(updated).toMatchObject({ chunk_html: '<p>Updated</p>', metadata: { k: 'w' }, tag_set: ['a', 'b'], link: 'https://example.com/1', num_value: 3 });

    await sdk.updateChunkByTrackingId({ tracking_id: 'sdk-2', chunk_html: 'bulk 1 updated' });
    expect(((await sdk.getChunkByTrackingId({ trackingId: 'sdk-2' })) as any).chunk_html).toBe('bulk 1 updated');

    await sdk.deleteChunkById({ chunkId: one.id });
    await expect(sdk.getChunkById({ chunkId: one.id })).rejects.toThrow(/Not Found/);
    await sdk.deleteChunkByTrackingId({ trackingId: 'sdk-3' });
    await expect(sdk.getChunkByTrackingId({ trackingId: 'sdk-3' })).rejects.toThrow(/Not Found/);
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', datasetId)).toBe(1);
  });

  it('a duplicate tracking id through the SDK is an error and stores nothing', async () => {
    const before = await countRows(stack, 'chunks', 'dataset_id = ?', datasetId);
    await expect(sdk.createChunk([{ chunk_html: 'x', tracking_id: 'sdk-dup' }, { chunk_html: 'y', tracking_id: 'sdk-2' }])).rejects.toThrow(/tracking_id \\"sdk-2/);
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', datasetId)).toBe(before);
  });
});

describe('groups', () => {
  it('create, get, update, membership, pages, groups for chunks and dataset, delete', async () => {
    const chunks = (await sdk.createChunk(Array.from({ length: 12 }, (_, i) => ({ chunk_html: `g ${i}`, tracking_id: `sdk-g-${i}` })))).chunk_metadata as any[];
    const group = (await sdk.createChunkGroup({ name: 'SDK group', description: 'd', tracking_id: 'sdk-group', tag_set: ['t'], metadata: { m: 1 } })) as any;
    expect(group).toMatchObject({ name: 'SDK group', description: 'd', tracking_id: 'sdk-group', tag_set: ['t'], metadata: { m: 1 } });
    const second = (await sdk.createChunkGroup([{ name: 'second', tracking_id: 'sdk-group-2' }, { name: 'third' }])) as any[];
    expect(second.map((g) => g.name)).toEqual(['second', 'third']);

    expect(await sdk.getGroup({ groupId: group.id })).toMatchObject({ id: group.id, name: 'SDK group', file_id: null });
    expect(await sdk.getGroupByTrackingId({ trackingId: 'sdk-group' })).toMatchObject({ id: group.id });

    await sdk.updateGroup({ group_id: group.id, name: 'Renamed group' });
    expect(await sdk.getGroup({ groupId: group.id })).toMatchObject({ name: 'Renamed group', description: 'd', tracking_id: 'sdk-group', metadata: { m: 1 } });

    for (const c of chunks.slice(0, 11)) await sdk.addChunkToGroup({ group_id: group.id, chunk_id: c.id });
    await sdk.addChunkToGroupByTrackingId({ tracking_id: 'sdk-group', chunk_id: chunks[11].id });
    await sdk.addChunkToGroupByTrackingId({ tracking_id: 'sdk-group-2', chunk_tracking_id: 'sdk-g-0' });
    await sdk.removeChunkFromGroup({ group_id: group.id, chunk_id: chunks[11].id });

    const page1 = (await sdk.getChunksInGroup({ groupId: group.id, page: 1 })) as any;
    const page2 = (await sdk.getChunksInGroup({ groupId: group.id, page: 2 })) as any;
    expect(page1.total_pages).toBe(2);
    expect(page1.group.id).toBe(group.id);
    expect(page1.chunks).toHaveLength(10);
    expect(page2.chunks).toHaveLength(1);
    expect([...page1.chunks, ...page2.chunks].map((c: any) => c.id).sort()).toEqual(chunks.slice(0, 11).map((c) => c.id).sort());
    const byTid = (await sdk.getChunksGroupByTrackingId({ groupTrackingId: 'sdk-group', page: 2 })) as any;
    expect(byTid.chunks.map((c: any) => c.id)).toEqual(page2.chunks.map((c: any) => c.id));

    const forChunks = (await sdk.getGroupsForChunks({ chunk_ids: [chunks[0].id, chunks[11].id] })) as any[];
    const map = Object.fromEntries(forChunks.map((e) => [e.chunk_uuid, e.slim_groups.map((g: any) => g.tracking_id).sort()]));
    expect(map).toEqual({ [chunks[0].id]: ['sdk-group', 'sdk-group-2'], [chunks[11].id]: [] });

    const listed = (await sdk.getGroupsForDataset({ page: 1 })) as any;
    expect(listed.total_pages).toBe(1);
    expect(listed.groups.map((g: any) => g.name).sort()).toEqual(['Renamed group', 'second', 'third']);

    // The SDK sends no delete_chunks query parameter: the chunks stay.
    await sdk.deleteGroup({ groupId: group.id, deleteChunks: false });
    await expect(sdk.getGroup({ groupId: group.id })).rejects.toThrow(/Not Found/);
    expect(((await sdk.getChunkById({ chunkId: chunks[1].id })) as any).id).toBe(chunks[1].id);
    await sdk.deleteGroupByTrackingId({ tracking_id: 'sdk-group-2', deleteChunks: false });
    await expect(sdk.getGroupByTrackingId({ trackingId: 'sdk-group-2' })).rejects.toThrow(/Not Found/);
  });
});

describe('bulk delete and split', () => {
  it('bulkDeleteChunks deletes exactly the chunks matching the filter, in the background', async () => {
    const made = (await sdk.createChunk(Array.from({ length: 6 }, (_, i) => ({ chunk_html: `bulk ${i}`, tracking_id: `sdk-bulk-${i}`, metadata: { bulk: i % 2 === 0 ? 'yes' : 'no' } })))).chunk_metadata as any[];
    await sdk.bulkDeleteChunks({ filter: { must: [{ field: 'metadata.bulk', match_any: ['yes'] }] } });
    const doomed = made.filter((_, i) => i % 2 === 0).map((c) => c.id);
    const until = Date.now() + 20_000;
    while ((await countRows(stack, 'chunks', `id IN (${doomed.map(() => '?').join(', ')})`, ...doomed)) > 0) {
      if (Date.now() > until) throw new Error('bulk delete did not run');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const c of made.filter((_, i) => i % 2 === 1)) expect(((await sdk.getChunkById({ chunkId: c.id })) as any).id).toBe(c.id);
    await expect(sdk.bulkDeleteChunks({ filter: { must: [{ field: 'colour', match_any: ['x'] }] } })).rejects.toThrow(/colour/);
  });

  it('splitChunkHtml splits a page at its headings', async () => {
    const out = await sdk.splitChunkHtml({ chunk_html: '<h1>One</h1><p>a b c d e f</p><h2>Two</h2><p>g</p>', heading_remove_strings: ['#'] });
    expect(out).toEqual({
      chunks: [
        { headings: ['One'], body: '<h1>One</h1><p>a b c d e f</p>' },
        { headings: ['Two'], body: '<h2>Two</h2><p>g</p>' },
      ],
    });
  });
});

describe('datasets', () => {
  it('get by id / tracking id, list, usage, tags, update, clear, delete', async () => {
    await sdk.createChunk([{ chunk_html: 't1', tag_set: ['red', 'blue'] }, { chunk_html: 't2', tag_set: ['red'] }]);
    const byId = await owner.getDatasetById(datasetId);
    expect(byId).toMatchObject({ id: datasetId, name: 'SDK dataset', tracking_id: datasetTracking, deleted: 0 });
    expect(await owner.getDatasetByTrackingId(datasetTracking)).toMatchObject({ id: datasetId });

    const count = await countRows(stack, 'chunks', 'dataset_id = ?', datasetId);
    const list = await owner.getDatasetsFromOrganization(orgId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ dataset: { id: datasetId }, dataset_usage: { dataset_id: datasetId, chunk_count: count } });
    expect(await owner.getDatasetUsageById(datasetId)).toMatchObject({ dataset_id: datasetId, chunk_count: count });

    const tags = await owner.getAllDatasetTags({ page: 1, page_size: 10 }, datasetId);
    expect(tags.total).toBe(2);
    expect(tags.tags).toEqual([
      { tag: 'red', count: 2 },
      { tag: 'blue', count: 1 },
    ]);

    const updated = await owner.updateDataset({ dataset_id: datasetId, dataset_name: 'SDK renamed', server_configuration: { BM25_K: 1.3 } });
    expect(updated).toMatchObject({ id: datasetId, name: 'SDK renamed' });
    expect((updated.server_configuration as Record<string, unknown>).BM25_K).toBe(1.3);

    await owner.clearDataset(datasetId);
    expect(await owner.getDatasetUsageById(datasetId)).toMatchObject({ chunk_count: 0 });
    expect(await countRows(stack, 'chunks', 'dataset_id = ?', datasetId)).toBe(0);

    await owner.deleteDataset(datasetId);
    await expect(owner.getDatasetById(datasetId)).rejects.toThrow(/Not Found/);
    expect(await owner.getDatasetsFromOrganization(orgId)).toEqual([]);
  });
});
