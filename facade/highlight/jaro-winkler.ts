/**
 * Jaro-Winkler similarity, the word similarity of the reference's `v1` highlighter (it uses the
 * `simsearch` crate, whose default metric is strsim's `jaro_winkler`). Compared per UTF-16 unit.
 */

/**
 * Scratch buffers reused across calls, grown on demand (words are short): the match flags of `b`
 * and the matched characters of `a` in order.
 */
let matchedB = new Uint8Array(64);
let aHits = new Uint16Array(64);

/** Jaro similarity in 0..1 (1 = equal; 0 when either is empty and the other is not). */
export function jaro(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  const range = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  if (matchedB.length < lb) matchedB = new Uint8Array(lb * 2);
  if (aHits.length < la) aHits = new Uint16Array(la * 2);
  matchedB.fill(0, 0, lb);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const c = a.charCodeAt(i);
    const lo = Math.max(0, i - range);
    const hi = Math.min(lb - 1, i + range);
    for (let j = lo; j <= hi; j++) {
      if (matchedB[j] === 0 && b.charCodeAt(j) === c) {
        matchedB[j] = 1;
        aHits[matches++] = c;
        break;
      }
    }
  }
  if (matches === 0) return 0;
  // Transpositions: matched characters of `b`, in order, that differ from those of `a`.
  let t = 0;
  let k = 0;
  for (let j = 0; j < lb; j++) {
    if (matchedB[j] === 1) {
      if (b.charCodeAt(j) !== aHits[k]) t++;
      k++;
    }
  }
  const m = matches;
  return (m / la + m / lb + (m - t / 2) / m) / 3;
}

/**
 * Jaro-Winkler similarity in 0..1: Jaro plus a bonus of 0.1 per shared leading character (at
 * most 4) when Jaro exceeds 0.7, as in strsim.
 */
export function jaroWinkler(a: string, b: string): number {
  const sim = jaro(a, b);
  if (sim <= 0.7) return sim;
  const max = Math.min(4, a.length, b.length);
  let prefix = 0;
  while (prefix < max && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix++;
  return sim + 0.1 * prefix * (1 - sim);
}

/** A query word prepared for bounds: its ASCII character counts (null if it has other characters). */
interface Prepared {
  readonly word: string;
  readonly chars: Int32Array | null;
  readonly counts: Int32Array | null;
}

/**
 * Jaro-Winkler similarities of text words against a fixed list of query words, computed only
 * where they can reach `min`: v1 uses no similarity below its threshold, and most word pairs of
 * a chunk share too few characters to get there. The bound counts the characters both words
 * share regardless of position (never fewer than Jaro's matches, so Jaro <= (c/la + c/lb + 1)/3)
 * and adds the pair's real prefix bonus.
 */
export class JaroWinklerAtLeast {
  private readonly query: Prepared[];
  private readonly min: number;
  /** Character counts of the current text word (ASCII), cleared after each word. */
  private readonly counts = new Int32Array(128);

  constructor(queryWords: readonly string[], min: number) {
    this.min = min;
    this.query = queryWords.map((word) => {
      const counts = new Int32Array(128);
      const chars: number[] = [];
      for (let i = 0; i < word.length; i++) {
        const c = word.charCodeAt(i);
        if (c >= 128) return { word, chars: null, counts: null };
        if (counts[c]!++ === 0) chars.push(c);
      }
      return { word, chars: Int32Array.from(chars), counts };
    });
  }

  /** Writes to out[k], for each query word k, its similarity to `word` if at least `min`, else 0. */
  scores(word: string, out: Float64Array): void {
    const { counts, min } = this;
    let ascii = true;
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      if (c >= 128) ascii = false;
      else counts[c]!++;
    }
    for (let k = 0; k < this.query.length; k++) {
      const q = this.query[k]!;
      out[k] = 0;
      if (q.word === word) {
        out[k] = 1;
        continue;
      }
      if (min > 0 && ascii && q.chars !== null && q.counts !== null) {
        let common = 0;
        for (let j = 0; j < q.chars.length; j++) {
          const c = q.chars[j]!;
          common += Math.min(q.counts[c]!, counts[c]!);
        }
        if (common === 0) continue;
        const jaroMax = (common / q.word.length + common / word.length + 1) / 3;
        const max = Math.min(4, q.word.length, word.length);
        let prefix = 0;
        while (prefix < max && q.word.charCodeAt(prefix) === word.charCodeAt(prefix)) prefix++;
        if ((jaroMax > 0.7 ? jaroMax + 0.1 * prefix * (1 - jaroMax) : jaroMax) < min) continue;
      }
      const sim = jaroWinkler(q.word, word);
      if (sim >= min) out[k] = sim;
    }
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      if (c < 128) counts[c] = 0;
    }
  }
}
