/** Organizations and their API keys. */
import type { Logger } from 'pino';
import { badRequest, forbidden, notFound } from '../../core/domain/errors.js';
import { hashApiKey, newApiKey } from '../../core/domain/ids.js';
import { Role, roleName, type ApiKeyRecord } from '../../core/domain/tenancy.js';
import { organizationAccess, requireKeyHolder, requireUnrestricted } from '../access.js';
import type { Services } from '../context.js';
import { dropIndex } from '../indexing.js';
import * as present from '../present/tenancy.js';
import { pathUuid } from '../schemas/common.js';
import { parseCreateApiKey, parseCreateOrganization, parseOrganizationUsage, parseUpdateOrganization } from '../schemas/tenancy.js';
import { scopesAllow } from '../scopes.js';
import type { QuarryRouter } from './router.js';

/**
 * A key may mint keys only within its own restrictions, as it may only mint roles up to its own:
 * otherwise a key restricted to some routes or until a date could hand out a key without those
 * limits. (A key restricted to datasets may not mint keys at all: organizationAccess refuses it.)
 */
function checkNoWiderThan(caller: ApiKeyRecord, scopes: string[], expiresAt: number | null): void {
  if (caller.scopes.length > 0) {
    const allowed = new Set(caller.scopes.map((x) => x.trim().replace(/\s+/g, ' ').toLowerCase()));
    if (scopes.length === 0 || scopes.some((x) => !allowed.has(x.trim().replace(/\s+/g, ' ').toLowerCase()))) {
      throw forbidden("this API key has scopes; scopes of a new key must be a non-empty subset of the caller's scopes");
    }
  }
  if (caller.expiresAt !== null && (expiresAt === null || expiresAt > caller.expiresAt)) {
    throw forbidden("this API key expires; a new key must have an expires_at no later than the caller's");
  }
}

