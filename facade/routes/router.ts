/** The router type every route module registers on. */
import Router from '@koa/router';
import type { RequestState } from '../context.js';

/** Router with quarry's request state. */
export type QuarryRouter = Router<RequestState>;

/** The context a route handler of {@link QuarryRouter} receives. */
export type QuarryContext = Parameters<Parameters<QuarryRouter['post']>[1]>[0];

/** A new router. */
export const newRouter = (): QuarryRouter => new Router<RequestState>();
