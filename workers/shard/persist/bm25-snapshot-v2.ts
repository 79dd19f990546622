/**
 * Reading version 2 BM25 snapshots (written before the sequences were coded). Version 2 kept a
 * forward index (each document's distinct term ids) and content-term sequences (stop words left
 * out) as u32 arrays; version 3 keeps both in one coded sequence per document (sequence-store.ts).
 */
import { SequenceStore } from '../bm25/sequence-store.js';

/**
 * Version 3's sequence codes from version 2's two structures: the document's content sequence
 * gives the positions, and the distinct terms it lacks (its stop words) join the document's terms
 * without a position, so a removal still releases every term of the document.
 */
export function tokensFromV2(
  fwdOffsets: Uint32Array,
  fwdTerms: Uint32Array,
  seqOffsets: Uint32Array,
  seqTerms: Uint32Array,
  termCount: number,
): { tokenOffsets: Uint32Array; tokenCodes: Uint8Array } {
  const cap = fwdOffsets.length - 1;
  const store = new SequenceStore();
  const inSeq = new Uint8Array(termCount);
  /** 1 for the terms of the document being converted that have no position. */
  const noPosition = new Uint8Array(termCount);
  const ids: number[] = [];
  for (let d = 0; d < cap; d++) {
    const seq = seqTerms.subarray(seqOffsets[d], seqOffsets[d + 1]);
    const fwd = fwdTerms.subarray(fwdOffsets[d], fwdOffsets[d + 1]);
    ids.length = 0;
    for (const t of seq) {
      inSeq[t] = 1;
      ids.push(t);
    }
    for (const t of fwd) {
      if (inSeq[t] === 1) continue;
      noPosition[t] = 1;
      ids.push(t);
    }
    if (ids.length > 0) store.set(d, ids, ids.length, noPosition);
    for (const t of seq) inSeq[t] = 0;
    for (const t of fwd) noPosition[t] = 0;
  }
  const { offsets, codes } = store.export(cap);
  return { tokenOffsets: offsets, tokenCodes: codes };
}
