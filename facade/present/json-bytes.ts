/**
 * A response body as UTF-8 JSON bytes, written straight into a buffer: exactly what
 * `Buffer.from(JSON.stringify(value))` gives, without the string in between.
 *
 * Why not JSON.stringify: Node 20's V8 writes a page of abstracts (20 KB of text, usually with a
 * few non-Latin-1 characters, so the whole JSON string is two-byte) at ~350 MB/s, and the string
 * must then be encoded to UTF-8 again: ~80 us and ~90 KB of garbage per search answer, the largest
 * single cost of an HTTP search here (bench/search-latency.ts, "serialize"). This writer copies
 * strings that need no escaping as UTF-8 directly (native `Buffer.write`), escapes the others with
 * JSON.stringify itself, and leaves anything unusual (toJSON, class instances, bigint, cycles)
 * to JSON.stringify for the whole value, so the bytes are always JSON.stringify's.
 */

/** A string JSON.stringify would change: quotes, backslashes, control characters, surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/** Deeper than this, leave it to JSON.stringify (which also reports cycles). */
const MAX_DEPTH = 256;

/**
 * JSON text encoded once and written as it is wherever it sits in a value given to
 * {@link jsonBytes} (a search page's chunks, whose records are shared between requests: see
 * facade/present/chunk.ts). Its `toJSON` parses the text back, so JSON.stringify, the
 * writer's fallback for unusual values, writes the same text.
 */
export class JsonFragment {
  constructor(
    /** The UTF-8 JSON text. */
    readonly bytes: Buffer,
  ) {}

  /** The value of the text, for JSON.stringify. */
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

/** `value` as a {@link JsonFragment} (its JSON text encoded once, in memory of its own: it is kept). */
export function jsonFragment(value: object): JsonFragment {
  return new JsonFragment(encode(value, Buffer.allocUnsafeSlow));
}

/** Thrown inside the writer when the value is not plain JSON data. */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain();

/** The scratch buffer values are written into (one request at a time: the writer is synchronous). */
let scratch = Buffer.allocUnsafe(64 * 1024);
let pos = 0;

function reserve(bytes: number): void {
  if (pos + bytes <= scratch.length) return;
  let size = scratch.length * 2;
  while (size < pos + bytes) size *= 2;
  const bigger = Buffer.allocUnsafe(size);
  scratch.copy(bigger, 0, 0, pos);
  scratch = bigger;
}

function byte(b: number): void {
  if (pos >= scratch.length) reserve(1);
  scratch[pos++] = b;
}

/** Text known to be ASCII (numbers, literals): a loop beats a native call for a few bytes. */
function ascii(text: string): void {
  reserve(text.length);
  for (let i = 0; i < text.length; i++) scratch[pos++] = text.charCodeAt(i);
}

function writeString(s: string): void {
  // At most 3 bytes per UTF-16 unit of what is written (the escaped text, quotes included).
  if (NEEDS_ESCAPE.test(s)) {
    const quoted = JSON.stringify(s);
    reserve(3 * quoted.length);
    pos += scratch.write(quoted, pos, 'utf8');
    return;
  }
  reserve(3 * s.length + 2);
  scratch[pos++] = 0x22;
  if (s.length < 48) {
    // Short strings (keys, ids): copied in a loop while ASCII, the native write only if not.
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      scratch[pos++] = c;
    }
    if (i < s.length) pos += scratch.write(s.slice(i), pos, 'utf8');
  } else {
    pos += scratch.write(s, pos, 'utf8');
  }
  scratch[pos++] = 0x22;
}

/** Writes `v`; false when it is a value JSON leaves out of an object (undefined, a function, a symbol). */
function writeValue(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      writeString(v);
      return true;
    case 'number':
      ascii(Number.isFinite(v) ? String(v) : 'null');
      return true;
    case 'boolean':
      ascii(v ? 'true' : 'false');
      return true;
    case 'undefined':
    case 'function':
    case 'symbol':
      return false;
    case 'bigint':
      throw NOT_PLAIN;
    default:
      break;
  }
  if (v === null) {
    ascii('null');
    return true;
  }
  if (depth > MAX_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
    byte(0x5b);
    for (let i = 0; i < v.length; i++) {
      if (i > 0) byte(0x2c);
      if (!writeValue(v[i], depth + 1)) ascii('null');
    }
    byte(0x5d);
    return true;
  }
  if (v instanceof JsonFragment) {
    reserve(v.bytes.length);
    pos += v.bytes.copy(scratch, pos);
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  byte(0x7b);
  let first = true;
  for (const key of Object.keys(v as object)) {
    const value = (v as Record<string, unknown>)[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (!first) byte(0x2c);
    first = false;
    writeString(key);
    byte(0x3a);
    writeValue(value, depth + 1);
  }
  byte(0x7d);
  return true;
}

/** `value` as the UTF-8 bytes of its JSON text: the same bytes as `Buffer.from(JSON.stringify(value))` (which throws what JSON.stringify throws). */
export function jsonBytes(value: object): Buffer {
  return encode(value, Buffer.allocUnsafe);
}

/**
 * Writes `value` into the scratch and copies the bytes out into a buffer from `alloc`
 * (`allocUnsafe` may hand out a slice of Node's shared 8 KB pool: right for an answer about to be
 * written, wrong for bytes kept for long, which would pin the whole pool slab).
 */
function encode(value: object, alloc: (size: number) => Buffer): Buffer {
  pos = 0;
  try {
    writeValue(value, 0);
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    const text = JSON.stringify(value);
    const bytes = alloc(Buffer.byteLength(text, 'utf8'));
    bytes.write(text, 0, 'utf8');
    return bytes;
  }
  const out = alloc(pos);
  scratch.copy(out, 0, 0, pos);
  // A rare huge answer does not pin its scratch for the life of the process.
  if (scratch.length > 4 * 1024 * 1024) scratch = Buffer.allocUnsafe(64 * 1024);
  return out;
}
