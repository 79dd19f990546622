/**
 * A shard's metadata arrives as the store's JSON text (ShardDoc.metadataJson) and stays that one
 * string until a filter, a sort or a read needs it; then it is parsed once and kept. Oracle: a
 * twin shard fed the same metadata as parsed objects, as the PostgreSQL store and old snapshots
 * give it, answers every metadata filter and sort the same.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Condition, Filter } from '../../core/domain/filter.js';
import { FieldStore } from '../../workers/shard/filter/field-store.js';
import { commitShardSnapshot, decodeShard, prepareShardSnapshot, readShardSnapshot } from '../../workers/shard/persist/shard-snapshot.js';
import type { ShardDoc } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';
import { rng } from '../helpers/random-corpus.js';

const PARAMS = { k1: 0.9, b: 0.4 };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const base = (chunkId: string): ShardDoc => ({ chunkId, text: `alpha ${chunkId}`, trackingId: null, link: null, tagSet: [], numValue: null, timeStamp: null, lat: null, lon: null, groupIds: [] });

const BRANDS = ['acme', 'globex', 'initech', 'umbrella'];

/** Metadata of the kinds filters meet: numbers, numeric strings, dates, arrays, nested objects, booleans, or none. */
function metadataOf(r: () => number): unknown {
  if (r() < 0.1) return null;
  const m: Record<string, unknown> = { brand: BRANDS[Math.floor(r() * BRANDS.length)], price: Math.round(r() * 1000) / 10, stock: r() < 0.5 };
  if (r() < 0.5) m.tags = BRANDS.filter(() => r() < 0.4);
  if (r() < 0.5) m.dims = { w: Math.floor(r() * 10), label: `size ${Math.floor(r() * 3)}` };
  if (r() < 0.3) m.rank = String(Math.floor(r() * 5));
  if (r() < 0.4) m.updated = new Date(Date.UTC(2024, 0, 1 + Math.floor(r() * 300))).toISOString();
  return m;
}

const field = (f: Condition['field']): Condition => ({ field: f });
const only = (c: Condition): Filter => ({ must: [c], must_not: [], should: [] });

/** Metadata conditions of every kind the evaluator has (match, match_any, match_all, range, date_range, boolean), nested paths and arrays included. */
const FILTERS: Filter[] = [
  only(field({ field: 'metadata.brand', match_any: [{ text: 'acme' }, { text: 'initech' }] })),
  only(field({ field: 'metadata.brand', match: [{ text: 'tech' }] })),
  only(field({ field: 'metadata.tags', match_all: [{ text: 'acme' }, { text: 'globex' }] })),
  only(field({ field: 'metadata.price', range: { gte: { value: 20 }, lt: { value: 70 } } })),
  only(field({ field: 'metadata.dims.w', range: { gt: { value: 4 } } })),
  only(field({ field: 'metadata.dims.label', match_any: [{ text: 'size 1' }] })),
  only(field({ field: 'metadata.rank', match_any: [{ number: 3 }] })),
  only(field({ field: 'metadata.stock', boolean: { flag: true } })),
  only(field({ field: 'metadata.updated', date_range: { gte: { value: Date.UTC(2024, 3, 1) } } })),
  { must: [], must_not: [field({ field: 'metadata.brand', match_any: [{ text: 'acme' }] })], should: [] },
];

/** Two shards of the same chunks: one given each chunk's metadata as JSON text, the other as parsed objects. */
function twins(n: number, seed: number): { text: Shard; parsed: Shard; metadata: Map<string, unknown> } {
  const r = rng(seed);
  const text = new Shard(PARAMS);
  const parsed = new Shard(PARAMS);
  const metadata = new Map<string, unknown>();
  const docs = Array.from({ length: n }, (_, i) => {
    const m = metadataOf(r);
    metadata.set(`c${i}`, m);
    return { id: `c${i}`, m };
  });
  text.apply(docs.map((d) => ({ ...base(d.id), metadataJson: d.m === null ? null : JSON.stringify(d.m) })), [], 1);
  parsed.apply(docs.map((d) => ({ ...base(d.id), metadata: d.m })), [], 1);
  return { text, parsed, metadata };
}

