/**
 * Contract of the RAG repositories on both stores: topics (create, get, update, delete, clone,
 * listByOwner, each confined to its dataset, 404 for what is not the dataset's live topic),
 * messages (append numbers live messages 1..n, a replaced tail is flagged deleted in the same
 * transaction, a failing append changes no row, concurrent appends never share a sort order),
 * RAG analytics records (idempotent by id, newest first, retention), and purges that take all of
 * it along. Messages are checked against a model of the conversation (a plain array); unchanged
 * stores against a snapshot of every row read behind the store's back.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { ChatRole, MessageRecord, RagRecord } from '../../core/domain/rag.js';
import type { NewMessage, Store } from '../../store/repository.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { openSqliteStore, sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { withWriteThread } from '../../store/sqlite/threaded-store.js';
import { openTestStore, STORE_KINDS, type TestStore } from '../helpers/both-stores.js';
import { countRows, queryStore, snapshotStore } from '../helpers/store-snapshot.js';

/** Whether a promise rejected with a QuarryError of this HTTP status. */
const rejectsWith = (status: number) => (e: unknown) => e instanceof QuarryError && e.httpStatus === status;

/** A RAG record; `over` replaces fields. */
const rag = (datasetId: string, over: Partial<RagRecord> = {}): RagRecord => ({
  id: randomUUID(),
  datasetId,
  ragType: 'chosen_chunks',
  userMessage: 'what causes scurvy?',
  searchId: null,
  topicId: null,
  results: [
    { id: randomUUID(), score: 0 },
    { id: randomUUID(), score: 0 },
  ],
  llmResponse: 'Vitamin C deficiency [1].',
  topScore: 0,
  userId: 'user-1',
  metadata: { source: 'test', n: [1, 2] },
  promptTokens: 120,
  completionTokens: 9,
  latencyMs: 812.5,
  createdAt: 1_700_000_000_000,
  ...over,
});

const say = (role: ChatRole, content: string, tokens: Partial<NewMessage> = {}): NewMessage => ({ role, content, ...tokens });

/** What `list` must answer for a conversation model: the live messages' role and content, numbered 1..n. */
const expected = (model: readonly NewMessage[]) => model.map((m, i) => ({ sortOrder: i + 1, role: m.role, content: m.content, deleted: false }));
const shape = (messages: readonly MessageRecord[]) => messages.map((m) => ({ sortOrder: m.sortOrder, role: m.role, content: m.content, deleted: m.deleted }));

