/**
 * Cancels the core calls of a request whose client went away (closed the connection before the
 * response was written), so the core stops work nobody waits for: shard tasks at their next
 * check, embedding and reranking requests at once.
 */
import type { Middleware } from 'koa';
import { withRequestSignal } from '../../core/client/request-signal.js';
import { QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

/** Middleware that runs the rest of the request under a signal aborted when its client disconnects. */
export function abortOnClose(): Middleware<RequestState> {
  return async (ctx, next) => {
    const ctl = new AbortController();
    const onClose = (): void => {
      if (!ctx.res.writableFinished) ctl.abort(new QuarryError('cancelled', 'the client closed the connection before the response'));
    };
    ctx.res.once('close', onClose);
    try {
      await withRequestSignal(ctl.signal, next);
    } finally {
      ctx.res.off('close', onClose);
    }
  };
}
