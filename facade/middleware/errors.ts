/**
 * Maps every failure to `{message}` with the status of the error table. Caller errors keep their
 * message; anything else is logged with its cause and answered with a plain 500.
 */
import type { Middleware } from 'koa';
import { ErrorCodes, QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

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
