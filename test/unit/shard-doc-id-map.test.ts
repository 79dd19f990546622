import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DocIdMap } from '../../workers/shard/bm25/doc-id-map.js';

// The chunk-id table keeps ids as code units in a byte arena behind an open-addressing hash table:
// a plain Map model checks both directions after every step, through hash-table growth, deletions
// that shift probe runs, arena rewrites and a restore.

/** Chunk ids of every storage kind: ASCII, Latin-1, wide (CJK, emoji, a lone surrogate), empty. */
const idArb = fc.oneof(
  fc.constantFrom('', 'a', 'é', '東京', '😀', '\ud800', 'x\udc00y', 'ÿ'),
  fc.uuid(),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.nat(400).map((n) => `c${n}`),
);

type Op = { kind: 'add'; id: string } | { kind: 'del'; id: string } | { kind: 'recycle' };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: idArb.map((id) => ({ kind: 'add' as const, id })) },
  { weight: 2, arbitrary: idArb.map((id) => ({ kind: 'del' as const, id })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'recycle' as const }) },
);

function expectSame(map: DocIdMap, model: Map<string, number>, capacity: number): void {
  expect(map.size).toBe(model.size);
  expect(map.capacity).toBe(capacity);
  const byId = new Map([...model].map(([c, i]) => [i, c]));
  for (const [c, i] of model) expect(map.idOf(c)).toBe(i);
  for (let i = 0; i < capacity; i++) expect(map.chunkIdOf(i)).toBe(byId.get(i));
}

describe('DocIdMap', () => {
  it('maps both ways like a Map through adds, releases, id reuse and a restore', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
        const map = new DocIdMap();
        const model = new Map<string, number>();
        let tomb: number[] = [];
        let capacity = 0;
        for (const op of ops) {
          if (op.kind === 'add') {
            if (model.has(op.id)) {
              expect(() => map.allocate(op.id)).toThrow(/already mapped/);
              continue;
            }
            const id = map.allocate(op.id);
            capacity = Math.max(capacity, id + 1);
            expect([...model.values()]).not.toContain(id);
            model.set(op.id, id);
          } else if (op.kind === 'del') {
            const id = map.release(op.id);
            expect(id).toBe(model.get(op.id));
            if (id !== undefined) tomb.push(id);
            model.delete(op.id);
            expect(map.idOf(op.id)).toBeUndefined();
          } else {
            map.recycle(tomb);
            tomb = [];
          }
        }
        expectSame(map, model, capacity);
        // Ties in top-k heaps are broken by this order: JS string order, whatever the storage.
        for (const [c, i] of model) {
          for (const [d, j] of model) expect(Math.sign(map.compare(i, j))).toBe(c < d ? -1 : c > d ? 1 : 0);
        }
        const chunkIds = Array.from({ length: capacity }, (_, i) => map.chunkIdOf(i));
        const copy = DocIdMap.restore(chunkIds, map.freeIds());
        expectSame(copy, model, capacity);
        expect(Array.from(copy.freeIds())).toEqual(Array.from(map.freeIds()));
        // Giving back growth room and garbage keeps every id, and takes what the restore took.
        map.compactStorage();
        expectSame(map, model, capacity);
        expect(map.memoryBytes()).toBe(copy.memoryBytes());
        for (const [c, i] of [...model]) {
          expect(map.release(c)).toBe(i);
          model.delete(c);
        }
        expectSame(map, model, capacity);
      }),
      { numRuns: 200 },
    );
  });

  it('stays exact at scale: many ids, most released, the arena rewritten', () => {
    const map = new DocIdMap();
    const model = new Map<string, number>();
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 20_000; i++) {
        const c = `${round}-${i}-${i % 7 === 0 ? 'ü東' : 'x'}`;
        model.set(c, map.allocate(c));
      }
      const dead: number[] = [];
      for (const [c, id] of model) {
        if ((id * 2654435761) % 10 < 7) {
          expect(map.release(c)).toBe(id);
          model.delete(c);
          dead.push(id);
        }
      }
      map.recycle(dead);
    }
    for (const [c, id] of model) expect(map.idOf(c)).toBe(id);
    for (const [c, id] of model) expect(map.chunkIdOf(id)).toBe(c);
    expect(map.size).toBe(model.size);
    // Well under a Map's ~93 bytes a UUID.
    expect(map.memoryBytes() / map.capacity).toBeLessThan(80);
  });

  it('reclaims released ids\' bytes: churn at a constant live count stops growing memory', () => {
    const map = new DocIdMap();
    const live: string[] = [];
    const sizes: number[] = [];
    for (let round = 0; round < 30; round++) {
      const dead: number[] = [];
      for (const c of live.splice(0)) dead.push(map.release(c)!);
      map.recycle(dead);
      for (let i = 0; i < 5_000; i++) {
        const c = `round-${round}-chunk-${i}`;
        map.allocate(c);
        live.push(c);
      }
      sizes.push(map.memoryBytes());
    }
    expect(map.capacity).toBe(5_000);
    expect(sizes.at(-1)).toBe(sizes[10]);
    for (const c of live) expect(map.chunkIdOf(map.idOf(c)!)).toBe(c);
  });
});

