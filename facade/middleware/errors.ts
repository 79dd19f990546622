/**
 * Maps every failure to `{message}` with the status of the error table. Caller errors keep their
 * message; anything else is logged with its cause and answered with a plain 500. A JSON answer
 * leaves here as UTF-8 bytes (see {@link asJsonBytes}).
 */
import { Stream } from 'node:stream';
import type { Middleware, ParameterizedContext } from 'koa';
import { ErrorCodes, QuarryError } from '../../core/domain/errors.js';
import { jsonBytes } from '../present/json-bytes.js';
import type { RequestState } from '../context.js';

/**
 * Serializes an object body here rather than in Koa's `respond`: Koa stringifies, then measures
 * the string's UTF-8 length for Content-Length, then the socket encodes it again (~35 us of a
 * 20 KB search page). The bytes are written directly (../present/json-bytes.ts), and a Buffer is
 * measured by its length and written as it is. A failure to serialize is thrown here, inside the
 * error handling, rather than after the response began.
 */
function asJsonBytes(ctx: ParameterizedContext<RequestState>): void {
  const body: unknown = ctx.body;
  if (typeof body !== 'object' || body === null || Buffer.isBuffer(body) || body instanceof Stream) return;
  // The Content-Type stays the json one the object body set.
  ctx.body = jsonBytes(body);
  ctx.state.timing?.mark('serialize');
}

/** Middleware that turns thrown errors into Trieve-style error bodies. */
export function errors(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { message: `Not Found: no route for ${ctx.method} ${ctx.path}` };
      } else if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        // The router's allowedMethods answers these without a body; every error carries {message}.
        const status = ctx.status;
        const allow = ctx.response.get('Allow');
        ctx.body = {
          message:
            status === 405
              ? `Method Not Allowed: ${ctx.method} ${ctx.path}${allow ? ` (allowed: ${allow})` : ''}`
              : `Not Implemented: method ${ctx.method} is not supported`,
        };
        ctx.status = status;
      }
      asJsonBytes(ctx);
    } catch (err) {
      if (err instanceof QuarryError && ErrorCodes[err.code].expose) {
        const e = err;
        ctx.status = e.httpStatus;
        ctx.body = { message: e.message };
        // Every 503 (overload, an unreachable core or model server, shards reloading) is worth a retry.
        const retryAfter = e.retryAfterSeconds ?? (e.httpStatus === 503 ? 1 : undefined);
        if (retryAfter !== undefined) ctx.set('Retry-After', String(retryAfter));
        return;
      }
      ctx.state.log?.error({ err }, 'internal error');
      ctx.status = 500;
      ctx.body = { message: `Internal Server Error (request id ${ctx.state.requestId})` };
    }
  };
}
