/** Users: who am I, API-only users, and role/scope changes within an organization. */
import { badRequest, forbidden, unauthorized } from '../../core/domain/errors.js';
import { hashApiKey, newApiKey } from '../../core/domain/ids.js';
import { Role, roleName } from '../../core/domain/tenancy.js';
import { organizationAccess, requireKeyHolder } from '../access.js';
import type { Services } from '../context.js';
import { presentedKey, shopifySecretMatches } from '../middleware/auth.js';
import * as present from '../present/tenancy.js';
import { parseCreateApiOnlyUser, parseUpdateUser } from '../schemas/tenancy.js';
import type { QuarryRouter } from './router.js';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Registers user and auth routes. */
export function userRoutes(router: QuarryRouter, services: Services): void {
  const { store, config } = services;

  router.get('/api/auth/me', async (ctx) => {
    const caller = requireKeyHolder(ctx);
    if (caller.kind === 'admin') {
      ctx.body = present.slimUser({ id: NIL_UUID, email: '', name: 'admin', createdAt: 0 }, [], []);
      return;
    }
    const { key, user } = caller;
    if (user) {
      ctx.body = present.slimUser(user, await store.users.memberships(user.id), await store.users.organizations(user.id));
      return;
    }
    // A key minted by the operator has no user: describe the key as a member of its organization.
    const org = await store.organizations.get(key.organizationId);
    ctx.body = present.slimUser(
      { id: key.id, email: '', name: key.name, createdAt: key.createdAt },
      [{ id: key.id, userId: key.id, organizationId: key.organizationId, role: key.role, scopes: key.scopes.length ? key.scopes : null, createdAt: key.createdAt, updatedAt: key.updatedAt }],
      org ? [org] : [],
    );
  });

  router.post('/api/auth/create_api_only_user', async (ctx) => {
    const key = presentedKey(ctx.get('authorization'), ctx.get('x-api-key'));
    const viaAdmin = ctx.state.caller?.kind === 'admin' && key !== undefined;
    const viaSecret = shopifySecretMatches(ctx.get('x-shopify-authorization'), config.shopifySecretKey);
    if (!viaAdmin && !viaSecret) {
      throw unauthorized('create_api_only_user needs ADMIN_API_KEY in Authorization (or the configured X-Shopify-Authorization secret)');
    }
    const body = parseCreateApiOnlyUser(ctx.state.body);
    const apiKey = newApiKey();
    const { user, organization } = await store.users.createApiOnly({
      email: body.user_email.toLowerCase(),
      name: body.user_name,
      organizationName: body.user_email.split('@')[0] || body.user_name,
      keyName: 'User API Key',
      keyHash: hashApiKey(apiKey),
    });
    ctx.body = {
      user: present.slimUser(user, await store.users.memberships(user.id), await store.users.organizations(user.id)),
      organization_id: organization.id,
      api_key: apiKey,
    };
  });

  router.put('/api/user', async (ctx) => {
    const body = parseUpdateUser(ctx.state.body);
    const access = await organizationAccess(ctx, services, Role.Read);
    const self = access.caller.kind === 'key' ? access.caller.key.userId : null;
    const target = body.user_id ?? self;
    if (!target) throw badRequest('user_id is required: this API key is not bound to a user');
    if (target !== self && access.role < Role.Admin) {
      throw forbidden(`updating another user requires role ${roleName(Role.Admin)} or higher; the caller has ${roleName(access.role)}`);
    }
    const membership = await store.users.membership(target, access.organization.id);
    if (!membership) throw badRequest(`user ${target} is not a member of organization ${access.organization.id}`);
    if (body.role != null && body.role > access.role) {
      throw forbidden(`cannot assign role ${roleName(body.role)} above the caller's role ${roleName(access.role)}`);
    }
    if (membership.role > access.role) {
      throw forbidden(`cannot change a user whose role ${roleName(membership.role)} is above the caller's role ${roleName(access.role)}`);
    }
    await store.users.updateMembership(target, access.organization.id, {
      role: body.role ?? undefined,
      scopes: body.scopes === undefined ? undefined : body.scopes,
    });
    ctx.status = 204;
  });
}
