/**
 * Every index of a shard breaks score ties as the core's merge does (chunk id ascending), so a
 * tie at a shard's top-k cut keeps the documents a one-shard ranking keeps. Documents are added
 * in the reverse of their chunk-id order, so that internal ids (insertion order) disagree.
 */
import { describe, expect, it } from 'vitest';
import { Shard } from '../../workers/shard/shard.js';
import { textDoc } from '../../workers/shard/text-doc.js';

const IDS = ['id-09', 'id-08', 'id-07', 'id-06', 'id-05', 'id-04', 'id-03', 'id-02', 'id-01', 'id-00'];
const sorted = [...IDS].sort();
/** A SPLADE vector. */
const sv = (indices: number[], values: number[]) => ({ indices: Uint32Array.from(indices), values: Float32Array.from(values) });

function tiedShard(): Shard {
  const shard = new Shard({ k1: 0.9, b: 0.4, distance: 'cosine' });
  shard.apply(
    IDS.map((id) => ({ ...textDoc(id, 'same words here'), vector: Float32Array.from([1, 2, 3, 4]), sparse: sv([3, 7], [0.5, 1]) })),
    [],
    1,
  );
  return shard;
}

describe('score ties at a shard top-k cut', () => {
  it('BM25, dense and SPLADE keep the smallest chunk ids, in chunk-id order', () => {
    const shard = tiedShard();
    for (const k of [1, 3, 7, 10]) {
      const want = sorted.slice(0, k);
      expect(shard.search('same words', null, k, null, null, false).chunkIds, `bm25 k=${k}`).toEqual(want);
      expect(shard.searchDense(Float32Array.from([1, 2, 3, 4]), k, null, null, false).chunkIds, `dense k=${k}`).toEqual(want);
      expect(shard.searchSparse(sv([3, 7], [1, 1]), k, null, null, true).chunkIds, `splade k=${k}`).toEqual(want);
    }
  });

  it('SPLADE counts every match above the threshold while keeping only k', () => {
    const shard = tiedShard();
    const hits = shard.searchSparse(sv([3, 7], [1, 1]), 2, null, 1.4, true);
    expect(hits.chunkIds).toEqual(sorted.slice(0, 2));
    expect(hits.total).toBe(10);
    expect(shard.searchSparse(sv([3, 7], [1, 1]), 2, null, 1.6, true).total).toBe(0);
  });
});
