/** Gives every request an id (from `x-request-id` or new), a child logger and one access-log line. */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { newId } from '../../core/domain/ids.js';
import type { RequestState } from '../context.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Middleware that sets `ctx.state.requestId` and `ctx.state.log` and logs the outcome. */
export function requestId(logger: Logger): Middleware<RequestState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = SAFE_ID.test(incoming) ? incoming : newId();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ requestId: id });
    ctx.set('x-request-id', id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  };
}
