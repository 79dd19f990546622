/**
 * Term frequencies in postings are stored one byte each: nearly all are below 255 (on the 1M
 * synthetic corpus and SciFact every one), and a u16 per posting was 15% of the index. A tf of
 * 255 or more is stored as {@link TF_OVERFLOW} and its exact value kept in the list's overflow
 * map (doc id -> tf), so scores stay exactly those of the full value.
 */

/** Stored byte of a tf that is looked up in the list's overflow map. */
export const TF_OVERFLOW = 0xff;

/** Doc id -> exact tf of a list's postings whose stored byte is {@link TF_OVERFLOW}. */
export type TfOverflow = ReadonlyMap<number, number>;

/** The exact tf of `doc` in a list whose stored byte for it is {@link TF_OVERFLOW}. */
export function overflowTf(big: TfOverflow | null, doc: number): number {
  const tf = big === null ? undefined : big.get(doc);
  if (tf === undefined) throw new Error(`postings: no overflow tf for doc ${doc}`);
  return tf;
}
