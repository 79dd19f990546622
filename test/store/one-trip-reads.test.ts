/**
 * The reads answered in one round trip or snapshot (`datasets.standing` on PostgreSQL,
 * `indexReads.chunks` on both stores) give exactly what the repositories' one-by-one reads give
 * (the oracle), on every case those reads tell apart: deleted datasets and organizations,
 * tracking ids of another organization, members and non-members, groups of several ages, vectors
 * of the asked model only, sparse vectors, order asked, repeated and unknown ids. SQLite offers no
 * `standing` (its caches serve those reads): the facade then reads one by one, which the
 * integration suites cover on both stores.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../core/domain/tenancy.js';
import type { DatasetRef, IndexedChunk, Store } from '../../store/repository.js';
import { STORE_KINDS, openTestStore, type StoreKind, type TestStore } from '../helpers/both-stores.js';

const MODEL = 'dense-model';
const SPARSE = 'sparse-model';

/** What `standing` must answer, read one repository at a time (as facade/access.ts does without it). */
async function standingOracle(store: Store, ref: DatasetRef, userId: string | null) {
  const dataset = 'id' in ref ? await store.datasets.get(ref.id) : await store.datasets.getByTrackingId(ref.organizationId, ref.trackingId);
  if (!dataset) return undefined;
  const organization = await store.organizations.get(dataset.organizationId);
  if (!organization) return undefined;
  const membership = userId === null ? undefined : await store.users.membership(userId, organization.id);
  return { dataset, organization, membership };
}

/** The fields of a chunk the core indexes (a store may answer the whole record; only these count). */
const INDEXED_FIELDS = ['id', 'trackingId', 'chunkHtml', 'link', 'tagSet', 'timeStamp', 'location', 'numValue', 'fulltextContent', 'convertHtmlToText', 'fulltextBoost'] as const;

/**
 * The answer with each chunk cut to {@link INDEXED_FIELDS} and its metadata, parsed whichever way
 * it came: the index reads leave it as the stored JSON text (`metadataJson`), the records parse it.
 */
const indexed = (chunks: readonly IndexedChunk[]) =>
  chunks.map((c) => ({
    ...c,
    chunk: {
      ...Object.fromEntries(INDEXED_FIELDS.map((k) => [k, c.chunk[k]])),
      metadata: c.chunk.metadataJson === undefined ? c.chunk.metadata : c.chunk.metadataJson === null ? null : (JSON.parse(c.chunk.metadataJson) as unknown),
    },
  }));

/** What `indexReads.chunks` must answer, read one repository at a time. */
async function indexOracle(store: Store, datasetId: string, ids: readonly string[], sparseModel: string | null): Promise<IndexedChunk[]> {
  const chunks = await store.chunks.getMany(datasetId, ids);
  const chunkIds = chunks.map((c) => c.id);
  const groups = await store.groups.groupsOfChunks(datasetId, chunkIds);
  const vectors = await store.vectors.getMany(chunkIds, MODEL);
  const sparse = sparseModel ? await store.sparseVectors.getMany(chunkIds, sparseModel) : new Map();
  return chunks.map((chunk) => ({
    chunk,
    groupIds: (groups.get(chunk.id) ?? []).map((g) => g.id),
    vector: vectors.get(chunk.id) ?? null,
    sparse: sparse.get(chunk.id) ?? null,
  }));
}

