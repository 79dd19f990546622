/**
 * Cancels the core calls of a request whose client went away (closed the connection before the
 * response was written), so the core stops work nobody waits for: shard tasks at their next
 * check, embedding and reranking requests at once.
 */
import type { Middleware } from 'koa';
import type { CoreClient } from '../../core/client/core-client.js';
import { QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

/**
 * Middleware that gives the request `ctx.state.core`: `core` with its reads cancelled when the
 * client disconnects. (An AsyncLocalStorage carried the signal before: it switches on Node's
 * promise hooks, which cost every promise of every request ~15 us in all.)
 */
export function abortOnClose(core: CoreClient): Middleware<RequestState> {
  return async (ctx, next) => {
    const ctl = new AbortController();
    const onClose = (): void => {
      if (!ctx.res.writableFinished) ctl.abort(new QuarryError('cancelled', 'the client closed the connection before the response'));
    };
    ctx.res.once('close', onClose);
    ctx.state.core = core.withSignal(ctl.signal);
    try {
      await next();
    } finally {
      ctx.res.off('close', onClose);
    }
  };
}
