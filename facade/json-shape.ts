/**
 * The shape check of a JSON body, run on its bytes as they arrive, before JSON.parse builds
 * anything: nesting depth, the number of arrays/objects, and the length of any one array. A body
 * that breaks a bound is refused at the chunk where it does, so the rest is never held, joined or
 * scanned (a 1.3 MB body of 100,000 group ids is refused after ~130 KB; joining it cost the event
 * loop ~0.7 ms and scanning it ~0.3 ms per request).
 */

/** What the scan found: acceptable, too deep, too many containers, or an array too long. */
export type JsonShape = 'ok' | 'too_deep' | 'too_many' | 'too_long';

/** Bytes of an array's key kept for the error message (longer keys are cut). */
const KEY_BYTES = 128;

/**
 * Incremental form of the check: {@link push} the body's chunks in order; the first verdict other
 * than `ok` is final. One linear pass with no allocation per element; string contents are
 * skipped by `indexOf`; malformed JSON (an unterminated string, an unbalanced bracket) is left to
 * JSON.parse to describe. Bytes are scanned as they are: every byte of a multi-byte UTF-8
 * character is >= 0x80, so none is taken for a quote, bracket or comma.
 */
export class JsonShapeScanner {
  private maxDepth = 0;
  private maxContainers = 0;
  private maxElements = 0;
  private depth = 0;
  private containers = 0;
  private verdict: JsonShape = 'ok';
  /** Unbalanced closing bracket seen: nothing more is checked (JSON.parse will refuse the body). */
  private done = false;
  /** Inside a string literal at the end of the last chunk. */
  private inString = false;
  /** Backslashes that ended the last chunk inside a string (their parity decides an escape). */
  private trailingBackslashes = 0;
  /** The last string literal, when it began and ended in the current chunk (quotes excluded); -1 otherwise. */
  private strStart = -1;
  private strEnd = -1;
  /** Whether a ':' followed the last string (it is then a key). */
  private keyed = false;
  // Per open container: whether it is an array, its commas so far, and its key (bytes, -1: none).
  private isArray: Uint8Array;
  private commas: Float64Array;
  private keyLength: Int32Array;
  private keys: Uint8Array;
  /** The key of the array that was too long (null: at top level, in an array, or unknown). */
  tooLongKey: string | null = null;

  constructor(maxDepth: number) {
    this.isArray = new Uint8Array(maxDepth + 1);
    this.commas = new Float64Array(maxDepth + 1);
    this.keyLength = new Int32Array(maxDepth + 1);
    this.keys = new Uint8Array((maxDepth + 1) * KEY_BYTES);
  }

  /** Starts a new body with these bounds (state arrays are reused; they grow for a deeper bound). */
  reset(maxDepth: number, maxContainers: number, maxElements = Number.POSITIVE_INFINITY): this {
    if (this.isArray.length < maxDepth + 1) {
      this.isArray = new Uint8Array(maxDepth + 1);
      this.commas = new Float64Array(maxDepth + 1);
      this.keyLength = new Int32Array(maxDepth + 1);
      this.keys = new Uint8Array((maxDepth + 1) * KEY_BYTES);
    }
    this.maxDepth = maxDepth;
    this.maxContainers = maxContainers;
    this.maxElements = maxElements;
    this.depth = 0;
    this.containers = 0;
    this.verdict = 'ok';
    this.done = false;
    this.inString = false;
    this.trailingBackslashes = 0;
    this.strStart = -1;
    this.strEnd = -1;
    this.keyed = false;
    this.tooLongKey = null;
    return this;
  }