/** A seeded generator (mulberry32), so a failing sequence of operations can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(STORE_KINDS)('%s store: topics, messages and RAG records', (kind) => {
  let t: TestStore;
  let store: Store;
  let org: string;
  let ds: string;
  let other: string;
  beforeEach(async () => {
    t = await openTestStore(kind);
    store = t.store;
    org = (await store.organizations.create({ name: 'o' })).id;
    ds = (await store.datasets.create({ organizationId: org, name: 'a', trackingId: null, serverConfiguration: {} })).id;
    other = (await store.datasets.create({ organizationId: org, name: 'b', trackingId: null, serverConfiguration: {} })).id;
  });
  afterEach(async () => {
    await t.dispose();
  });

  const topic = (datasetId: string, ownerId = 'owner-1', name = 'chat', metadata: unknown = null) =>
    store.topics.create({ datasetId, name, ownerId, metadata });

  it('creates a topic and reads it back in its dataset only', async () => {
    const before = Date.now();
    const a = await topic(ds, 'owner-1', 'Scurvy', { tags: ['a', 'ü'], n: 1.5 });
    expect(a).toEqual({
      id: expect.any(String),
      datasetId: ds,
      name: 'Scurvy',
      ownerId: 'owner-1',
      metadata: { tags: ['a', 'ü'], n: 1.5 },
      deleted: false,
      createdAt: a.createdAt,
      updatedAt: a.createdAt,
    });
    expect(a.createdAt).toBeGreaterThanOrEqual(before);
    expect(await store.topics.get(ds, a.id)).toEqual(a);
    expect(await store.topics.get(other, a.id)).toBeUndefined();
    expect(await store.topics.get(ds, randomUUID())).toBeUndefined();
    const bare = await topic(ds, 'owner-2', 'x', undefined);
    expect((await store.topics.get(ds, bare.id))!.metadata).toBeNull();
  });

  it('refuses a topic of a dataset that does not exist with 404, storing nothing', async () => {
    const before = await snapshotStore(t.loc);
    await expect(topic(randomUUID())).rejects.toSatisfy(rejectsWith(404));
    expect(await snapshotStore(t.loc)).toEqual(before);
  });

  it('updates the name and metadata of a live topic of the dataset, and 404s otherwise', async () => {
    const a = await topic(ds, 'owner-1', 'old', { keep: true });
    const renamed = await store.topics.update(ds, a.id, { name: 'new' });
    expect(renamed).toEqual({ ...a, name: 'new', updatedAt: renamed.updatedAt });
    expect(renamed.updatedAt).toBeGreaterThanOrEqual(a.updatedAt);
    expect(await store.topics.get(ds, a.id)).toEqual(renamed);
    const meta = await store.topics.update(ds, a.id, { metadata: { keep: false } });
    expect(meta).toEqual({ ...renamed, metadata: { keep: false }, updatedAt: meta.updatedAt });
    expect(await store.topics.get(ds, a.id)).toEqual(meta);

    const before = await snapshotStore(t.loc);
    await expect(store.topics.update(other, a.id, { name: 'stolen' })).rejects.toSatisfy(rejectsWith(404));
    await expect(store.topics.update(ds, randomUUID(), { name: 'x' })).rejects.toSatisfy(rejectsWith(404));
    expect(await snapshotStore(t.loc)).toEqual(before);
  });

  it('deletes a topic with its messages, once, and never another dataset\'s', async () => {
    const a = await topic(ds);
    const b = await topic(ds);
    await store.messages.append(ds, a.id, [say('user', 'q1'), say('assistant', 'a1')]);
    await store.messages.append(ds, a.id, [say('assistant', 'a1 again')], 2);
    await store.messages.append(ds, b.id, [say('user', 'kept')]);

    const before = await snapshotStore(t.loc);
    await expect(store.topics.delete(other, a.id)).rejects.toSatisfy(rejectsWith(404));
    expect(await snapshotStore(t.loc)).toEqual(before);

    await store.topics.delete(ds, a.id);
    expect(await store.topics.get(ds, a.id)).toBeUndefined();
    await expect(store.messages.list(ds, a.id)).rejects.toSatisfy(rejectsWith(404));
    // Its live and flagged messages are gone; the other topic's stay.
    expect(await countRows(t.loc, 'messages', 'topic_id = ?', a.id)).toBe(0);
    expect(shape(await store.messages.list(ds, b.id))).toEqual(expected([say('user', 'kept')]));
    await expect(store.topics.delete(ds, a.id)).rejects.toSatisfy(rejectsWith(404));
    await expect(store.topics.delete(ds, randomUUID())).rejects.toSatisfy(rejectsWith(404));
  });

  it('clones a topic with its live messages (new ids, same sort orders), and the two live apart', async () => {
    const a = await topic(ds, 'owner-1', 'source', { k: 1 });
    await store.messages.append(ds, a.id, [say('system', 's'), say('user', 'q1'), say('assistant', 'a1', { promptTokens: 10, completionTokens: 3 })]);
    // The third message is replaced: the flagged one must not come along.
    await store.messages.append(ds, a.id, [say('assistant', 'a1 better', { promptTokens: 11, completionTokens: 4 })], 3);
    const sourceMessages = await store.messages.list(ds, a.id);

    const copy = await store.topics.clone(ds, a.id, { ownerId: 'owner-2' });
    expect(copy).toEqual({ ...a, id: copy.id, ownerId: 'owner-2', createdAt: copy.createdAt, updatedAt: copy.updatedAt });
    expect(copy.id).not.toBe(a.id);
    expect(await store.topics.get(ds, copy.id)).toEqual(copy);
    const copied = await store.messages.list(ds, copy.id);
    const strip = (m: MessageRecord) => ({ sortOrder: m.sortOrder, role: m.role, content: m.content, promptTokens: m.promptTokens, completionTokens: m.completionTokens, datasetId: m.datasetId });
    expect(copied.map(strip)).toEqual(sourceMessages.map(strip));
    expect(copied.every((m) => m.topicId === copy.id)).toBe(true);
    expect(new Set([...copied, ...sourceMessages].map((m) => m.id)).size).toBe(copied.length * 2);
    expect(await countRows(t.loc, 'messages', 'topic_id = ?', copy.id)).toBe(3);

    const named = await store.topics.clone(ds, a.id, { name: 'renamed' });
    expect(named).toMatchObject({ name: 'renamed', ownerId: 'owner-1', metadata: { k: 1 } });

    // Appending to the copy leaves the source as it was.
    await store.messages.append(ds, copy.id, [say('user', 'only in the copy')]);
    expect(await store.messages.list(ds, a.id)).toEqual(sourceMessages);
    expect(await store.messages.list(ds, copy.id)).toHaveLength(4);

    const before = await snapshotStore(t.loc);
    await expect(store.topics.clone(other, a.id, {})).rejects.toSatisfy(rejectsWith(404));
    await expect(store.topics.clone(ds, randomUUID(), {})).rejects.toSatisfy(rejectsWith(404));
    expect(await snapshotStore(t.loc)).toEqual(before);
    // A topic without messages clones too.
    const empty = await topic(ds);
    expect(await store.messages.list(ds, (await store.topics.clone(ds, empty.id, {})).id)).toEqual([]);
  });

  it('lists an owner\'s live topics of the dataset, newest first (ties by id)', async () => {
    const mine = [];
    for (let i = 0; i < 6; i++) {
      mine.push(await topic(ds, 'owner-1', `t${i}`));
      await topic(ds, 'owner-2', `theirs${i}`);
      await topic(other, 'owner-1', `elsewhere${i}`);
      // Some share a millisecond, some do not.
      if (i % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await store.topics.delete(ds, mine[2]!.id);
    const live = mine.filter((_, i) => i !== 2);
    const order = [...live].sort((x, y) => y.createdAt - x.createdAt || Buffer.compare(Buffer.from(x.id), Buffer.from(y.id)));
    expect(await store.topics.listByOwner(ds, 'owner-1')).toEqual(order);
    expect((await store.topics.listByOwner(ds, 'owner-2')).every((x) => x.ownerId === 'owner-2' && x.datasetId === ds)).toBe(true);
    expect(await store.topics.listByOwner(ds, 'nobody')).toEqual([]);
    expect(await store.topics.listByOwner(randomUUID(), 'owner-1')).toEqual([]);
  });

  it('appends messages numbered 1..n, and bumps the topic\'s updated_at', async () => {
    const a = await topic(ds);
    const first = await store.messages.append(ds, a.id, [say('system', 'be brief'), say('user', 'q1')]);
    expect(first).toEqual([
      expect.objectContaining({ topicId: a.id, datasetId: ds, sortOrder: 1, role: 'system', content: 'be brief', deleted: false, promptTokens: 0, completionTokens: 0 }),
      expect.objectContaining({ sortOrder: 2, role: 'user', content: 'q1' }),
    ]);
    const second = await store.messages.append(ds, a.id, [say('assistant', 'a1', { promptTokens: 42, completionTokens: 7 })]);
    expect(second).toEqual([expect.objectContaining({ sortOrder: 3, promptTokens: 42, completionTokens: 7 })]);
    // What append answered is what is stored.
    expect(await store.messages.list(ds, a.id)).toEqual([...first, ...second]);
    expect((await store.topics.get(ds, a.id))!.updatedAt).toBeGreaterThanOrEqual(second[0]!.createdAt);
    expect(await store.messages.append(ds, a.id, [])).toEqual([]);
    expect(await store.messages.list(ds, a.id)).toHaveLength(3);
    // Token counts as the INTEGER columns hold them: whole, 0..2^31-1.
    const odd = await store.messages.append(ds, a.id, [say('assistant', 'x', { promptTokens: 1e12, completionTokens: 2.6 }), say('assistant', 'y', { promptTokens: -5, completionTokens: Number.NaN })]);
    expect(odd.map((m) => [m.promptTokens, m.completionTokens])).toEqual([[2 ** 31 - 1, 3], [0, 0]]);
    expect((await store.messages.list(ds, a.id)).slice(3)).toEqual(odd);
  });

  it('gets a live message of a live topic by id, in its dataset only', async () => {
    const a = await topic(ds);
    const [q, answer] = await store.messages.append(ds, a.id, [say('user', 'q1'), say('assistant', 'a1', { promptTokens: 3 })]);
    expect(await store.messages.get(ds, answer!.id)).toEqual(answer);
    expect(await store.messages.get(other, answer!.id)).toBeUndefined();
    expect(await store.messages.get(ds, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
    // Replaced from sort order 2: the old answer is gone, its replacement is found.
    const [again] = await store.messages.append(ds, a.id, [say('assistant', 'a2')], 2);
    expect(await store.messages.get(ds, answer!.id)).toBeUndefined();
    expect(await store.messages.get(ds, again!.id)).toEqual(again);
    expect(await store.messages.get(ds, q!.id)).toEqual(q);
    await store.topics.delete(ds, a.id);
    expect(await store.messages.get(ds, q!.id)).toBeUndefined();
  });

  it('keeps live messages numbered 1..n through any sequence of appends and tail replacements (model oracle)', async () => {
    const next = random(kind === 'sqlite' ? 13 : 31);
    const a = await topic(ds);
    const model: NewMessage[] = [];
    const roles: ChatRole[] = ['system', 'user', 'assistant'];
    for (let step = 0; step < 40; step++) {
      const batch = Array.from({ length: Math.floor(next() * 3) }, (_, i) => say(roles[Math.floor(next() * 3)]!, `m${step}.${i} ${next().toString(36)}`));
      // Undefined (append), within the conversation (replace a tail), past its end, or below 1.
      const pick = next();
      const from = pick < 0.4 ? undefined : pick < 0.85 ? 1 + Math.floor(next() * (model.length + 1)) : pick < 0.95 ? model.length + 5 : 0;
      if (from !== undefined) model.splice(Math.max(0, from - 1));
      const stored = await store.messages.append(ds, a.id, batch, from);
      expect(shape(stored)).toEqual(expected([...model, ...batch]).slice(model.length));
      model.push(...batch);
      expect(shape(await store.messages.list(ds, a.id)), `step ${step}`).toEqual(expected(model));
    }
    // Every replaced message is kept, flagged deleted.
    const all = await countRows(t.loc, 'messages', 'topic_id = ?', a.id);
    expect(await countRows(t.loc, 'messages', 'topic_id = ? AND deleted = 1', a.id)).toBe(all - model.length);
  });

  it('stores nothing of an append that fails, not even the tail it replaced', async () => {
    const a = await topic(ds);
    await store.messages.append(ds, a.id, [say('user', 'q1'), say('assistant', 'a1'), say('user', 'q2')]);
    const listed = await store.messages.list(ds, a.id);
    const before = await snapshotStore(t.loc);
    // The second message breaks the role CHECK after the tail was flagged and the first inserted.
    const bad = [say('assistant', 'fine'), { role: 'robot' as ChatRole, content: 'no' }];
    await expect(store.messages.append(ds, a.id, bad, 2)).rejects.toSatisfy(rejectsWith(400));
    expect(await snapshotStore(t.loc)).toEqual(before);
    expect(await store.messages.list(ds, a.id)).toEqual(listed);
    if (kind === 'postgres') {
      // Text PostgreSQL cannot hold fails in the statement, after the tail was flagged.
      await expect(store.messages.append(ds, a.id, [say('user', 'nul \u0000 here')], 1)).rejects.toSatisfy(rejectsWith(400));
      expect(await snapshotStore(t.loc)).toEqual(before);
    }
  });

  it('refuses messages of a topic that is not the dataset\'s with 404, storing nothing', async () => {
    const a = await topic(ds);
    await store.messages.append(ds, a.id, [say('user', 'q')]);
    const before = await snapshotStore(t.loc);
    await expect(store.messages.append(other, a.id, [say('user', 'x')])).rejects.toSatisfy(rejectsWith(404));
    await expect(store.messages.append(ds, randomUUID(), [say('user', 'x')])).rejects.toSatisfy(rejectsWith(404));
    await expect(store.messages.append(other, a.id, [], 1)).rejects.toSatisfy(rejectsWith(404));
    await expect(store.messages.list(other, a.id)).rejects.toSatisfy(rejectsWith(404));
    await expect(store.messages.list(ds, randomUUID())).rejects.toSatisfy(rejectsWith(404));
    await expect(store.messages.append(ds, a.id, [say('user', 'x')], Number.NaN)).rejects.toSatisfy(rejectsWith(400));
    expect(await snapshotStore(t.loc)).toEqual(before);
    expect(await store.messages.list(ds, (await topic(ds)).id)).toEqual([]);
  });

  it('gives 20 concurrent appends to one topic 20 distinct sort orders', async () => {
    const a = await topic(ds);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.messages.append(ds, a.id, [say(i % 2 ? 'assistant' : 'user', `c${i}`)])),
    );
    const orders = results.map(([m]) => m!.sortOrder);
    expect([...orders].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const listed = await store.messages.list(ds, a.id);
    expect(listed.map((m) => m.sortOrder)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // Each message is stored where its append said.
    expect(new Map(listed.map((m) => [m.sortOrder, m.content]))).toEqual(new Map(results.map(([m]) => [m!.sortOrder, m!.content])));
  });

  it('gives concurrent two-message appends and tail replacements gap-free sort orders', async () => {
    const a = await topic(ds);
    await store.messages.append(ds, a.id, [say('user', 'q0'), say('assistant', 'a0')]);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.messages.append(ds, a.id, [say('user', `q${i + 1}`), say('assistant', `a${i + 1}`)], i % 3 === 2 ? 3 : undefined),
      ),
    );
    const listed = await store.messages.list(ds, a.id);
    expect(listed.map((m) => m.sortOrder)).toEqual(listed.map((_, i) => i + 1));
    // Appends kept their pairs together: a question is always followed by its answer.
    for (let i = 0; i < listed.length; i += 2) expect(listed[i + 1]!.content).toBe(`a${listed[i]!.content.slice(1)}`);
  });

  it('stores RAG records once per id and reads them back as written', async () => {
    const full = rag(ds, { ragType: 'all_chunks', searchId: randomUUID(), topicId: randomUUID(), results: [{ id: 'x', score: 0.75 }], topScore: 0.75 });
    const bare = rag(ds, { userId: null, metadata: null, results: [] });
    expect(await store.analytics.insertRags([])).toBe(0);
    expect(await store.analytics.insertRags([full, bare, { ...full, llmResponse: 'second' }])).toBe(2);
    expect(await store.analytics.getRag(ds, full.id)).toEqual(full);
    expect(await store.analytics.getRag(ds, bare.id)).toEqual(bare);
    expect(await store.analytics.insertRags([{ ...bare, llmResponse: 'again' }, full])).toBe(0);
    expect(await store.analytics.getRag(ds, bare.id)).toEqual(bare);
    expect(await store.analytics.insertRags([rag(ds), full])).toBe(1);
    expect(await store.analytics.getRag(other, full.id)).toBeUndefined();
    expect(await store.analytics.getRag(ds, randomUUID())).toBeUndefined();
    // What JSON could not carry: NaN and Infinity as 0.
    const odd = rag(ds, { topScore: Number.NaN, latencyMs: Number.POSITIVE_INFINITY });
    expect(await store.analytics.insertRags([odd])).toBe(1);
    expect(await store.analytics.getRag(ds, odd.id)).toEqual({ ...odd, topScore: 0, latencyMs: 0 });
    // Token counts the columns cannot hold are kept in range rather than failing the batch.
    const counts = rag(ds, { promptTokens: 2 ** 40, completionTokens: undefined as unknown as number });
    expect(await store.analytics.insertRags([counts])).toBe(1);
    expect(await store.analytics.getRag(ds, counts.id)).toEqual({ ...counts, promptTokens: 2 ** 31 - 1, completionTokens: 0 });
    // The columns for later analytics start empty.
    const [row] = await queryStore<{ query_rating: string | null; hallucination_score: number; detected_hallucinations: string }>(
      t.loc,
      'SELECT query_rating, hallucination_score, detected_hallucinations FROM rag_queries WHERE id = ?',
      full.id,
    );
    expect(row).toEqual({ query_rating: null, hallucination_score: 0, detected_hallucinations: '[]' });
  });

  it('lists a dataset\'s RAG records newest first, ties by id, by page', async () => {
    const records = [1000, 3000, 2000, 3000, 2000, 2000].map((createdAt) => rag(ds, { createdAt }));
    await store.analytics.insertRags(records);
    await store.analytics.insertRags([rag(other, { createdAt: 5000 })]);
    const order = [...records].sort((x, y) => y.createdAt - x.createdAt || Buffer.compare(Buffer.from(x.id), Buffer.from(y.id)));
    expect(await store.analytics.listRags(ds, { limit: 10, offset: 0 })).toEqual(order);
    expect(await store.analytics.listRags(ds, { limit: 4, offset: 0 })).toEqual(order.slice(0, 4));
    expect(await store.analytics.listRags(ds, { limit: 4, offset: 4 })).toEqual(order.slice(4));
    expect(await store.analytics.listRags(ds, { limit: 0, offset: 0 })).toEqual([]);
    expect(await store.analytics.listRags(randomUUID(), { limit: 10, offset: 0 })).toEqual([]);
  });

  it('retention removes RAG records older than the cutoff with the other analytics records', async () => {
    const cutoff = 1_700_000_010_000;
    const old = Array.from({ length: 7 }, (_, i) => rag(i % 2 ? ds : other, { createdAt: cutoff - 1 - i }));
    const fresh = [rag(ds, { createdAt: cutoff }), rag(other, { createdAt: cutoff + 9 })];
    await store.analytics.insertRags([...old, ...fresh]);
    expect(await store.analytics.purgeBefore(cutoff, 3)).toBe(7);
    expect((await store.analytics.listRags(ds, { limit: 100, offset: 0 })).map((r) => r.id)).toEqual([fresh[0]!.id]);
    expect((await store.analytics.listRags(other, { limit: 100, offset: 0 })).map((r) => r.id)).toEqual([fresh[1]!.id]);
    expect(await store.analytics.purgeBefore(cutoff)).toBe(0);
  });

  /** A topic with messages (one replaced) and RAG records in `datasetId`. */
  const fill = async (datasetId: string): Promise<void> => {
    const a = await topic(datasetId);
    await store.messages.append(datasetId, a.id, [say('user', 'q'), say('assistant', 'a')]);
    await store.messages.append(datasetId, a.id, [say('assistant', 'a2')], 2);
    await store.topics.clone(datasetId, a.id, {});
    await store.analytics.insertRags([rag(datasetId, { topicId: a.id }), rag(datasetId, { createdAt: Date.now() })]);
  };
  const rowsOf = async (datasetId: string) => ({
    topics: await countRows(t.loc, 'topics', 'dataset_id = ?', datasetId),
    messages: await countRows(t.loc, 'messages', 'dataset_id = ?', datasetId),
    rag_queries: await countRows(t.loc, 'rag_queries', 'dataset_id = ?', datasetId),
  });

  it('a dataset purge removes its topics, messages and RAG records, and nothing of another dataset', async () => {
    await fill(ds);
    await fill(other);
    expect(await rowsOf(ds)).toEqual({ topics: 2, messages: 5, rag_queries: 2 });
    const kept = await rowsOf(other);
    await store.datasets.markDeleted(ds);
    expect(await store.datasets.purge(ds)).toBe(true);
    expect(await rowsOf(ds)).toEqual({ topics: 0, messages: 0, rag_queries: 0 });
    expect(await rowsOf(other)).toEqual(kept);
  });

  it('an organization purge removes the topics, messages and RAG records of all its datasets', async () => {
    const keepOrg = (await store.organizations.create({ name: 'keep' })).id;
    const keep = (await store.datasets.create({ organizationId: keepOrg, name: 'k', trackingId: null, serverConfiguration: {} })).id;
    await fill(ds);
    await fill(other);
    await fill(keep);
    const kept = await rowsOf(keep);
    await store.organizations.update(org, { deleted: true });
    expect(await store.organizations.purge(org)).toBe(true);
    for (const d of [ds, other]) expect(await rowsOf(d)).toEqual({ topics: 0, messages: 0, rag_queries: 0 });
    expect(await rowsOf(keep)).toEqual(kept);
  });
});

