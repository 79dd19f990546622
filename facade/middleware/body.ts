/**
 * Reads the request body as JSON for every method that may carry one. Like the reference
 * implementation, a missing Content-Type is treated as JSON.
 */
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

/** Middleware that parses the JSON body into `ctx.state.body`. */
export function jsonBody(limitBytes: number): Middleware<RequestState> {
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return next();
    const type = ctx.get('content-type');
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: ctx.get('content-length') || undefined });
    } catch (err) {
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large') {
        throw new QuarryError('payload_too_large', `Request body is larger than the limit of ${limitBytes} bytes`);
      }
      if (e.type === 'request.aborted') throw new QuarryError('bad_request', 'Request body was aborted by the client');
      throw new QuarryError('bad_request', `Could not read the request body: ${(err as Error).message}`);
    }
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
    if (nestingDepth(ctx.state.body) > MAX_DEPTH) {
      throw new QuarryError(
        'invalid_json',
        `Json Deserialization Error: body nests arrays/objects more than ${MAX_DEPTH} levels deep, the most accepted`,
      );
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

/** Nesting depth of a parsed JSON value (stops counting past MAX_DEPTH), without recursion: the input is untrusted. */
export function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    // Deeper than the limit is enough to refuse; no need to walk the rest.
    if (max > MAX_DEPTH) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth]);
    }
  }
  return max;
}
