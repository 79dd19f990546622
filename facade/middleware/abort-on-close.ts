/**
 * Cancels the core calls of a request whose client went away (closed the connection before the
 * response was written), so the core stops work nobody waits for: shard tasks at their next
 * check, embedding and reranking requests at once.
 */
import type { Socket } from 'node:net';
import type { Middleware } from 'koa';
import type { CoreClient } from '../../core/client/core-client.js';
import { QuarryError } from '../../core/domain/errors.js';
import type { RequestState } from '../context.js';

/**
 * Middleware that gives the request `ctx.state.core`: `core` with its reads cancelled when the
 * client disconnects. (An AsyncLocalStorage carried the signal before: it switches on Node's
 * promise hooks, which cost every promise of every request ~15 us in all.)
 *
 * The signal belongs to the connection, not to each request: an HTTP/1.1 connection carries one
 * request at a time, and its client going away is the connection closing. Node 20 keeps every
 * AbortSignal through the young-generation collections, so one per request was copied and
 * promoted by every scavenge (the search p99); one per keep-alive connection is not.
 */
export function abortOnClose(core: CoreClient): Middleware<RequestState> {
  const bound = new WeakMap<Socket, CoreClient>();
  return async (ctx, next) => {
    const socket = ctx.req.socket;
    let mine = bound.get(socket);
    if (!mine) {
      const ctl = new AbortController();
      // Only a call still running sees it: a finished call's listeners are gone.
      const abort = (): void => ctl.abort(new QuarryError('cancelled', 'the client closed the connection before the response'));
      if (socket.destroyed) abort();
      else socket.once('close', abort);
      mine = core.withSignal(ctl.signal);
      bound.set(socket, mine);
    }
    ctx.state.core = mine;
    await next();
  };
}