describe.each(STORE_KINDS)('one-trip reads on %s', (kind: StoreKind) => {
  let t: TestStore;
  let store: Store;
  beforeAll(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('standing is offered by PostgreSQL only; index reads by both, in slices sized for the engine', () => {
    expect(typeof store.datasets.standing === 'function').toBe(kind === 'postgres');
    // SQLite's reads hold the core's thread: small slices. PostgreSQL's leave it free: large ones.
    expect(store.indexReads.sliceSize).toBe(kind === 'postgres' ? 512 : 64);
  });

  it('standing: the dataset, its live organization and the user membership, as the one-by-one reads find them', async () => {
    if (!store.datasets.standing) return;
    const standing = store.datasets.standing.bind(store.datasets);
    const ann = await store.users.createApiOnly({ email: 'ann@example.com', name: 'Ann', organizationName: 'Ann org', keyName: 'k', keyHash: randomBytes(16).toString('hex') });
    const bob = await store.users.createApiOnly({ email: 'bob@example.com', name: 'Bob', organizationName: 'Bob org', keyName: 'k', keyHash: randomBytes(16).toString('hex') });
    const org = ann.organization;
    await store.organizations.update(org.id, { partnerConfiguration: { theme: 'dark', n: 3 } });
    // Ann becomes a reader with scopes (JSON in a column), Bob is no member of Ann's organization.
    await store.users.updateMembership(ann.user.id, org.id, { role: Role.Read, scopes: ['GET /api/chunk/*'] });
    const ds = await store.datasets.create({ organizationId: org.id, name: 'a', trackingId: 'ta', serverConfiguration: { BM25_K: 1.1 } });
    const other = await store.datasets.create({ organizationId: bob.organization.id, name: 'b', trackingId: 'ta', serverConfiguration: {} });
    const gone = await store.datasets.create({ organizationId: org.id, name: 'gone', trackingId: 'tg', serverConfiguration: {} });
    await store.datasets.markDeleted(gone.id);

    const refs: DatasetRef[] = [
      { id: ds.id },
      { id: other.id },
      { id: gone.id },
      { id: 'unknown' },
      { organizationId: org.id, trackingId: 'ta' },
      { organizationId: bob.organization.id, trackingId: 'ta' },
      { organizationId: org.id, trackingId: 'tg' },
      { organizationId: org.id, trackingId: 'unknown' },
      { organizationId: 'unknown', trackingId: 'ta' },
    ];
    const check = async () => {
      for (const ref of refs) {
        for (const userId of [null, ann.user.id, bob.user.id, 'unknown']) {
          expect(await standing(ref, userId), JSON.stringify({ ref, userId })).toEqual(await standingOracle(store, ref, userId));
        }
      }
    };
    await check();
    const found = await standing({ id: ds.id }, ann.user.id);
    expect(found?.membership?.scopes).toEqual(['GET /api/chunk/*']);
    expect(found?.organization.partnerConfiguration).toEqual({ theme: 'dark', n: 3 });
    expect(await standing({ id: ds.id }, bob.user.id)).toMatchObject({ dataset: { id: ds.id }, membership: undefined });

    // A change shows on the very next read: membership scopes cleared, then the organization deleted.
    await store.users.updateMembership(ann.user.id, org.id, { role: Role.Admin, scopes: null });
    expect((await standing({ id: ds.id }, ann.user.id))?.membership).toMatchObject({ role: Role.Admin, scopes: null });
    await store.organizations.update(org.id, { deleted: true });
    expect(await standing({ id: ds.id }, ann.user.id)).toBeUndefined();
    expect(await standing({ organizationId: org.id, trackingId: 'ta' }, null)).toBeUndefined();
    await check();
  });

  it('indexReads.chunks: chunks in the order asked with their groups and the asked vectors, as the one-by-one reads find them', async () => {
    const reads = store.indexReads;
    const org = await store.organizations.create({ name: 'o' });
    const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
    const elsewhere = await store.datasets.create({ organizationId: org.id, name: 'e', trackingId: null, serverConfiguration: {} });
    const chunks = await store.chunks.createMany(
      ds.id,
      Array.from({ length: 7 }, (_, i) => ({
        chunkHtml: `<p>chunk ${i}</p>`,
        trackingId: `t${i}`,
        tagSet: [`tag${i % 2}`],
        metadata: { i, nested: { s: 'x' } },
        ...(i === 1 ? { location: { lat: 1.5, lon: -2.25 }, numValue: 7, timeStamp: 1_704_164_645_000 } : {}),
        ...(i === 2 ? { link: 'https://example.test/2', fulltextContent: 'own words', convertHtmlToText: false, fulltextBoost: { phrase: 'own', boost_factor: 2.5 } } : {}),
        ...(i < 3 ? { groupTrackingIds: ['late', 'early'] } : {}),
      })),
    );
    const [foreign] = await store.chunks.createMany(elsewhere.id, [{ chunkHtml: 'other dataset' }]);
    // Groups of several ages (the order is the groups', not the membership's).
    const [g3] = await store.groups.createMany(ds.id, [{ name: 'third', trackingId: 'third' }], false);
    await store.groups.addChunk(ds.id, g3!.id, chunks[0]!.id);
    await store.groups.addChunk(ds.id, g3!.id, chunks[4]!.id);
    const dense = await store.vectors.pending(ds.id, MODEL, 10);
    await store.vectors.put(
      ds.id,
      MODEL,
      dense.filter((_, i) => i % 2 === 0).map(({ chunk, contentHash }, i) => ({ chunkId: chunk.id, contentHash, vector: new Float32Array([i, -0, 1.4e-45, chunk.createdAt % 7]) })),
    );
    // Another model's vectors are never returned for MODEL.
    const other = await store.vectors.pending(ds.id, 'other-model', 10);
    await store.vectors.put(ds.id, 'other-model', other.slice(1, 3).map(({ chunk, contentHash }) => ({ chunkId: chunk.id, contentHash, vector: new Float32Array([9, 9]) })));
    const sparse = await store.sparseVectors.pending(ds.id, SPARSE, 10);
    await store.sparseVectors.put(
      ds.id,
      SPARSE,
      // Four of the chunks that stay (chunks[6] is deleted below): pending comes in no fixed order of ours.
      sparse.filter(({ chunk }) => chunk.id !== chunks[6]!.id).slice(0, 4).map(({ chunk, sourceUpdatedAt }, i) => ({ chunkId: chunk.id, sourceUpdatedAt, vector: { indices: new Uint32Array([i, 70_000]), values: new Float32Array([0.5, -i]) } })),
    );
    await store.chunks.delete(ds.id, { id: chunks[6]!.id });

    const asked = [chunks[5]!.id, 'unknown', chunks[0]!.id, foreign!.id, chunks[6]!.id, ...chunks.slice(1, 5).map((c) => c.id), chunks[5]!.id];
    for (const sparseModel of [SPARSE, null, 'no-such-model']) {
      const got = await reads.chunks(ds.id, asked, MODEL, sparseModel);
      expect(indexed(got)).toEqual(indexed(await indexOracle(store, ds.id, asked, sparseModel)));
    }
    const got = await reads.chunks(ds.id, asked, MODEL, SPARSE);
    expect(got.map((g) => g.chunk.id)).toEqual(asked.filter((id) => chunks.slice(0, 6).some((c) => c.id === id)));
    expect(got.find((g) => g.chunk.id === chunks[0]!.id)!.groupIds.length).toBe(3);
    expect(got.filter((g) => g.vector !== null).length).toBeGreaterThan(0);
    expect(got.filter((g) => g.vector === null).length).toBeGreaterThan(0);
    expect(got.filter((g) => g.sparse !== null).length).toBe(4);
    expect(await reads.chunks(ds.id, [], MODEL, SPARSE)).toEqual([]);
    // A whole slice at once, as the core asks for it.
    const many = await store.chunks.createMany(ds.id, Array.from({ length: reads.sliceSize }, (_, i) => ({ chunkHtml: `bulk ${i}` })));
    const ids = many.map((c) => c.id).reverse();
    expect(indexed(await reads.chunks(ds.id, ids, MODEL, SPARSE))).toEqual(indexed(await indexOracle(store, ds.id, ids, SPARSE)));
  });
});
