/**
 * The edge gate, run after `authenticate` and before the body is read: names the matched route
 * and refuses a request without credentials from its headers alone, so that nobody without a key
 * can make the process buffer and parse a body (a 127 MiB `[[],[],...]` once ran it out of memory).
 * The few routes that need no key pass: health, the presigned blob URLs (their signature is the
 * credential, checked by the route), create_api_only_user with the configured
 * X-Shopify-Authorization secret, and the read routes of a public dataset.
 */
import type { Middleware } from 'koa';
import { QuarryError, unauthorized } from '../../core/domain/errors.js';
import { findDataset, NO_KEY_MESSAGE, organizationHeader } from '../access.js';
import type { RequestState, Services } from '../context.js';
import { isPublicDataset, PUBLIC_READ_ROUTES } from '../public-dataset.js';
import { BLOB_ROUTES } from '../routes/blob.js';
import type { QuarryRouter } from '../routes/router.js';
import { shopifySecretMatches } from './auth.js';

/** Middleware that sets `ctx.state.route` and lets only keyless requests that need no key through. */
export function gate(services: Services, router: QuarryRouter): Middleware<RequestState> {
  const { config } = services;

  /** The id of the public dataset `TR-Dataset` names, if it names one; header-only, no body. */
  const publicDatasetId = async (ctx: Parameters<Middleware<RequestState>>[0]): Promise<string | undefined> => {
    const ref = (ctx.get('tr-dataset') || ctx.get('x-dataset')).trim();
    if (!ref) return undefined;
    try {
      const dataset = await findDataset(services, ref, organizationHeader(ctx));
      return isPublicDataset(dataset.serverConfiguration) ? dataset.id : undefined;
    } catch (err) {
      // Absent, malformed or private all answer the same 401: no existence leak to the keyless.
      if (err instanceof QuarryError) return undefined;
      throw err;
    }
  };

  return async (ctx, next) => {
    const layer = router.match(ctx.path, ctx.method).pathAndMethod.find((l) => l.methods.length > 0);
    if (layer) ctx.state.route = `${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${String(layer.path)}`;
    // Authenticated, or no route (the router answers 404/405 without reading anything).
    if (ctx.state.caller || ctx.state.route === undefined) return next();
    const route = ctx.state.route;
    if (route === 'GET /api/health' || BLOB_ROUTES.has(route)) return next();
    if (route === 'POST /api/auth/create_api_only_user' && shopifySecretMatches(ctx.get('x-shopify-authorization'), config.shopifySecretKey)) {
      return next();
    }
    if (PUBLIC_READ_ROUTES.has(route)) {
      const datasetId = await publicDatasetId(ctx);
      if (datasetId !== undefined) {
        ctx.state.caller = { kind: 'public', datasetId };
        return next();
      }
    }
    // Nobody asked for this upload: close rather than let Node drain it on a kept-alive socket (a
    // client still streaming a large body may see the reset instead of this 401; key holders
    // refused later keep the connection and read their 4xx).
    ctx.set('Connection', 'close');
    throw unauthorized(NO_KEY_MESSAGE);
  };
}
