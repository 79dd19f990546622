/** Gives every request an id (from `x-request-id` or new), a child logger and one access-log line. */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { newId } from '../../core/domain/ids.js';
import type { RequestState } from '../context.js';
import { StageTimer } from '../stage-timing.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Middleware that sets `ctx.state.requestId` and `ctx.state.log` and logs the outcome; with
 * `timing`, routes mark their stages on `ctx.state.timing` and the answer carries Server-Timing.
 */
export function requestId(logger: Logger, timing = false): Middleware<RequestState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = SAFE_ID.test(incoming) ? incoming : newId();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ requestId: id });
    ctx.set('x-request-id', id);
    const started = process.hrtime.bigint();
    if (timing) ctx.state.timing = new StageTimer(performance.now());
    try {
      await next();
    } finally {
      // Koa writes the response after every middleware has returned: the header still goes out.
      if (ctx.state.timing) ctx.set('server-timing', ctx.state.timing.header());
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  };
}
