/**
 * Deterministic synthetic corpus for scale benchmarks: documents of pseudo-words drawn from a Zipf
 * distribution over a fixed vocabulary, with tags for filter benchmarks. Same options and seed,
 * same corpus on every machine (no data files to pin).
 */

/** Options of {@link syntheticCorpus}; defaults in {@link DEFAULT_SYNTHETIC_OPTIONS}. */
export interface SyntheticOptions {
  /** Number of documents. @defaultValue 1_000_000 */
  docs: number;
  /** Mean words per document; lengths are uniform in [wordsPerDoc / 2, 3 wordsPerDoc / 2]. @defaultValue 60 */
  wordsPerDoc: number;
  /** Distinct words that can be drawn (word of rank r has probability proportional to 1 / r^zipfS). @defaultValue 100_000 */
  vocabulary: number;
  /** Zipf exponent (1.07 fits English word frequencies). @defaultValue 1.07 */
  zipfS: number;
  /** PRNG seed. @defaultValue 42 */
  seed: number;
  /** Number of distinct tags; each document carries 1 to 3 of them, uniformly drawn. @defaultValue 20 */
  tags: number;
}

/** Defaults for {@link SyntheticOptions}. */
export const DEFAULT_SYNTHETIC_OPTIONS: Readonly<SyntheticOptions> = Object.freeze({
  docs: 1_000_000,
  wordsPerDoc: 60,
  vocabulary: 100_000,
  zipfS: 1.07,
  seed: 42,
  tags: 20,
});

/** One generated document. */
export interface SyntheticDoc {
  /** UUID-shaped, deterministic, unique within a corpus. */
  id: string;
  /** Space-separated pseudo-words. */
  text: string;
  /** Tag names `tag-0` .. `tag-(tags-1)`. */
  tags: string[];
}

/** sfc32: small, fast, good-quality 32-bit PRNG; returns floats in [0, 1). */
export function sfc32(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next(); // mix the seed in
  return next;
}

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const SYLLABLES = CONSONANTS.length * VOWELS.length; // 90

/**
 * The word of rank r (0 = most frequent): consonant-vowel syllables spelling a scrambled r, so
 * words are distinct, pronounceable, letters only (they go through Porter like English would;
 * a few may share a stem) and frequency does not correlate with spelling.
 */
export function syntheticWord(rank: number): string {
  // 7,368,787 is prime and does not divide 90^4, so this is a bijection on [0, 90^4).
  let x = (rank * 7_368_787 + 12_345) % SYLLABLES ** 4;
  let w = '';
  const n = rank < 50 ? 1 : rank < 2_000 ? 2 : rank < 60_000 ? 3 : 4;
  for (let i = 0; i < n; i++) {
    const s = x % SYLLABLES;
    x = Math.floor(x / SYLLABLES);
    w += CONSONANTS[s % CONSONANTS.length]! + VOWELS[Math.floor(s / CONSONANTS.length)]!;
  }
  // Distinct ranks may spell the same prefix at different lengths; the rank suffix keeps words unique.
  return rank < 50 ? w : w + CONSONANTS[rank % CONSONANTS.length]! + syllableCode(rank);
}

function syllableCode(rank: number): string {
  let s = '';
  let x = rank;
  do {
    s += VOWELS[x % VOWELS.length]! + CONSONANTS[Math.floor(x / VOWELS.length) % CONSONANTS.length]!;
    x = Math.floor(x / (VOWELS.length * CONSONANTS.length));
  } while (x > 0);
  return s;
}

/** Walker alias table over Zipf(s) ranks: O(1) draws. */
class ZipfSampler {
  private readonly prob: Float64Array;
  private readonly alias: Uint32Array;

  constructor(n: number, s: number) {
    const w = new Float64Array(n);
    let sum = 0;
    for (let r = 0; r < n; r++) sum += w[r] = 1 / (r + 1) ** s;
    this.prob = new Float64Array(n);
    this.alias = new Uint32Array(n);
    const small: number[] = [];
    const large: number[] = [];
    for (let r = 0; r < n; r++) {
      w[r] = (w[r]! * n) / sum;
      (w[r]! < 1 ? small : large).push(r);
    }
    while (small.length > 0 && large.length > 0) {
      const l = small.pop()!;
      const g = large.pop()!;
      this.prob[l] = w[l]!;
      this.alias[l] = g;
      w[g] = w[g]! + w[l]! - 1;
      (w[g] < 1 ? small : large).push(g);
    }
    for (const r of [...small, ...large]) this.prob[r] = 1;
  }

  draw(rand: () => number): number {
    const u = rand() * this.prob.length;
    const i = Math.floor(u);
    return u - i < this.prob[i]! ? i : this.alias[i]!;
  }
}

function uuidFrom(rand: () => number): string {
  const hex = (bits: number, digits: number) => Math.floor(rand() * 2 ** bits).toString(16).padStart(digits, '0');
  return `${hex(32, 8)}-${hex(16, 4)}-4${hex(12, 3)}-${(8 + Math.floor(rand() * 4)).toString(16)}${hex(12, 3)}-${hex(24, 6)}${hex(24, 6)}`;
}

/** Lazily generates the corpus (nothing is kept: a million documents stream through). */
export function* syntheticCorpus(options: Partial<SyntheticOptions> = {}): Generator<SyntheticDoc> {
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, ...options };
  const rand = sfc32(o.seed);
  const zipf = new ZipfSampler(o.vocabulary, o.zipfS);
  const words = Array.from({ length: o.vocabulary }, (_, r) => syntheticWord(r));
  const minLen = Math.max(1, Math.floor(o.wordsPerDoc / 2));
  const spread = Math.max(1, o.wordsPerDoc + 1);
  const parts: string[] = [];
  for (let i = 0; i < o.docs; i++) {
    const len = minLen + Math.floor(rand() * spread);
    parts.length = 0;
    for (let j = 0; j < len; j++) parts.push(words[zipf.draw(rand)]!);
    const tagCount = 1 + Math.floor(rand() * Math.min(3, o.tags));
    const tags: string[] = [];
    while (tags.length < tagCount) {
      const t = `tag-${Math.floor(rand() * o.tags)}`;
      if (!tags.includes(t)) tags.push(t);
    }
    yield { id: uuidFrom(rand), text: parts.join(' '), tags };
  }
}

/** `n` queries of 2 or 3 distinct words drawn from the same Zipf vocabulary as the corpus. */
export function syntheticQueries(n: number, seed: number, options: Partial<Pick<SyntheticOptions, 'vocabulary' | 'zipfS'>> = {}): string[] {
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, ...options };
  const rand = sfc32(seed ^ 0x5eed);
  const zipf = new ZipfSampler(o.vocabulary, o.zipfS);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const want = 2 + Math.floor(rand() * 2);
    const ranks: number[] = [];
    while (ranks.length < want) {
      const r = zipf.draw(rand);
      if (!ranks.includes(r)) ranks.push(r);
    }
    out.push(ranks.map(syntheticWord).join(' '));
  }
  return out;
}
