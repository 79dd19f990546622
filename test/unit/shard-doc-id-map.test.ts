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