describe('DocIdMap with UUIDs kept as 128 bits', () => {
  const hex = fc.constantFrom(...'0123456789abcdef');
  const digits = (n: number) => fc.array(hex, { minLength: n, maxLength: n }).map((a) => a.join(''));
  /** Canonical lowercase UUIDs, many sharing long prefixes (ties are decided late), and near misses kept as strings. */
  const lower = fc.tuple(fc.constantFrom('00000000', 'ffffffff', '0f0f0f0f', '9a9a9a9a'), digits(4), digits(4), digits(4), digits(12)).map((p) => p.join('-'));
  const anyUuid = fc.oneof(lower, fc.uuid(), digits(32).map((d) => `${d.slice(0, 8)}-${d.slice(8, 12)}-${d.slice(12, 16)}-${d.slice(16, 20)}-${d.slice(20)}`));
  const nearMiss = fc.oneof(
    anyUuid.map((u) => u.toUpperCase()),
    anyUuid.map((u) => u.slice(0, 35)),
    anyUuid.map((u) => `${u}0`),
    anyUuid.map((u) => u.replace(/-/g, '')),
    anyUuid.map((u) => `${u.slice(0, 8)}_${u.slice(9)}`),
    anyUuid.map((u) => `${u.slice(0, 20)}g${u.slice(21)}`),
    anyUuid.map((u) => `${u.slice(0, 3)}é${u.slice(4)}`),
  );
  const idsArb = fc.uniqueArray(fc.oneof({ weight: 5, arbitrary: anyUuid }, { weight: 2, arbitrary: nearMiss }, { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }), { maxLength: 60 });

  it('orders ids exactly as JS orders their strings, UUIDs, near misses and other strings mixed', () => {
    fc.assert(
      fc.property(idsArb, (ids) => {
        const map = new DocIdMap();
        const internal = ids.map((c) => map.allocate(c));
        for (let i = 0; i < ids.length; i++) {
          expect(map.chunkIdOf(internal[i]!)).toBe(ids[i]);
          expect(map.idOf(ids[i]!)).toBe(internal[i]);
          for (let j = 0; j < ids.length; j++) {
            const a = ids[i]!;
            const b = ids[j]!;
            expect(Math.sign(map.compare(internal[i]!, internal[j]!))).toBe(a < b ? -1 : a > b ? 1 : 0);
          }
        }
        // A UUID and its uppercase form are distinct chunk ids.
        for (const c of ids) if (c !== c.toUpperCase() && !ids.includes(c.toUpperCase())) expect(map.idOf(c.toUpperCase())).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a UUID in 16 bytes plus its kind byte and hash slot, far below its 36 arena bytes', () => {
    const map = new DocIdMap();
    const ids = Array.from({ length: 100_000 }, (_, i) => `${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-0000-7000-8000-${i.toString(16).padStart(12, '0')}`);
    for (const c of ids) map.allocate(c);
    for (let i = 0; i < ids.length; i += 97) expect(map.chunkIdOf(map.idOf(ids[i]!)!)).toBe(ids[i]);
    // 16 + 1 bytes an id (with growth room) + ~5.2 bytes of hash slots at 100,000 ids.
    expect(map.memoryBytes() / ids.length).toBeLessThan(30);
  });
});
