/** The router type every route module registers on. */
import Router from '@koa/router';
import type { RequestState } from '../context.js';

/** Router with quarry's request state. */
export type QuarryRouter = Router<RequestState>;

/** The context a route handler of {@link QuarryRouter} receives. */
export type QuarryContext = Parameters<Parameters<QuarryRouter['post']>[1]>[0];

/** Most (method, path) pairs whose route match {@link newRouter} keeps (the set is emptied when full). */
export const MATCH_CACHE_ENTRIES = 1024;
/** Longest path whose match is kept: a URL may be ~16 KB, and 1,024 of those would hold 16 MB. */
export const MATCH_CACHE_PATH_CHARS = 256;

/**
 * A new router whose `match` is remembered per method and path. @koa/router's own tests every
 * route's pattern and calls its debug logger once per route, which builds an arguments list even
 * when debugging is off: ~4.5 KB of garbage per match, and every request is matched twice (the
 * gate names the route before the body is read, then the router dispatches). Each answer is a
 * copy, so that nothing done to one request's match reaches another; a route registered later
 * empties the memory, and a long path is matched without it.
 */
export const newRouter = (): QuarryRouter => {
  const router = new Router<RequestState>();
  const match = router.match.bind(router);
  const known = new Map<string, ReturnType<QuarryRouter['match']>>();
  let routes = 0;
  router.match = (path, method) => {
    if (path.length > MATCH_CACHE_PATH_CHARS) return match(path, method);
    if (router.stack.length !== routes) {
      known.clear();
      routes = router.stack.length;
    }
    const key = `${method} ${path}`;
    let found = known.get(key);
    if (found === undefined) {
      if (known.size >= MATCH_CACHE_ENTRIES) known.clear();
      found = match(path, method);
      known.set(key, found);
    }
    return { path: [...found.path], pathAndMethod: [...found.pathAndMethod], route: found.route };
  };
  return router;
};
