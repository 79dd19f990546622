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
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: ctx.get('content-length') || undefined });
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
    if (text.trim() === '') return next();
    // Checked on the text, before JSON.parse builds anything: cost is one pass, nothing per element.
    const shape = jsonShape(text, MAX_DEPTH, MAX_CONTAINERS);
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
 * Whether JSON text nests `[`/`{` deeper than `maxDepth` or holds more than `maxContainers` of
 * them, outside string literals. One linear pass over the characters with no allocation;
 * malformed text is left to JSON.parse to describe.
 */
export function jsonShape(text: string, maxDepth: number, maxContainers: number): 'ok' | 'too_deep' | 'too_many' {
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return 'too_deep';
      if (++containers > maxContainers) return 'too_many';
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    }
  }
  return 'ok';
}