  /** Scans the next chunk of the body; returns the verdict so far (sticky once not `ok`). */
  push(text: Uint8Array): JsonShape {
    if (this.verdict !== 'ok' || this.done) return this.verdict;
    const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
    // A string of an earlier chunk spans it: its end is known, its text is not kept.
    this.strStart = -1;
    this.strEnd = -1;
    let i = 0;
    if (this.inString) {
      const close = this.closingQuote(bytes, 0, -1);
      if (close < 0) return 'ok';
      this.inString = false;
      i = close + 1;
    }
    const { isArray, commas, keyLength, keys } = this;
    for (; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (c === 34 /* " */) {
        const close = this.closingQuote(bytes, i + 1, i);
        if (close < 0) {
          this.inString = true;
          return 'ok';
        }
        this.strStart = i + 1;
        this.strEnd = close;
        i = close;
      } else if (c === 58 /* : */) {
        this.keyed = true;
      } else if (c === 44 /* , */) {
        this.keyed = false;
        // n commas separate n + 1 elements.
        const d = this.depth;
        if (d > 0 && isArray[d] === 1 && ++commas[d]! >= this.maxElements) {
          const n = keyLength[d]!;
          this.tooLongKey = n >= 0 ? Buffer.from(keys.buffer, keys.byteOffset + d * KEY_BYTES, n).toString('utf8') : null;
          return (this.verdict = 'too_long');
        }
      } else if (c === 91 /* [ */ || c === 123 /* { */) {
        const d = ++this.depth;
        if (d > this.maxDepth) return (this.verdict = 'too_deep');
        if (++this.containers > this.maxContainers) return (this.verdict = 'too_many');
        isArray[d] = c === 91 ? 1 : 0;
        commas[d] = 0;
        if (this.keyed && this.strStart >= 0) {
          const n = Math.min(KEY_BYTES, this.strEnd - this.strStart);
          bytes.copy(keys, d * KEY_BYTES, this.strStart, this.strStart + n);
          keyLength[d] = n;
        } else keyLength[d] = -1;
        this.keyed = false;
      } else if (c === 93 /* ] */ || c === 125 /* } */) {
        if (--this.depth < 0) {
          this.done = true;
          return 'ok';
        }
      }
    }
    return 'ok';
  }

  /**
   * Index of the quote that closes a string whose contents start at `from` (the opening quote at
   * `open`, or -1 when it opened in an earlier chunk): the first quote not escaped, i.e. preceded
   * by an even run of backslashes. -1 when the chunk ends first (the run of backslashes it ends
   * with is kept for the next chunk).
   */
  private closingQuote(bytes: Buffer, from: number, open: number): number {
    let q = from - 1;
    for (;;) {
      q = bytes.indexOf(34, q + 1);
      if (q < 0) break;
      let backslashes = 0;
      let b = q - 1;
      for (; b > open && bytes[b] === 92 /* \ */; b--) backslashes++;
      // The run reaches back into the previous chunk.
      if (b < 0 && open < 0) backslashes += this.trailingBackslashes;
      if ((backslashes & 1) === 0) {
        this.trailingBackslashes = 0;
        return q;
      }
    }
    let run = 0;
    let b = bytes.length - 1;
    for (; b > open && bytes[b] === 92; b--) run++;
    this.trailingBackslashes = b < 0 && open < 0 ? this.trailingBackslashes + run : run;
    return -1;
  }
}

/** Scanners not in use (one per body being read; reading several bodies at once interleaves their chunks). */
const idle: JsonShapeScanner[] = [];

/** A scanner for one body, reset to these bounds; give it back with {@link releaseScanner}. */
export function acquireScanner(maxDepth: number, maxContainers: number, maxElements?: number): JsonShapeScanner {
  return (idle.pop() ?? new JsonShapeScanner(maxDepth)).reset(maxDepth, maxContainers, maxElements);
}

/** Returns a scanner to the pool. */
export function releaseScanner(s: JsonShapeScanner): void {
  if (idle.length < 64) idle.push(s);
}

/** Filled by {@link jsonShape} when an array is too long: the key it is the value of (null at top level, in an array, or unknown). */
export interface ShapeWhere {
  key: string | null;
}

/** The shape check of a whole body (UTF-8 bytes, or text) at once. */
export function jsonShape(json: Uint8Array | string, maxDepth: number, maxContainers: number, maxElements = Number.POSITIVE_INFINITY, where?: ShapeWhere): JsonShape {
  const s = acquireScanner(maxDepth, maxContainers, maxElements);
  try {
    const shape = s.push(typeof json === 'string' ? Buffer.from(json, 'utf8') : json);
    if (where && shape === 'too_long') where.key = s.tooLongKey;
    return shape;
  } finally {
    releaseScanner(s);
  }
}