const scrollAll = (s: Shard, filter: Filter | null, sortField: string | null = null, descending = false) => s.scroll(filter, null, 10_000, sortField, descending);

/** The metadata a snapshot takes of the chunk at `id` ({@link FieldStore.doc}): its text, or parsed once read. */
const kept = (store: FieldStore, id: number): Pick<ShardDoc, 'metadata' | 'metadataJson'> | undefined => {
  const doc = store.doc(id, () => 'c');
  return doc && ('metadataJson' in doc ? { metadataJson: doc.metadataJson } : { metadata: doc.metadata });
};

describe('metadata kept as JSON text in the field store', () => {
  it('keeps the text as given until it is read, then parses it once', () => {
    const store = new FieldStore();
    const json = '{"brand":"acme","price":12.5,"tags":["a","b"]}';
    store.set(3, { ...base('c3'), metadataJson: json });
    expect(kept(store, 3)?.metadataJson).toBe(json);
    const first = store.metadata(3);
    expect(first).toEqual({ brand: 'acme', price: 12.5, tags: ['a', 'b'] });
    // Parsed once: the same object on every later read, and a snapshot takes it parsed.
    expect(store.metadata(3)).toBe(first);
    expect(kept(store, 3)).toEqual({ metadata: first });
    expect(kept(store, 3)?.metadata).toBe(first);
    // Ids without metadata, or past every array, read null.
    store.set(1, base('c1'));
    expect(store.metadata(1)).toBeNull();
    expect(kept(store, 1)).toEqual({ metadata: null });
    expect(store.metadata(999)).toBeNull();
  });

  it('takes parsed metadata too, and a rewrite or a removal leaves nothing of the old value in either form', () => {
    const store = new FieldStore();
    const object = { k: [1, 2] };
    store.set(0, { ...base('c0'), metadata: object });
    expect(store.metadata(0)).toBe(object);
    expect(kept(store, 0)?.metadata).toBe(object);
    // Text replacing an object, read before and after.
    store.set(0, { ...base('c0'), metadataJson: '{"k":"text"}' });
    expect(kept(store, 0)).toEqual({ metadataJson: '{"k":"text"}' });
    expect(store.metadata(0)).toEqual({ k: 'text' });
    // An object replacing parsed text, then text replacing text that was never read.
    store.set(0, { ...base('c0'), metadata: { k: 'object' } });
    expect(kept(store, 0)).toEqual({ metadata: { k: 'object' } });
    store.set(0, { ...base('c0'), metadataJson: '{"k":1}' });
    store.set(0, { ...base('c0'), metadataJson: '{"k":2}' });
    expect(store.metadata(0)).toEqual({ k: 2 });
    store.clear(0);
    expect(store.metadata(0)).toBeNull();
    store.set(0, base('c0'));
    expect(store.metadata(0)).toBeNull();
    expect(kept(store, 0)).toEqual({ metadata: null });
    // Text never read, then the chunk removed and its id given to a chunk without metadata.
    store.set(5, { ...base('c5'), metadataJson: '{"k":5}' });
    store.clear(5);
    expect(store.metadata(5)).toBeNull();
    store.set(5, base('c5b'));
    expect(kept(store, 5)).toEqual({ metadata: null });
    expect(store.metadata(5)).toBeNull();
    // Text that is JSON null is no metadata.
    store.set(2, { ...base('c2'), metadataJson: 'null' });
    expect(store.metadata(2)).toBeNull();
  });

  it('answers every metadata filter and sort as parsed metadata does', () => {
    for (const seed of [1, 2, 3]) {
      const { text, parsed, metadata } = twins(400, seed);
      for (const filter of FILTERS) {
        const got = scrollAll(text, filter).chunkIds;
        expect(got, `seed ${seed}, ${JSON.stringify(filter)}`).toEqual(scrollAll(parsed, filter).chunkIds);
        // Not vacuous: each filter keeps some chunks and drops others.
        expect(got.length, JSON.stringify(filter)).toBeGreaterThan(0);
        expect(got.length, JSON.stringify(filter)).toBeLessThan(metadata.size);
      }
      for (const descending of [false, true]) {
        expect(scrollAll(text, null, 'metadata.price', descending)).toEqual(scrollAll(parsed, null, 'metadata.price', descending));
      }
    }
  });

  it('answers the same after writes that replace and delete chunks between reads', () => {
    const { text, parsed } = twins(200, 7);
    const filter = FILTERS[0]!;
    expect(scrollAll(text, filter)).toEqual(scrollAll(parsed, filter));
    // c0..c49 change brand (some were parsed by the read above), c50..c59 go.
    const changed = Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, m: { brand: i % 2 === 0 ? 'acme' : 'globex' } }));
    const gone = Array.from({ length: 10 }, (_, i) => `c${50 + i}`);
    text.apply(changed.map((d) => ({ ...base(d.id), metadataJson: JSON.stringify(d.m) })), gone, 2);
    parsed.apply(changed.map((d) => ({ ...base(d.id), metadata: d.m })), gone, 2);
    const after = scrollAll(text, filter).chunkIds;
    expect(after).toEqual(scrollAll(parsed, filter).chunkIds);
    expect(after).toEqual(expect.arrayContaining(['c0', 'c2']));
    expect(after).not.toContain('c1');
  });

  it('snapshots metadata in the form it is kept (text unparsed, parsed as objects) and loads both; an older snapshot holding only parsed metadata still loads', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-metajson-'));
    dirs.push(dir);
    const { text, parsed } = twins(300, 11);
    // A metadata filter reads (parses) every chunk; 100 chunks written after it are still text.
    scrollAll(text, only(field({ field: 'metadata.brand', match_any: [{ text: 'acme' }] })));
    const r = rng(12);
    const later = Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, m: { brand: BRANDS[i % BRANDS.length], price: Math.round(r() * 1000) / 10, stock: r() < 0.5 } }));
    text.apply(later.map((d) => ({ ...base(d.id), metadataJson: JSON.stringify(d.m) })), [], 2);
    parsed.apply(later.map((d) => ({ ...base(d.id), metadata: d.m })), [], 2);
    await commitShardSnapshot(prepareShardSnapshot(dir, 0, text));
    const back = readShardSnapshot(dir, 0, PARAMS)!;
    for (const filter of FILTERS) expect(scrollAll(back, filter)).toEqual(scrollAll(parsed, filter));

    // The same file as a build before this change wrote it: "metadata" objects, no "metadataJson".
    const raw = fs.readFileSync(path.join(dir, 'shard-0.bin'));
    const bm25Len = raw.readUInt32LE(8 + 4 + 8);
    const fieldsAt = 8 + 4 + 8 + 4 + bm25Len;
    const body = JSON.parse(raw.subarray(fieldsAt + 4).toString('utf8')) as { docs: Record<string, unknown>[] };
    // The chunks a read parsed go out parsed, the others as the text they still are.
    expect(body.docs.filter((d) => typeof d.metadataJson === 'string').map((d) => d.chunkId)).toEqual(later.map((d) => d.id));
    expect(body.docs.filter((d) => d.metadata !== null && typeof d.metadata === 'object').length).toBeGreaterThan(200);
    for (const d of body.docs) {
      if (typeof d.metadataJson === 'string') d.metadata = JSON.parse(d.metadataJson);
      delete d.metadataJson;
    }
    const json = Buffer.from(JSON.stringify(body), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length, 0);
    const old = decodeShard(Buffer.concat([raw.subarray(0, fieldsAt), length, json]), PARAMS);
    for (const filter of FILTERS) expect(scrollAll(old, filter)).toEqual(scrollAll(parsed, filter));
  });
});
