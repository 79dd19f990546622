/**
 * Contract of the tenancy repositories (organizations, users, API keys, datasets) on both stores:
 * the same calls give the same records, the same errors (QuarryError code and message) and leave
 * the same state, on SQLite and on PostgreSQL. The concurrent cases are the ones SQLite's single
 * writer serialized for free: on PostgreSQL, creations racing for one tracking id, one owner's
 * organization cap or one new email must end as they would one after the other, and a unique
 * violation must never escape as a raw driver error.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { Role } from '../../core/domain/tenancy.js';
import type { Store } from '../../store/repository.js';
import { openPgStore } from '../../store/postgres/pg-store.js';
import { ragRecord, searchRecord } from '../helpers/analytics-record.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { userEvent } from '../helpers/user-event.js';

/** The error a promise rejects with (fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err,
  );
}

/** Asserts a QuarryError of this code and message (never a driver error). */
async function expectQuarryError(p: Promise<unknown>, code: string, message: string): Promise<void> {
  const err = await failure(p);
  expect(err).toBeInstanceOf(QuarryError);
  expect({ code: (err as QuarryError).code, message: (err as QuarryError).message }).toEqual({ code, message });
}

/** Outcomes of settled promises: the values, and the errors as {code, message}. */
function outcomes<T>(settled: PromiseSettledResult<T>[]): { ok: T[]; errors: { code: unknown; message: string }[] } {
  const ok: T[] = [];
  const errors: { code: unknown; message: string }[] = [];
  for (const s of settled) {
    if (s.status === 'fulfilled') ok.push(s.value);
    else {
      const err = s.reason as Error & { code?: unknown };
      // Not a QuarryError: the raw error stays visible in the assertion's diff.
      errors.push({ code: err instanceof QuarryError ? err.code : `raw ${String(err.code)}: ${err.message}`, message: err.message });
    }
  }
  return { ok, errors };
}

/** Bytewise (COLLATE "C") comparison of two strings of ASCII or any UTF-8 text. */
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Records sorted as the stores list them: oldest first, ties by id. */
const byAge = <T extends { createdAt: number; id: string }>(records: T[]): T[] =>
  [...records].sort((a, b) => a.createdAt - b.createdAt || bytewise(a.id, b.id));

/** The activity counters of an organization that has none. */
const NO_USE = { fileBytes: 0, searchCount: 0, answerCount: 0, answersThisMonth: 0, eventCount: 0 };

