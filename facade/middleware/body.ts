/**
 * Reads the request body as JSON for every method that may carry one, once the caller is known
 * (see gate.ts) and only for a registered route, up to that route's limit. Like the reference
 * implementation, a missing Content-Type is treated as JSON.
 */
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { QuarryError } from '../../core/domain/errors.js';
import type { BodyLimitOf } from '../body-limits.js';
import type { RequestState } from '../context.js';

/** Middleware that parses the JSON body into `ctx.state.body`. */
export function jsonBody(limitOf: BodyLimitOf): Middleware<RequestState> {
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return next();
    // No registered route: the router answers 404/405 and nothing would read the body.
    const route = ctx.state.route;
    if (route === undefined) return next();
    const limitBytes = limitOf(route);
    const type = ctx.get('content-type');
    // Bytes, not text: the shape check needs no decoding, a refused body is never decoded, and an
    // accepted one is decoded once, natively, into a flat string (decoding chunk by chunk built
    // a rope that the first scan had to copy: ~1 ms of the event loop per MB).
    let bytes: Buffer;
    try {
      bytes = await getRawBody(ctx.req, { limit: limitBytes, length: ctx.get('content-length') || undefined });
    } catch (err) {
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large') {
        // The socket stays open: Node discards the rest of the upload (nothing is buffered) and the
        // client, still writing, can read this 413 instead of failing on a reset connection.
        throw new QuarryError('payload_too_large', `Request body is larger than the limit of ${limitBytes} bytes for ${route}`);
      }
      if (e.type === 'request.aborted') throw new QuarryError('bad_request', 'Request body was aborted by the client');
      throw new QuarryError('bad_request', `Could not read the request body: ${(err as Error).message}`);
    }
    ctx.state.bodyLength = bytes.length;
    // Checked on the bytes, before JSON.parse builds anything: cost is one pass, nothing per element.
    const where: ShapeWhere = { key: null };
    const shape = jsonShape(bytes, MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS, where);
    if (shape === 'too_deep') {
      throw new QuarryError(
        'invalid_json',
        `Json Deserialization Error: body nests arrays/objects more than ${MAX_DEPTH} levels deep, the most accepted`,
      );
    }
    if (shape === 'too_many') {
      throw new QuarryError(
        'invalid_json',
        `Json Deserialization Error: body has more than ${MAX_CONTAINERS} arrays/objects, the most accepted in one request`,
      );
    }
    if (shape === 'too_long') {
      throw new QuarryError(
        'invalid_json',
        `Json Deserialization Error: ${where.key === null ? 'body has an array' : `${where.key}: array`} of more than ${MAX_ARRAY_ELEMENTS} elements, the most accepted in any array of a body`,
      );
    }
    const text = bytes.toString('utf8');
    if (text.trim() === '') return next();
    try {
      // Parsed whatever the Content-Type says: curl's default form type is a common slip and
      // the body is JSON all the same.
      ctx.state.body = JSON.parse(text);
    } catch (err) {
      if (/^multipart\//i.test(type)) {
        throw new QuarryError('unsupported_media_type', `Content-Type must be application/json, got "${type}"`);
      }
      throw new QuarryError('invalid_json', `Json Deserialization Error: body is not valid JSON: ${(err as Error).message}`);
    }
    return next();
  };
}

/**
 * Deepest nesting of arrays/objects accepted in a body, as serde_json's recursion limit in the
 * reference implementation. Deeper values parse, but storing them (JSON.stringify) overflows the
 * stack and would turn a caller's mistake into a 500.
 */
export const MAX_DEPTH = 128;

/**
 * Most arrays/objects in one body. A 15 MiB `[[],[],...]` is 5 million of them: a second of
 * JSON.parse and 200+ MB for one request. Real bodies (120 chunks with metadata, filters of 1000
 * conditions) have a few thousand.
 */
export const MAX_CONTAINERS = 250_000;

