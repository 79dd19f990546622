/**
 * Versioned binary form of a vocabulary: the words and their counts only. The deletion index is
 * rebuilt on load rather than stored, so the format does not change when the index's layout or
 * prefix length does, and the snapshot stays ~4x smaller than the index it rebuilds.
 *
 * Layout (little-endian, every array starting on a 4-byte boundary):
 *   magic 'QRYVOCB\0' (8 bytes) | version u32 | prefixLength u32 | minIndexedCount u32 | words u32 | units u32
 *   | counts u32[words] | lengths u8[words] (+pad) | code units u16[units] (+pad) | 'END!' u32
 */
import { endianness } from 'node:os';

/** First 8 bytes of every vocabulary snapshot. */
export const VOCABULARY_MAGIC = new Uint8Array([0x51, 0x52, 0x59, 0x56, 0x4f, 0x43, 0x42, 0x00]); // QRYVOCB\0
/** The format version this code writes and the only one it reads. */
export const VOCABULARY_FORMAT_VERSION = 1;

const END = 0x454e4421; // 'END!'
const HEADER_BYTES = 8 + 5 * 4;

/** Thrown when bytes are not a vocabulary snapshot this code can load. */
export class VocabularySnapshotError extends Error {
  /** Why the snapshot was rejected. */
  constructor(message: string) {
    super(message);
    this.name = 'VocabularySnapshotError';
  }
}

/** A vocabulary's content, packed: word i is `units[sum(lengths[0..i)) ..][0 .. lengths[i])`. */
export interface VocabularyState {
  prefixLength: number;
  minIndexedCount: number;
  counts: Uint32Array;
  lengths: Uint8Array;
  units: Uint16Array;
}

const pad4 = (n: number): number => (n + 3) & ~3;

function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new VocabularySnapshotError('vocabulary snapshots are little-endian only');
}

/** Encodes a packed vocabulary. */
export function encodeVocabulary(s: VocabularyState): Uint8Array {
  assertLittleEndian();
  const words = s.counts.length;
  const countsAt = HEADER_BYTES;
  const lengthsAt = countsAt + words * 4;
  const unitsAt = lengthsAt + pad4(words);
  const endAt = unitsAt + pad4(s.units.length * 2);
  const out = new Uint8Array(endAt + 4);
  const view = new DataView(out.buffer);
  out.set(VOCABULARY_MAGIC, 0);
  view.setUint32(8, VOCABULARY_FORMAT_VERSION, true);
  view.setUint32(12, s.prefixLength, true);
  view.setUint32(16, s.minIndexedCount, true);
  view.setUint32(20, words, true);
  view.setUint32(24, s.units.length, true);
  out.set(new Uint8Array(s.counts.buffer, s.counts.byteOffset, s.counts.byteLength), countsAt);
  out.set(s.lengths, lengthsAt);
  out.set(new Uint8Array(s.units.buffer, s.units.byteOffset, s.units.byteLength), unitsAt);
  view.setUint32(endAt, END, true);
  return out;
}

/** Decodes and checks the shape of a snapshot (word content is checked by the loader). */
export function decodeVocabulary(b: Uint8Array): VocabularyState {
  assertLittleEndian();
  if (b.length < HEADER_BYTES + 4 || VOCABULARY_MAGIC.some((m, i) => b[i] !== m)) {
    throw new VocabularySnapshotError('not a vocabulary snapshot (bad magic bytes)');
  }
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const version = view.getUint32(8, true);
  if (version !== VOCABULARY_FORMAT_VERSION) {
    throw new VocabularySnapshotError(
      `unsupported vocabulary snapshot version ${version} (this build reads ${VOCABULARY_FORMAT_VERSION}); rebuild it from the chunks`,
    );
  }
  const prefixLength = view.getUint32(12, true);
  const minIndexedCount = view.getUint32(16, true);
  const words = view.getUint32(20, true);
  const unitCount = view.getUint32(24, true);
  const countsAt = HEADER_BYTES;
  const lengthsAt = countsAt + words * 4;
  const unitsAt = lengthsAt + pad4(words);
  const endAt = unitsAt + pad4(unitCount * 2);
  if (endAt + 4 !== b.length || view.getUint32(endAt, true) !== END) {
    throw new VocabularySnapshotError('vocabulary snapshot is truncated or corrupt');
  }
  // Copies into fresh buffers: `b` may sit at any byte offset, typed arrays need alignment.
  const counts = new Uint32Array(words);
  new Uint8Array(counts.buffer).set(b.subarray(countsAt, countsAt + words * 4));
  const lengths = b.slice(lengthsAt, lengthsAt + words);
  const units = new Uint16Array(unitCount);
  new Uint8Array(units.buffer).set(b.subarray(unitsAt, unitsAt + unitCount * 2));
  let total = 0;
  for (let i = 0; i < words; i++) {
    if (lengths[i] === 0 || counts[i] === 0) throw new VocabularySnapshotError('vocabulary snapshot holds an empty word or a zero count');
    total += lengths[i]!;
  }
  if (total !== unitCount) throw new VocabularySnapshotError('vocabulary snapshot word lengths do not add up');
  return { prefixLength, minIndexedCount, counts, lengths, units };
}