describe.each(STORE_KINDS)('%s store: tenancy', (kind) => {
  let t: TestStore;
  let store: Store;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
  });
  afterEach(async () => {
    await t.dispose();
  });

  /** A user (through createApiOnly) with the organization and key it came with. */
  const newUser = (email: string, name = 'n') =>
    store.users.createApiOnly({ email, name, organizationName: `${email} org`, keyName: 'k', keyHash: randomBytes(16).toString('hex') });

  const newDataset = (organizationId: string, trackingId: string | null = null, name = 'd') =>
    store.datasets.create({ organizationId, name, trackingId, serverConfiguration: { EMBEDDING_SIZE: 8 } });

  describe('organizations', () => {
    it('creates, reads and updates an organization', async () => {
      const before = Date.now();
      const org = await store.organizations.create({ name: 'acme' });
      expect(org).toEqual({
        id: expect.any(String),
        name: 'acme',
        registerable: true,
        deleted: false,
        partnerConfiguration: {},
        createdAt: expect.any(Number),
        updatedAt: org.createdAt,
      });
      expect(org.createdAt).toBeGreaterThanOrEqual(before);
      expect(await store.organizations.get(org.id)).toEqual(org);
      expect(await store.organizations.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();

      const renamed = await store.organizations.update(org.id, { name: 'acme 2', partnerConfiguration: { a: [1, { b: 'c' }] } });
      expect(renamed).toEqual({ ...org, name: 'acme 2', partnerConfiguration: { a: [1, { b: 'c' }] }, updatedAt: renamed.updatedAt });
      expect(renamed.updatedAt).toBeGreaterThanOrEqual(org.updatedAt);
      // Absent fields keep their values.
      const same = await store.organizations.update(org.id, {});
      expect({ ...same, updatedAt: 0 }).toEqual({ ...renamed, updatedAt: 0 });
      expect(await store.organizations.get(org.id)).toEqual(same);
    });

    it('hides a deleted organization unless asked, lists it, and can restore it', async () => {
      const org = await store.organizations.create({ name: 'gone' });
      const live = await store.organizations.create({ name: 'live' });
      const flagged = await store.organizations.update(org.id, { deleted: true });
      expect(flagged.deleted).toBe(true);
      expect(await store.organizations.get(org.id)).toBeUndefined();
      expect(await store.organizations.get(org.id, true)).toEqual(flagged);
      expect(await store.organizations.listDeleted()).toEqual([org.id]);
      const restored = await store.organizations.update(org.id, { deleted: false });
      expect(await store.organizations.get(org.id)).toEqual(restored);
      expect(await store.organizations.listDeleted()).toEqual([]);
      expect((await store.organizations.get(live.id))!.deleted).toBe(false);
    });

    it('refuses to update an unknown organization', async () => {
      const id = '00000000-0000-4000-8000-000000000001';
      await expectQuarryError(store.organizations.update(id, { name: 'x' }), 'not_found', `Not Found: organization ${id} does not exist`);
    });

    it('makes the creator the owner and caps the live organizations of an owner', async () => {
      const { user, organization: first } = await newUser('cap@example.com');
      const second = await store.organizations.create({ name: 'second', ownerUserId: user.id, maxPerOwner: 2 });
      expect(await store.users.membership(user.id, second.id)).toMatchObject({ userId: user.id, organizationId: second.id, role: Role.Owner, scopes: null });
      await expectQuarryError(
        store.organizations.create({ name: 'third', ownerUserId: user.id, maxPerOwner: 2 }),
        'forbidden',
        `Forbidden: user ${user.id} already belongs to 2 organizations, the most allowed (QUARRY_MAX_ORGANIZATIONS_PER_USER = 2)`,
      );
      // The refused creation left nothing behind.
      expect((await store.users.organizations(user.id)).map((o) => o.id).sort()).toEqual([first.id, second.id].sort());
      // Without a cap, or once an organization is flagged deleted, creation goes through.
      await store.organizations.create({ name: 'uncapped', ownerUserId: user.id });
      await store.organizations.update(first.id, { deleted: true });
      await store.organizations.update(second.id, { deleted: true });
      const again = await store.organizations.create({ name: 'again', ownerUserId: user.id, maxPerOwner: 2 });
      expect((await store.users.organizations(user.id)).map((o) => o.name).sort()).toEqual(['again', 'uncapped']);
      expect(again.deleted).toBe(false);
    });

    it('lets exactly as many concurrent creations pass the cap as there is room for', async () => {
      for (let round = 0; round < 3; round++) {
        const { user } = await newUser(`race${round}@example.com`);
        // The user already owns one organization (createApiOnly's): room for two more.
        const settled = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.organizations.create({ name: `o${i}`, ownerUserId: user.id, maxPerOwner: 3 })),
        );
        const { ok, errors } = outcomes(settled);
        expect(ok).toHaveLength(2);
        expect(errors).toEqual(
          Array.from({ length: 6 }, () => ({
            code: 'forbidden',
            message: `Forbidden: user ${user.id} already belongs to 3 organizations, the most allowed (QUARRY_MAX_ORGANIZATIONS_PER_USER = 3)`,
          })),
        );
        expect(await store.users.organizations(user.id)).toHaveLength(3);
      }
    });

    it('counts the live datasets, the members and the chunks of live datasets', async () => {
      const { user, organization: org } = await newUser('usage@example.com');
      const other = await store.organizations.create({ name: 'other', ownerUserId: user.id });
      expect(await store.organizations.usage(org.id)).toEqual({ ...NO_USE, datasetCount: 0, userCount: 1, chunkCount: 0 });
      const a = await newDataset(org.id);
      const b = await newDataset(org.id);
      const elsewhere = await newDataset(other.id);
      await store.chunks.createMany(a.id, [{ chunkHtml: 'a1' }, { chunkHtml: 'a2' }, { chunkHtml: 'a3' }]);
      await store.chunks.createMany(b.id, [{ chunkHtml: 'b1' }]);
      await store.chunks.createMany(elsewhere.id, [{ chunkHtml: 'e1' }, { chunkHtml: 'e2' }]);
      expect(await store.organizations.usage(org.id)).toEqual({ ...NO_USE, datasetCount: 2, userCount: 1, chunkCount: 4 });
      await store.datasets.markDeleted(a.id);
      expect(await store.organizations.usage(org.id)).toEqual({ ...NO_USE, datasetCount: 1, userCount: 1, chunkCount: 1 });
      expect(await store.organizations.usage(other.id)).toEqual({ ...NO_USE, datasetCount: 1, userCount: 1, chunkCount: 2 });
      expect(await store.organizations.usage('00000000-0000-4000-8000-000000000000')).toEqual({ ...NO_USE, datasetCount: 0, userCount: 0, chunkCount: 0 });
    });

    it('counts the files\' bytes, searches, RAG answers (and this month\'s) and user events of live datasets', async () => {
      const { user, organization: org } = await newUser('activity@example.com');
      const other = await store.organizations.create({ name: 'other', ownerUserId: user.id });
      const a = await newDataset(org.id);
      const b = await newDataset(org.id);
      const elsewhere = await newDataset(other.id);
      const now = Date.now();
      // Last month's first day at noon: counted in all, not in this month's.
      const lastMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 1, 1, 12);
      for (const [ds, size] of [[a.id, 100], [b.id, 23], [elsewhere.id, 1000]] as const) {
        await store.files.create({ id: randomUUID(), datasetId: ds, fileName: 'f.csv', kind: 'csv', status: 'done', description: '', link: null, metadata: null, tagSet: [], timeStamp: null, size, blobKey: `datasets/${ds}/files/f`, contentType: null, importOptions: null, splitOptions: null });
      }
      await store.analytics.insertSearches([
        ...[a.id, a.id, b.id].map((datasetId, i) => searchRecord({ id: randomUUID(), datasetId, createdAt: now - i * 1000 })),
        searchRecord({ id: randomUUID(), datasetId: elsewhere.id, createdAt: now }),
      ]);
      await store.analytics.insertRags([
        ragRecord({ id: randomUUID(), datasetId: a.id, createdAt: now }),
        ragRecord({ id: randomUUID(), datasetId: b.id, createdAt: lastMonth }),
        ragRecord({ id: randomUUID(), datasetId: elsewhere.id, createdAt: now }),
      ]);
      await store.userEvents.insertMany([
        ...[a.id, b.id, b.id, b.id].map((datasetId) => userEvent({ eventType: 'view', datasetId, createdAt: now })),
        userEvent({ eventType: 'view', datasetId: elsewhere.id, createdAt: now }),
      ]);
      expect(await store.organizations.usage(org.id)).toEqual({ datasetCount: 2, userCount: 1, chunkCount: 0, fileBytes: 123, searchCount: 3, answerCount: 2, answersThisMonth: 1, eventCount: 4 });
      await store.datasets.markDeleted(b.id);
      expect(await store.organizations.usage(org.id)).toEqual({ datasetCount: 1, userCount: 1, chunkCount: 0, fileBytes: 100, searchCount: 2, answerCount: 1, answersThisMonth: 1, eventCount: 1 });
      expect(await store.organizations.usage(other.id)).toEqual({ datasetCount: 1, userCount: 1, chunkCount: 0, fileBytes: 1000, searchCount: 1, answerCount: 1, answersThisMonth: 1, eventCount: 1 });
    });
  });

  describe('users', () => {
    it('creates an API-only user with an organization and an owner key, reusing the user by email', async () => {
      const hash = 'f'.repeat(64);
      const first = await store.users.createApiOnly({ email: 'a@example.com', name: 'Ann', organizationName: 'Ann org', keyName: 'default', keyHash: hash });
      expect(first.user).toEqual({ id: expect.any(String), email: 'a@example.com', name: 'Ann', createdAt: expect.any(Number), updatedAt: first.user.createdAt });
      expect(first.organization).toMatchObject({ name: 'Ann org', deleted: false, registerable: true, partnerConfiguration: {} });
      expect(first.key).toEqual({
        id: expect.any(String),
        organizationId: first.organization.id,
        userId: first.user.id,
        name: 'default',
        role: Role.Owner,
        datasetIds: [],
        scopes: [],
        defaultParams: null,
        expiresAt: null,
        createdAt: expect.any(Number),
        updatedAt: first.key.createdAt,
      });
      expect(await store.users.get(first.user.id)).toEqual(first.user);
      expect(await store.users.findByEmail('a@example.com')).toEqual(first.user);
      expect(await store.users.findByEmail('A@example.com')).toBeUndefined();
      expect(await store.users.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
      expect(await store.apiKeys.findByHash(hash)).toEqual(first.key);

      // Same email: the same user (the name it first had), another organization and key.
      const second = await store.users.createApiOnly({ email: 'a@example.com', name: 'Other', organizationName: 'Ann org 2', keyName: 'k2', keyHash: 'e'.repeat(64) });
      expect(second.user).toEqual(first.user);
      expect(second.organization.id).not.toBe(first.organization.id);
      expect(await store.users.organizations(first.user.id)).toEqual(byAge([first.organization, second.organization]));
    });

    it('gives every concurrent first request of one email the same user', async () => {
      for (let round = 0; round < 3; round++) {
        const email = `same${round}@example.com`;
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            store.users.createApiOnly({ email, name: `n${i}`, organizationName: `o${i}`, keyName: 'k', keyHash: randomBytes(16).toString('hex') }),
          ),
        );
        const userIds = new Set(results.map((r) => r.user.id));
        expect(userIds.size).toBe(1);
        expect(new Set(results.map((r) => r.organization.id)).size).toBe(6);
        expect(await store.users.organizations(results[0]!.user.id)).toHaveLength(6);
      }
    });

    it('lists memberships, organizations and members, leaving deleted organizations out', async () => {
      const { user, organization: org } = await newUser('m@example.com', 'Em');
      const second = await store.organizations.create({ name: 'second', ownerUserId: user.id });
      const membership = (await store.users.membership(user.id, org.id))!;
      expect(membership).toEqual({
        id: expect.any(String),
        userId: user.id,
        organizationId: org.id,
        role: Role.Owner,
        scopes: null,
        createdAt: expect.any(Number),
        updatedAt: membership.createdAt,
      });
      expect(await store.users.membership(user.id, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
      const secondMembership = (await store.users.membership(user.id, second.id))!;
      const memberships = await store.users.memberships(user.id);
      expect(memberships).toHaveLength(2);
      expect(memberships).toEqual(expect.arrayContaining([membership, secondMembership]));
      expect(await store.users.ofOrganization(org.id)).toEqual([{ user, membership }]);
      expect(await store.users.ofOrganization('00000000-0000-4000-8000-000000000000')).toEqual([]);

      await store.organizations.update(org.id, { deleted: true });
      expect(await store.users.memberships(user.id)).toEqual([secondMembership]);
      expect(await store.users.organizations(user.id)).toEqual([second]);
      // The membership itself is still there (until the organization is purged).
      expect(await store.users.membership(user.id, org.id)).toEqual(membership);
    });

    it('updates a membership field by field, and refuses a non-member', async () => {
      const { user, organization: org } = await newUser('u@example.com');
      const admin = await store.users.updateMembership(user.id, org.id, { role: Role.Admin });
      expect(admin).toMatchObject({ role: Role.Admin, scopes: null });
      expect(admin.updatedAt).toBeGreaterThanOrEqual(admin.createdAt);
      const scoped = await store.users.updateMembership(user.id, org.id, { scopes: ['GET /api/dataset', 'POST /api/chunk'] });
      expect(scoped).toMatchObject({ role: Role.Admin, scopes: ['GET /api/dataset', 'POST /api/chunk'] });
      const kept = await store.users.updateMembership(user.id, org.id, { role: Role.Read });
      expect(kept).toMatchObject({ role: Role.Read, scopes: ['GET /api/dataset', 'POST /api/chunk'] });
      const cleared = await store.users.updateMembership(user.id, org.id, { scopes: null });
      expect(cleared).toMatchObject({ role: Role.Read, scopes: null });
      expect(await store.users.membership(user.id, org.id)).toEqual(cleared);
      const stranger = '00000000-0000-4000-8000-000000000002';
      await expectQuarryError(
        store.users.updateMembership(stranger, org.id, { role: Role.Admin }),
        'bad_request',
        `user ${stranger} is not a member of organization ${org.id}`,
      );
    });
  });

  describe('API keys', () => {
    it('creates, finds, lists and deletes keys', async () => {
      const { user, organization: org, key: ownerKey } = await newUser('k@example.com');
      const other = await store.organizations.create({ name: 'other' });
      const created = await store.apiKeys.create({
        organizationId: org.id,
        userId: null,
        name: 'reader',
        hash: 'a'.repeat(64),
        role: Role.Read,
        datasetIds: ['d1', 'd2'],
        scopes: ['GET /api/chunk'],
        defaultParams: { filters: { must: [{ field: 'tag_set', match_all: ['x'] }] } },
        expiresAt: 4_102_444_800_000,
      });
      expect(created).toEqual({
        id: expect.any(String),
        organizationId: org.id,
        userId: null,
        name: 'reader',
        role: Role.Read,
        datasetIds: ['d1', 'd2'],
        scopes: ['GET /api/chunk'],
        defaultParams: { filters: { must: [{ field: 'tag_set', match_all: ['x'] }] } },
        expiresAt: 4_102_444_800_000,
        createdAt: expect.any(Number),
        updatedAt: created.createdAt,
      });
      const userKey = await store.apiKeys.create({
        organizationId: org.id,
        userId: user.id,
        name: 'mine',
        hash: 'b'.repeat(64),
        role: Role.Admin,
        datasetIds: [],
        scopes: [],
        defaultParams: null,
        expiresAt: null,
      });
      expect(await store.apiKeys.findByHash('a'.repeat(64))).toEqual(created);
      expect(await store.apiKeys.findByHash('c'.repeat(64))).toBeUndefined();
      expect(await store.apiKeys.list(org.id)).toEqual(byAge([ownerKey, created, userKey]));
      expect(await store.apiKeys.list(other.id)).toEqual([]);

      expect(await store.apiKeys.delete(other.id, created.id)).toBe(false);
      expect(await store.apiKeys.delete(org.id, created.id)).toBe(true);
      expect(await store.apiKeys.delete(org.id, created.id)).toBe(false);
      expect(await store.apiKeys.findByHash('a'.repeat(64))).toBeUndefined();
      expect(await store.apiKeys.list(org.id)).toEqual(byAge([ownerKey, userKey]));
    });

    it('finds no key of a deleted organization, but still lists it', async () => {
      const hash = 'd'.repeat(64);
      const { organization: org, key } = await store.users.createApiOnly({ email: 'gone@example.com', name: 'n', organizationName: 'o', keyName: 'k', keyHash: hash });
      expect(await store.apiKeys.findByHash(hash)).toEqual(key);
      await store.organizations.update(org.id, { deleted: true });
      expect(await store.apiKeys.findByHash(hash)).toBeUndefined();
      expect(await store.apiKeys.list(org.id)).toEqual([key]);
      await store.organizations.update(org.id, { deleted: false });
      expect(await store.apiKeys.findByHash(hash)).toEqual(key);
    });
  });

  describe('datasets', () => {
    it('creates, reads, lists and updates a dataset', async () => {
      const { organization: org } = await newUser('d@example.com');
      const ds = await newDataset(org.id, 'track-1', 'first');
      expect(ds).toEqual({
        id: expect.any(String),
        organizationId: org.id,
        name: 'first',
        trackingId: 'track-1',
        serverConfiguration: { EMBEDDING_SIZE: 8 },
        deleted: false,
        createdAt: expect.any(Number),
        updatedAt: ds.createdAt,
      });
      expect(await store.datasets.get(ds.id)).toEqual(ds);
      expect(await store.datasets.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
      expect(await store.datasets.getByTrackingId(org.id, 'track-1')).toEqual(ds);
      expect(await store.datasets.getByTrackingId(org.id, 'track-2')).toBeUndefined();

      const renamed = await store.datasets.update(ds.id, { name: 'renamed', serverConfiguration: { EMBEDDING_SIZE: 16, X: [1] } });
      expect(renamed).toEqual({ ...ds, name: 'renamed', serverConfiguration: { EMBEDDING_SIZE: 16, X: [1] }, updatedAt: renamed.updatedAt });
      expect(renamed.updatedAt).toBeGreaterThanOrEqual(ds.updatedAt);
      const retracked = await store.datasets.update(ds.id, { trackingId: 'track-2' });
      expect(retracked).toMatchObject({ name: 'renamed', trackingId: 'track-2', serverConfiguration: { EMBEDDING_SIZE: 16, X: [1] } });
      expect(await store.datasets.getByTrackingId(org.id, 'track-1')).toBeUndefined();
      expect(await store.datasets.getByTrackingId(org.id, 'track-2')).toEqual(retracked);
      // Its own tracking id again, then none.
      expect((await store.datasets.update(ds.id, { trackingId: 'track-2' })).trackingId).toBe('track-2');
      const untracked = await store.datasets.update(ds.id, { trackingId: null });
      expect(untracked.trackingId).toBeNull();
      expect(await store.datasets.get(ds.id)).toEqual(untracked);

      const missing = '00000000-0000-4000-8000-000000000003';
      await expectQuarryError(store.datasets.update(missing, { name: 'x' }), 'not_found', `Not Found: dataset ${missing} does not exist`);
    });

    it('keeps a tracking id to one live dataset per organization', async () => {
      const { organization: org } = await newUser('t@example.com');
      const other = await store.organizations.create({ name: 'other' });
      const a = await newDataset(org.id, 'shared');
      const taken = `A dataset with tracking_id "shared" already exists in organization ${org.id}`;
      await expectQuarryError(newDataset(org.id, 'shared'), 'duplicate_tracking_id', taken);
      // Another organization may use it.
      const elsewhere = await newDataset(other.id, 'shared');
      expect(await store.datasets.getByTrackingId(other.id, 'shared')).toEqual(elsewhere);
      // Untracked datasets never collide.
      await newDataset(org.id, null);
      await newDataset(org.id, null);
      const b = await newDataset(org.id, 'b');
      await expectQuarryError(store.datasets.update(b.id, { trackingId: 'shared' }), 'duplicate_tracking_id', taken);
      expect((await store.datasets.get(b.id))!.trackingId).toBe('b');
      // Once the holder is deleted, the tracking id is free again.
      await store.datasets.markDeleted(a.id);
      expect(await store.datasets.getByTrackingId(org.id, 'shared')).toBeUndefined();
      const c = await newDataset(org.id, 'shared');
      expect(await store.datasets.getByTrackingId(org.id, 'shared')).toEqual(c);
      await store.datasets.markDeleted(c.id);
      expect((await store.datasets.update(b.id, { trackingId: 'shared' })).trackingId).toBe('shared');
    });

    it('lets one of concurrent creations with one tracking id through, the others get duplicate_tracking_id', async () => {
      const { organization: org } = await newUser('c@example.com');
      for (let round = 0; round < 4; round++) {
        const trackingId = `race-${round}`;
        const settled = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => newDataset(org.id, trackingId, `n${i}`)));
        const { ok, errors } = outcomes(settled);
        expect(ok).toHaveLength(1);
        expect(errors).toEqual(
          Array.from({ length: 5 }, () => ({
            code: 'duplicate_tracking_id',
            message: `A dataset with tracking_id "${trackingId}" already exists in organization ${org.id}`,
          })),
        );
        expect(await store.datasets.getByTrackingId(org.id, trackingId)).toEqual(ok[0]);
      }
      expect((await store.datasets.listByOrganization(org.id, 100, 0)).length).toBe(4);
    });

    it('lets one of concurrent updates (and a creation) to one tracking id through', async () => {
      const { organization: org } = await newUser('cu@example.com');
      const datasets = await Promise.all(Array.from({ length: 4 }, (_, i) => newDataset(org.id, `own-${i}`)));
      for (let round = 0; round < 4; round++) {
        const trackingId = `wanted-${round}`;
        const settled = await Promise.allSettled<unknown>([
          ...datasets.map((d) => store.datasets.update(d.id, { trackingId })),
          newDataset(org.id, trackingId),
        ]);
        const { ok, errors } = outcomes(settled);
        expect(ok).toHaveLength(1);
        expect(errors).toEqual(
          Array.from({ length: 4 }, () => ({
            code: 'duplicate_tracking_id',
            message: `A dataset with tracking_id "${trackingId}" already exists in organization ${org.id}`,
          })),
        );
        expect((await store.datasets.getByTrackingId(org.id, trackingId))!.id).toBe((ok[0] as { id: string }).id);
      }
    });

    it('makes a deleted dataset, or one of a deleted organization, invisible', async () => {
      const { user, organization: org } = await newUser('del@example.com');
      const other = await store.organizations.create({ name: 'other', ownerUserId: user.id });
      const a = await newDataset(org.id, 'a');
      const b = await newDataset(org.id, 'b');
      const c = await newDataset(other.id, 'c');
      expect(await store.datasets.listIds()).toEqual(byAge([a, b, c]).map((d) => d.id));
      await store.datasets.markDeleted(a.id);
      expect(await store.datasets.get(a.id)).toBeUndefined();
      expect(await store.datasets.getByTrackingId(org.id, 'a')).toBeUndefined();
      await expectQuarryError(store.datasets.update(a.id, { name: 'x' }), 'not_found', `Not Found: dataset ${a.id} does not exist`);
      expect(await store.datasets.listDeleted()).toEqual([a.id]);
      expect(await store.datasets.listIds()).toEqual(byAge([b, c]).map((d) => d.id));
      expect((await store.datasets.idsOfOrganization(org.id)).sort()).toEqual([a.id, b.id].sort());

      await store.organizations.update(other.id, { deleted: true });
      expect(await store.datasets.get(c.id)).toBeUndefined();
      expect(await store.datasets.listIds()).toEqual([b.id]);
      // Flagging the organization flags none of its datasets.
      expect(await store.datasets.listDeleted()).toEqual([a.id]);
      expect(await store.datasets.idsOfOrganization(other.id)).toEqual([c.id]);
    });

    it('lists an organization\'s live datasets oldest first, with chunk counts, by page', async () => {
      const { organization: org } = await newUser('l@example.com');
      const other = await store.organizations.create({ name: 'other' });
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await newDataset(org.id, `l${i}`, `n${i}`));
      await newDataset(other.id, 'x');
      await store.chunks.createMany(made[1]!.id, [{ chunkHtml: 'a' }, { chunkHtml: 'b' }]);
      await store.chunks.createMany(made[3]!.id, [{ chunkHtml: 'c' }]);
      await store.datasets.markDeleted(made[2]!.id);
      const live = byAge(made.filter((_, i) => i !== 2));
      const counts = new Map([[made[1]!.id, 2], [made[3]!.id, 1]]);
      const expected = live.map((d) => ({ dataset: d, chunkCount: counts.get(d.id) ?? 0 }));
      expect(await store.datasets.listByOrganization(org.id, 100, 0)).toEqual(expected);
      expect(await store.datasets.listByOrganization(org.id, 2, 0)).toEqual(expected.slice(0, 2));
      expect(await store.datasets.listByOrganization(org.id, 2, 2)).toEqual(expected.slice(2, 4));
      expect(await store.datasets.listByOrganization(org.id, 2, 4)).toEqual([]);
      expect(await store.datasets.listByOrganization(org.id, 0, 0)).toEqual([]);
      expect(await store.datasets.chunkCount(made[1]!.id)).toBe(2);
      expect(await store.datasets.chunkCount(made[0]!.id)).toBe(0);
    });

    it('counts tags, most used first, ties bytewise, by page', async () => {
      const { organization: org } = await newUser('tags@example.com');
      const ds = await newDataset(org.id);
      const other = await newDataset(org.id);
      // Counts: common 3, then a tie of 2 (B, a, b, é in byte order), then a tie of 1.
      await store.chunks.createMany(ds.id, [
        { chunkHtml: '1', tagSet: ['common', 'b', 'a', 'Z'] },
        { chunkHtml: '2', tagSet: ['common', 'B', 'é', 'a'] },
        { chunkHtml: '3', tagSet: ['common', 'b', 'é', 'B', '_x', '10', '9'] },
        { chunkHtml: '4', tagSet: [] },
        { chunkHtml: '5' },
      ]);
      await store.chunks.createMany(other.id, [{ chunkHtml: 'o', tagSet: ['common', 'Z', 'Z2'] }]);
      const all = [
        { tag: 'common', count: 3 },
        { tag: 'B', count: 2 },
        { tag: 'a', count: 2 },
        { tag: 'b', count: 2 },
        { tag: 'é', count: 2 },
        { tag: '10', count: 1 },
        { tag: '9', count: 1 },
        { tag: 'Z', count: 1 },
        { tag: '_x', count: 1 },
      ];
      expect(await store.datasets.tags(ds.id, 1, 100)).toEqual({ tags: all, total: 9 });
      expect(await store.datasets.tags(ds.id, 1, 4)).toEqual({ tags: all.slice(0, 4), total: 9 });
      expect(await store.datasets.tags(ds.id, 2, 4)).toEqual({ tags: all.slice(4, 8), total: 9 });
      expect(await store.datasets.tags(ds.id, 3, 4)).toEqual({ tags: all.slice(8), total: 9 });
      expect(await store.datasets.tags(ds.id, 4, 4)).toEqual({ tags: [], total: 9 });
      const empty = await newDataset(org.id);
      expect(await store.datasets.tags(empty.id, 1, 10)).toEqual({ tags: [], total: 0 });
    });

    it('clears every chunk and group of a dataset, logging each chunk deletion, and nothing of another dataset', async () => {
      const { organization: org } = await newUser('clear@example.com');
      const ds = await newDataset(org.id);
      const other = await newDataset(org.id);
      // More than one slice (PURGE_SLICE_ROWS = 1000).
      const chunks = await store.chunks.createMany(
        ds.id,
        Array.from({ length: 1005 }, (_, i) => ({ chunkHtml: `c${i}`, trackingId: `t${i}`, tagSet: ['x'] })),
      );
      const kept = await store.chunks.createMany(other.id, [{ chunkHtml: 'k1', tagSet: ['x'] }, { chunkHtml: 'k2' }]);
      const [group] = await store.groups.createMany(ds.id, [{ name: 'g', trackingId: 'g' }], false);
      await store.groups.addChunk(ds.id, group!.id, chunks[0]!.id);
      const [otherGroup] = await store.groups.createMany(other.id, [{ name: 'og' }], false);
      await store.groups.addChunk(other.id, otherGroup!.id, kept[0]!.id);
      const seqBefore = await store.changeLog.head();

      await store.datasets.clear(ds.id);

      expect(await store.datasets.chunkCount(ds.id)).toBe(0);
      expect(await store.chunks.get(ds.id, { trackingId: 't0' })).toBeUndefined();
      expect((await store.groups.list(ds.id, 1, 10)).total).toBe(0);
      expect(await store.datasets.tags(ds.id, 1, 10)).toEqual({ tags: [], total: 0 });
      const logged = await store.changeLog.since(ds.id, seqBefore, 10_000);
      expect(logged.every((e) => e.op === 'delete' && e.datasetId === ds.id)).toBe(true);
      expect(logged.map((e) => e.chunkId).sort()).toEqual(chunks.map((c) => c.id).sort());
      expect(new Set(logged.map((e) => e.seq)).size).toBe(logged.length);
      // The dataset itself stays, live.
      expect(await store.datasets.get(ds.id)).toEqual(ds);
      // The other dataset is untouched.
      expect(await store.datasets.chunkCount(other.id)).toBe(2);
      expect(await store.changeLog.since(other.id, seqBefore, 10)).toEqual([]);
      expect((await store.groups.chunks(otherGroup!.id, 1, 10)).chunks.map((c) => c.id)).toEqual([kept[0]!.id]);
      // A cleared dataset takes new chunks, tracking ids included.
      await store.chunks.createMany(ds.id, [{ chunkHtml: 'again', trackingId: 't0' }]);
      expect(await store.datasets.chunkCount(ds.id)).toBe(1);
    });
  });
});

describe('postgres store: orderings ignore the database collation', () => {
  it('sorts tags bytewise in a database whose default collation is en-US', async () => {
    // ICU's en-US orders 'a' before 'B' (C order is the reverse): expressions the schema's
    // COLLATE "C" columns do not cover (tags out of jsonb) must not follow it.
    const name = `quarry_t_icu_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: inject('pgUrl') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
      const url = new URL(inject('pgUrl'));
      url.pathname = `/${name}`;
      const store = await openPgStore(url.toString(), { poolSize: 2 });
      try {
        const ordered = (await store.db.get<{ o: string }>("SELECT string_agg(x, ',' ORDER BY x) AS o FROM (VALUES ('a'), ('B')) v(x)"))!.o;
        expect(ordered, 'the database sorts text as en-US').toBe('a,B');
        const org = await store.organizations.create({ name: 'o' });
        const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
        await store.chunks.createMany(ds.id, [{ chunkHtml: '1', tagSet: ['b', 'a', 'B', 'A', '_'] }]);
        expect((await store.datasets.tags(ds.id, 1, 10)).tags.map((t) => t.tag)).toEqual(['A', 'B', '_', 'a', 'b']);
      } finally {
        await store.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
