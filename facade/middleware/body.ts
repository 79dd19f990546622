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
    return next();
  };
}
