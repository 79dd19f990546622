/**
 * Authorization: which organization or dataset a request is about (from `TR-Organization` /
 * `TR-Dataset`), and whether the caller's role there is high enough.
 */
import type { Context } from 'koa';
import { badRequest, forbidden, notFound, unauthorized } from '../core/domain/errors.js';
import { isUuid } from '../core/domain/ids.js';
import {
  Role,
  roleName,
  type DatasetRecord,
  type OrganizationRecord,
  type RoleValue,
} from '../core/domain/tenancy.js';
import type { Caller, RequestState, Services } from './context.js';
import { scopesAllow } from './scopes.js';

/** Response shape versions of the wire. */
export type ApiVersion = 'V1' | 'V2';

/** A caller's standing in one organization. */
export interface OrganizationAccess {
  readonly caller: Caller;
  readonly organization: OrganizationRecord;
  readonly role: RoleValue;
}

/** A caller's standing in one dataset. */
export interface DatasetAccess extends OrganizationAccess {
  readonly dataset: DatasetRecord;
  /** Response shape asked by `X-API-Version`, else the organization's default. */
  readonly apiVersion: ApiVersion;
}

type Ctx = Context & { state: RequestState };

/** The authenticated caller, or 401. */
export function requireCaller(ctx: Ctx): Caller {
  if (!ctx.state.caller) {
    throw unauthorized('send an API key in the Authorization header (raw or "Bearer <key>") or in x-api-key');
  }
  return ctx.state.caller;
}

/** The caller's role in an organization, or 403 with the reason. */
async function roleIn(ctx: Ctx, services: Services, caller: Caller, organization: OrganizationRecord): Promise<RoleValue> {
  if (caller.kind === 'admin') return Role.Owner;
  const { key } = caller;
  if (key.organizationId !== organization.id) {
    throw forbidden(`this API key belongs to another organization than ${organization.id}`);
  }
  let role = key.role;
  if (key.userId) {
    const membership = await services.store.users.membership(key.userId, organization.id);
    if (!membership) throw forbidden(`the user of this API key is not a member of organization ${organization.id}`);
    if (!scopesAllow(membership.scopes, ctx.method, ctx.path)) {
      throw forbidden(`the scopes of this user in organization ${organization.id} do not include ${ctx.method} ${ctx.path}`);
    }
    // A key never acts above its user's current role: demoting the user demotes the keys.
    role = Math.min(role, membership.role) as RoleValue;
  }
  return role;
}

function checkRole(role: RoleValue, minRole: RoleValue, ctx: Ctx): void {
  if (role < minRole) {
    throw forbidden(`${ctx.method} ${ctx.path} requires role ${roleName(minRole)} or higher; the caller has ${roleName(role)}`);
  }
}

/** Reads and checks `TR-Organization` (or `x-organization`); undefined when absent. */
export function organizationHeader(ctx: Ctx): string | undefined {
  const value = (ctx.get('tr-organization') || ctx.get('x-organization')).trim();
  if (!value) return undefined;
  if (!isUuid(value)) throw badRequest(`Could not convert Organization to UUID: TR-Organization "${value}" is not a UUID`);
  return value.toLowerCase();
}

/** Loads an organization the caller may see with at least `minRole`. */
export async function organizationAccess(
  ctx: Ctx,
  services: Services,
  minRole: RoleValue,
  organizationId: string | undefined = organizationHeader(ctx),
): Promise<OrganizationAccess> {
  const caller = requireCaller(ctx);
  if (organizationId === undefined) throw badRequest('the TR-Organization header is required for this route');
  const organization = await services.store.organizations.get(organizationId);
  if (!organization) throw notFound(`organization ${organizationId} does not exist`);
  const role = await roleIn(ctx, services, caller, organization);
  checkRole(role, minRole, ctx);
  return { caller, organization, role };
}

/** Parses `X-API-Version`; undefined when absent. */
function requestedVersion(ctx: Ctx): ApiVersion | undefined {
  const raw = ctx.get('x-api-version').trim();
  if (!raw) return undefined;
  if (/^(v1|1\.0|1)$/i.test(raw)) return 'V1';
  if (/^(v2|2\.0|2)$/i.test(raw)) return 'V2';
  throw badRequest(`X-API-Version must be V1 or V2, got "${raw}"`);
}

/** Resolves a dataset by id or by tracking id (which needs the organization). */
export async function findDataset(
  services: Services,
  ref: string,
  organizationId: string | undefined,
): Promise<DatasetRecord> {
  let dataset: DatasetRecord | undefined;
  if (isUuid(ref)) {
    dataset = await services.store.datasets.get(ref.toLowerCase());
  } else {
    if (organizationId === undefined) {
      throw badRequest('Using Dataset Tracking IDs requires providing the TR-Organization header');
    }
    dataset = await services.store.datasets.getByTrackingId(organizationId, ref);
  }
  if (!dataset) throw notFound(`Could not find dataset "${ref}"`);
  if (organizationId !== undefined && dataset.organizationId !== organizationId) {
    throw forbidden(`dataset ${dataset.id} does not belong to organization ${organizationId}`);
  }
  return dataset;
}

/**
 * Loads the dataset named by `TR-Dataset` (or `x-dataset`, or `ref` when the route names it in
 * its path) and checks the caller's role and the key's dataset restriction.
 */
export async function datasetAccess(
  ctx: Ctx,
  services: Services,
  minRole: RoleValue,
  ref?: string,
): Promise<DatasetAccess> {
  const caller = requireCaller(ctx);
  const header = (ctx.get('tr-dataset') || ctx.get('x-dataset')).trim();
  const which = ref ?? header;
  if (!which) throw badRequest('the TR-Dataset header is required for this route (a dataset id, or a tracking id with TR-Organization)');
  const organizationId = organizationHeader(ctx);
  const dataset = await findDataset(services, which, organizationId);
  const organization = await services.store.organizations.get(dataset.organizationId);
  if (!organization) throw notFound(`Could not find dataset "${which}"`);
  const role = await roleIn(ctx, services, caller, organization);
  if (caller.kind === 'key' && caller.key.datasetIds.length > 0 && !caller.key.datasetIds.includes(dataset.id)) {
    throw forbidden(`this API key is restricted to other datasets than ${dataset.id}`);
  }
  checkRole(role, minRole, ctx);
  const apiVersion =
    requestedVersion(ctx) ?? (organization.createdAt >= services.config.v2VersioningDateMs ? 'V2' : 'V1');
  ctx.set('x-api-version', apiVersion === 'V1' ? '1.0' : '2.0');
  return { caller, organization, role, dataset, apiVersion };
}