/** Registers organization and API-key routes. */
export function organizationRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  const flagDeleted = async (id: string, log: Logger) => {
    const org = await store.organizations.update(id, { deleted: true });
    // As for a deleted dataset: the core lets go of the indexes now, so it cannot snapshot them
    // again after the purge has removed their files.
    for (const datasetId of await store.datasets.idsOfOrganization(id)) await dropIndex(services, datasetId, log);
    // The flag is durable; the purge job is also re-enqueued by the job workers' sweep, so a
    // Redis outage delays the purge but never loses it.
    await services.jobs.purgeOrganization(id).catch((err: unknown) => log.warn({ err }, 'purge enqueue failed'));
    return org;
  };

  router.post('/api/organization', async (ctx) => {
    const caller = requireKeyHolder(ctx);
    const { name } = parseCreateOrganization(ctx.state.body);
    if (caller.kind === 'admin') {
      ctx.body = present.organization(await store.organizations.create({ name, ownerUserId: null }));
      return;
    }
    requireUnrestricted(caller);
    // Admin or above where the key lives, as a key never acts above its user's role there: a read
    // key (e.g. one published for a search box) must not be able to mint organizations.
    let role: number = caller.key.role;
    if (caller.user) {
      const membership = await store.users.membership(caller.user.id, caller.key.organizationId);
      if (membership && !scopesAllow(membership.scopes, ctx.method, ctx.path)) {
        throw forbidden(`the scopes of this user in organization ${membership.organizationId} do not include ${ctx.method} ${ctx.path}`);
      }
      role = Math.min(role, membership?.role ?? Role.Read);
    }
    if (role < Role.Admin) {
      throw forbidden(`creating an organization requires role ${roleName(Role.Admin)} or higher; the caller has ${roleName(role)}`);
    }
    if (!caller.user) throw badRequest('this API key is not bound to a user, so it cannot own a new organization; use ADMIN_API_KEY');
    const created = await store.organizations.create({
      name,
      ownerUserId: caller.user.id,
      maxPerOwner: services.config.maxOrganizationsPerUser,
    });
    ctx.body = present.organization(created);
  });

  router.get('/api/organization/usage/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    await organizationAccess(ctx, services, Role.Admin, id);
    ctx.body = present.organizationUsage(id, await store.organizations.usage(id));
  });

  // The reference's current form of the same report (a POST with an optional date range).
  router.post('/api/organization/usage/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    parseOrganizationUsage(ctx.state.body);
    await organizationAccess(ctx, services, Role.Admin, id);
    ctx.body = present.extendedOrganizationUsage(await store.organizations.usage(id));
  });

  router.get('/api/organization/users/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    const { organization } = await organizationAccess(ctx, services, Role.Admin, id);
    // Each user is shown with this organization only: their other memberships are not this admin's business.
    ctx.body = (await store.users.ofOrganization(id)).map(({ user, membership }) =>
      present.slimUser(user, [membership], [organization]),
    );
  });

  router.put('/api/organization', async (ctx) => {
    const body = parseUpdateOrganization(ctx.state.body);
    const { organization } = await organizationAccess(ctx, services, Role.Owner, body.organization_id);
    let updated = await store.organizations.update(organization.id, {
      name: body.name,
      partnerConfiguration: body.partner_configuration,
    });
    if (body.deleted === true) updated = await flagDeleted(organization.id, ctx.state.log);
    ctx.body = present.organization(updated);
  });

  router.delete('/api/organization/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    await organizationAccess(ctx, services, Role.Owner, id);
    await flagDeleted(id, ctx.state.log);
    ctx.status = 204;
  });

  router.post('/api/organization/api_key', async (ctx) => {
    const body = parseCreateApiKey(ctx.state.body);
    const access = await organizationAccess(ctx, services, Role.Admin);
    if (body.role > access.role) {
      throw forbidden(`cannot create a key with role ${roleName(body.role)} above the caller's role ${roleName(access.role)}`);
    }
    const datasetIds = body.dataset_ids ?? [];
    for (const id of datasetIds) {
      const ds = await store.datasets.get(id);
      if (!ds || ds.organizationId !== access.organization.id) {
        throw badRequest(`dataset_ids: dataset ${id} does not exist in organization ${access.organization.id}`);
      }
    }
    if (body.expires_at != null && body.expires_at <= Date.now()) throw badRequest('expires_at must be in the future');
    if (access.caller.kind === 'key') checkNoWiderThan(access.caller.key, body.scopes ?? [], body.expires_at ?? null);
    const key = newApiKey();
    await store.apiKeys.create({
      organizationId: access.organization.id,
      userId: access.caller.kind === 'key' ? (access.caller.key.userId ?? null) : null,
      name: body.name,
      hash: hashApiKey(key),
      role: body.role,
      datasetIds,
      scopes: body.scopes ?? [],
      defaultParams: body.default_params && Object.keys(body.default_params).length > 0 ? body.default_params : null,
      expiresAt: body.expires_at ?? null,
    });
    ctx.body = { api_key: key };
  });

  router.get('/api/organization/api_key', async (ctx) => {
    const access = await organizationAccess(ctx, services, Role.Admin);
    ctx.body = (await store.apiKeys.list(access.organization.id)).map(present.apiKey);
  });

  router.delete('/api/organization/api_key/:api_key_id', async (ctx) => {
    const id = pathUuid(ctx.params.api_key_id, 'api_key_id');
    const access = await organizationAccess(ctx, services, Role.Admin);
    const target = (await store.apiKeys.list(access.organization.id)).find((k) => k.id === id);
    if (!target) throw notFound(`API key ${id} does not exist in organization ${access.organization.id}`);
    if (target.role > access.role) {
      throw forbidden(`cannot delete a key with role ${roleName(target.role)} above the caller's role ${roleName(access.role)}`);
    }
    await store.apiKeys.delete(access.organization.id, id);
    ctx.status = 204;
  });

  // Registered last: the literal routes above (api_key) must win over this parameter.
  router.get('/api/organization/:organization_id', async (ctx) => {
    const id = pathUuid(ctx.params.organization_id, 'organization_id');
    const { organization } = await organizationAccess(ctx, services, Role.Read, id);
    ctx.body = present.organization(organization);
  });
}
