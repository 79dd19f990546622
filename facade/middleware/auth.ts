/**
 * Resolves credentials into `ctx.state.caller`, from the headers only (it runs before the body is
 * read). A request with no credentials passes on to the gate; a request with wrong, expired or
 * out-of-scope credentials stops here with 401/403.
 */
import type { Middleware } from 'koa';
import { forbidden, unauthorized } from '../../core/domain/errors.js';
import { constantTimeEqual, hashApiKey } from '../../core/domain/ids.js';
import { formatTimestamp } from '../../core/domain/time.js';
import type { RequestState, Services } from '../context.js';
import { scopesAllow } from '../scopes.js';

/** The raw key of a request: `Authorization` (raw or `Bearer`), else `x-api-key`. */
export function presentedKey(authorization: string, xApiKey: string): string | undefined {
  const raw = (authorization || xApiKey).trim();
  if (!raw) return undefined;
  // "Bearer" then whitespace then the key; a prefix test, not a regex over the header.
  if (raw.length > 7 && raw.slice(0, 6).toLowerCase() === 'bearer' && raw.charCodeAt(6) <= 32) {
    const key = raw.slice(7).trim();
    if (key) return key;
  }
  return raw;
}

/** Whether `X-Shopify-Authorization` carries the configured secret (never when none is configured). */
export function shopifySecretMatches(header: string, secret: string): boolean {
  return secret !== '' && header !== '' && constantTimeEqual(header, secret);
}

/** Middleware that authenticates the request's API key, if any. */
export function authenticate(services: Services): Middleware<RequestState> {
  const { config, store } = services;
  return async (ctx, next) => {
    const key = presentedKey(ctx.get('authorization'), ctx.get('x-api-key'));
    if (key === undefined) return next();
    if (config.adminApiKey && constantTimeEqual(key, config.adminApiKey)) {
      ctx.state.caller = { kind: 'admin' };
      return next();
    }
    const hash = hashApiKey(key);
    const record = await store.apiKeys.findByHash(hash);
    if (!record) throw unauthorized('the API key is not valid');
    if (record.expiresAt !== null && record.expiresAt < Date.now()) {
      throw unauthorized(`the API key expired at ${formatTimestamp(record.expiresAt)} UTC`);
    }
    if (!scopesAllow(record.scopes, ctx.method, ctx.path)) {
      throw forbidden(`this API key's scopes do not include ${ctx.method} ${ctx.path}`);
    }
    const user = record.userId ? ((await store.users.get(record.userId)) ?? null) : null;
    ctx.state.caller = { kind: 'key', key: record, user };
    return next();
  };
}