/**
 * Most elements in any one array of a body. The largest arrays the API takes hold 1,000 (ids,
 * filter values, polygon points; see core/domain/limits.ts), but their caps apply after
 * JSON.parse, and parsing a body of 100,000 group ids takes an event loop ~20 ms that every other
 * tenant's request waits through; refused here, it costs a scan that stops at the cap.
 */
export const MAX_ARRAY_ELEMENTS = 10_000;

/** What {@link jsonShape} found: acceptable, too deep, too many containers, or an array too long. */
export type JsonShape = 'ok' | 'too_deep' | 'too_many' | 'too_long';

/** Filled by {@link jsonShape} when an array is too long: the key it is the value of (null at top level or in an array). */
export interface ShapeWhere {
  key: string | null;
}

/** Per-depth state of {@link jsonShape}, reused: four typed arrays per body were ~5 us of a small search. */
let scratch = { isArray: new Uint8Array(MAX_DEPTH + 1), commas: new Float64Array(MAX_DEPTH + 1), keyStart: new Int32Array(MAX_DEPTH + 1), keyEnd: new Int32Array(MAX_DEPTH + 1) };

function scratchFor(maxDepth: number): typeof scratch {
  if (scratch.isArray.length < maxDepth + 1) {
    scratch = { isArray: new Uint8Array(maxDepth + 1), commas: new Float64Array(maxDepth + 1), keyStart: new Int32Array(maxDepth + 1), keyEnd: new Int32Array(maxDepth + 1) };
  }
  return scratch;
}

/**
 * Whether JSON (UTF-8 bytes, or text) nests `[`/`{` deeper than `maxDepth`, holds more than
 * `maxContainers` of them, or has an array of more than `maxElements` elements, outside string
 * literals. One linear pass with no allocation (its per-depth arrays are reused), string contents
 * skipped by `indexOf`; malformed JSON (an unterminated string, say) is left to JSON.parse to
 * describe. Bytes are scanned as they are: every byte of a multi-byte UTF-8 character is >= 0x80,
 * so none is taken for a quote, bracket or comma.
 */
export function jsonShape(json: Uint8Array | string, maxDepth: number, maxContainers: number, maxElements = Number.POSITIVE_INFINITY, where?: ShapeWhere): JsonShape {
  const text = typeof json === 'string' ? Buffer.from(json, 'utf8') : Buffer.isBuffer(json) ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  let depth = 0;
  let containers = 0;
  // Per open container: whether it is an array, its commas so far, and the span of its key (each
  // set when the container opens, so what a previous call left is never read).
  const { isArray, commas, keyStart, keyEnd } = scratchFor(maxDepth);
  // The last string literal (quotes excluded), and whether a ':' followed it (then it is a key).
  let strStart = -1;
  let strEnd = -1;
  let keyed = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === 34 /* " */) {
      // Jump to the closing quote (native search, where almost all of a large body is): the first
      // quote not escaped, i.e. preceded by an even run of backslashes (each scanned once).
      let q = i;
      for (;;) {
        q = text.indexOf(34, q + 1);
        if (q < 0) return 'ok';
        let backslashes = 0;
        for (let b = q - 1; b > i && text[b] === 92 /* \ */; b--) backslashes++;
        if ((backslashes & 1) === 0) break;
      }
      strStart = i + 1;
      strEnd = q;
      i = q;
    } else if (c === 58 /* : */) {
      keyed = true;
    } else if (c === 44 /* , */) {
      keyed = false;
      // n commas separate n + 1 elements.
      if (depth > 0 && isArray[depth] === 1 && ++commas[depth]! >= maxElements) {
        if (where) where.key = keyStart[depth]! >= 0 ? text.toString('utf8', keyStart[depth], keyEnd[depth]) : null;
        return 'too_long';
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return 'too_deep';
      if (++containers > maxContainers) return 'too_many';
      isArray[depth] = c === 91 ? 1 : 0;
      commas[depth] = 0;
      keyStart[depth] = keyed ? strStart : -1;
      keyEnd[depth] = strEnd;
      keyed = false;
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      // Unbalanced: JSON.parse will say where.
      if (--depth < 0) return 'ok';
    }
  }
  return 'ok';
}