describe('sqlite store with its writes in a thread: topics, messages and RAG records', () => {
  const dirs: string[] = [];
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('runs every RAG write on the writer thread, with the plain store\'s answers and errors', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-rag-threaded-'));
    dirs.push(dir);
    const db: Db = openDatabase(dir);
    store = await withWriteThread(sqliteStoreOn(db, { readCacheBytes: 1 << 20 }), dir);
    const changes = (): number => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const org = await store.organizations.create({ name: 'o' });
    const ds = await store.datasets.create({ organizationId: org.id, name: 'd', trackingId: null, serverConfiguration: {} });
    const before = changes();

    const a = await store.topics.create({ datasetId: ds.id, name: 'n', ownerId: 'o1', metadata: { m: 1 } });
    // Read back at once on the caller's connection (reads pinned this turn must see the thread's write).
    store.pinReads();
    expect(await store.topics.get(ds.id, a.id)).toEqual(a);
    expect((await store.topics.update(ds.id, a.id, { name: 'renamed' })).name).toBe('renamed');
    const stored = await store.messages.append(ds.id, a.id, [say('user', 'q'), say('assistant', 'a', { promptTokens: 5 })]);
    expect(await store.messages.list(ds.id, a.id)).toEqual(stored);
    await store.messages.append(ds.id, a.id, [say('assistant', 'b')], 2);
    const copy = await store.topics.clone(ds.id, a.id, { ownerId: 'o2' });
    expect(shape(await store.messages.list(ds.id, copy.id))).toEqual(expected([say('user', 'q'), say('assistant', 'b')]));
    expect((await store.topics.listByOwner(ds.id, 'o2')).map((x) => x.id)).toEqual([copy.id]);
    // Errors cross the thread with their status.
    await expect(store.messages.append(ds.id, a.id, [{ role: 'robot' as ChatRole, content: 'x' }])).rejects.toSatisfy(rejectsWith(400));
    await expect(store.topics.update(ds.id, randomUUID(), { name: 'x' })).rejects.toSatisfy(rejectsWith(404));
    await store.topics.delete(ds.id, a.id);
    expect(await store.topics.get(ds.id, a.id)).toBeUndefined();
    const r = rag(ds.id);
    expect(await store.analytics.insertRags([r, r])).toBe(1);
    expect(await store.analytics.getRag(ds.id, r.id)).toEqual(r);
    expect(await store.analytics.purgeBefore(r.createdAt + 1)).toBe(1);
    // Not one row changed through the caller's own connection.
    expect(changes() - before).toBe(0);
    // And the same file, opened afresh, holds what was answered.
    const plain = openSqliteStore(dir);
    try {
      expect(await plain.topics.get(ds.id, copy.id)).toEqual(copy);
    } finally {
      await plain.close();
    }
  });
});
