/**
 * Authorization: which organization or dataset a request is about (from `TR-Organization` /
 * `TR-Dataset`), and whether the caller's role there is high enough.
 */
import type { Context } from 'koa';
import { badRequest, forbidden, notFound, QuarryError, unauthorized } from '../core/domain/errors.js';
import { isUuid } from '../core/domain/ids.js';
import {
  Role,
  roleName,
  type DatasetRecord,
  type MembershipRecord,
  type OrganizationRecord,
  type RoleValue,
} from '../core/domain/tenancy.js';
import type { DatasetRef } from '../store/repository.js';
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

/** Message of every refusal for missing credentials. */
export const NO_KEY_MESSAGE = 'send an API key in the Authorization header (raw or "Bearer <key>") or in x-api-key';

/** The authenticated caller, or 401. */
export function requireCaller(ctx: Ctx): Caller {
  if (!ctx.state.caller) throw unauthorized(NO_KEY_MESSAGE);
  return ctx.state.caller;
}

/** The caller when it holds a key (or is the operator), or 401: keyless public reads stop here. */
export function requireKeyHolder(ctx: Ctx): Exclude<Caller, { kind: 'public' }> {
  const caller = requireCaller(ctx);
  if (caller.kind === 'public') throw unauthorized(NO_KEY_MESSAGE);
  return caller;
}

/**
 * The caller's role in an organization, or 403 with the reason. A key of another organization
 * gets `outsider` (a 404 as if the thing were absent): a 403 would confirm that it exists and
 * say which organization owns it.
 */
async function roleIn(
  ctx: Ctx,
  caller: Caller,
  organization: OrganizationRecord,
  outsider: () => QuarryError,
  membershipOf: (userId: string) => Promise<MembershipRecord | undefined>,
): Promise<RoleValue> {
  if (caller.kind === 'admin') return Role.Owner;
  if (caller.kind === 'public') throw unauthorized(NO_KEY_MESSAGE);
  const { key } = caller;
  if (key.organizationId !== organization.id) throw outsider();
  let role = key.role;
  if (key.userId) {
    const membership = await membershipOf(key.userId);
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

/** Options of {@link organizationAccess}. */
export interface OrganizationAccessOptions {
  /**
   * Let a key restricted to some datasets through (the route must then show only those datasets).
   * Off by default: a key restricted to one dataset must not act on the whole organization
   * (delete it, list or revoke its keys, change users, create datasets).
   */
  readonly allowDatasetRestricted?: boolean;
}

/** Refuses a key restricted to datasets on a route about the whole organization (403). */
export function requireUnrestricted(caller: Caller): void {
  if (caller.kind === 'key' && caller.key.datasetIds.length > 0) {
    throw forbidden(
      `this API key is restricted to datasets ${caller.key.datasetIds.join(', ')}; organization, API-key, user and dataset-creation routes need a key without dataset_ids`,
    );
  }
}

/** Loads an organization the caller may see with at least `minRole`. */
export async function organizationAccess(
  ctx: Ctx,
  services: Services,
  minRole: RoleValue,
  organizationId: string | undefined = organizationHeader(ctx),
  options: OrganizationAccessOptions = {},
): Promise<OrganizationAccess> {
  const caller = requireCaller(ctx);
  if (organizationId === undefined) throw badRequest('the TR-Organization header is required for this route');
  const absent = () => notFound(`organization ${organizationId} does not exist`);
  const organization = await services.store.organizations.get(organizationId);
  if (!organization) throw absent();
  const role = await roleIn(ctx, caller, organization, absent, (userId) => services.store.users.membership(userId, organization.id));
  if (!options.allowDatasetRestricted) requireUnrestricted(caller);
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

/** A dataset reference of a request: an id, or a tracking id (which needs the organization, else 400). */
function datasetRef(ref: string, organizationId: string | undefined): DatasetRef {
  if (isUuid(ref)) return { id: ref.toLowerCase() };
  if (organizationId === undefined) throw badRequest('Using Dataset Tracking IDs requires providing the TR-Organization header');
  return { organizationId, trackingId: ref };
}

/** The dataset found, or 404 when none or (a dataset of another organization than the one named is absent from it) another's. */
function foundIn<T extends { organizationId: string }>(found: T | undefined, ref: string, organizationId: string | undefined): T {
  if (!found || (organizationId !== undefined && found.organizationId !== organizationId)) throw notFound(`Could not find dataset "${ref}"`);
  return found;
}

/** Resolves a dataset by id or by tracking id (which needs the organization). */
export async function findDataset(
  services: Services,
  ref: string,
  organizationId: string | undefined,
): Promise<DatasetRecord> {
  const which = datasetRef(ref, organizationId);
  const { datasets } = services.store;
  return foundIn('id' in which ? await datasets.get(which.id) : await datasets.getByTrackingId(which.organizationId, which.trackingId), ref, organizationId);
}

/** A dataset with its organization, and how to read a user's membership there. */
interface Standing {
  readonly dataset: DatasetRecord;
  readonly organization: OrganizationRecord;
  readonly membershipOf: (userId: string) => Promise<MembershipRecord | undefined>;
}

/**
 * The dataset named by `ref`, its organization and the key's user's membership: one read on a
 * store whose reads are round trips (PostgreSQL's `standing`, never cached, so a revoked
 * membership or a deleted dataset shows on the next request); else read one by one, from the
 * store's caches (SQLite).
 */
async function standingOf(services: Services, caller: Caller, ref: string, organizationId: string | undefined): Promise<Standing> {
  const { store } = services;
  const absent = () => notFound(`Could not find dataset "${ref}"`);
  if (store.datasets.standing) {
    const userId = caller.kind === 'key' ? caller.key.userId : null;
    const found = await store.datasets.standing(datasetRef(ref, organizationId), userId);
    const dataset = foundIn(found?.dataset, ref, organizationId);
    return { dataset, organization: found!.organization, membershipOf: async () => found!.membership };
  }
  const dataset = await findDataset(services, ref, organizationId);
  const organization = await store.organizations.get(dataset.organizationId);
  if (!organization) throw absent();
  return { dataset, organization, membershipOf: (userId) => store.users.membership(userId, organization.id) };
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
  const { dataset, organization, membershipOf } = await standingOf(services, caller, which, organizationId);
  const absent = () => notFound(`Could not find dataset "${which}"`);
  let role: RoleValue;
  if (caller.kind === 'public') {
    // The gate let a keyless request through for the public dataset of TR-Dataset only.
    if (caller.datasetId !== dataset.id) throw unauthorized(NO_KEY_MESSAGE);
    role = Role.Read;
  } else {
    role = await roleIn(ctx, caller, organization, absent, membershipOf);
  }
  if (caller.kind === 'key' && caller.key.datasetIds.length > 0 && !caller.key.datasetIds.includes(dataset.id)) {
    throw forbidden(`this API key is restricted to other datasets than ${dataset.id}`);
  }
  checkRole(role, minRole, ctx);
  const apiVersion =
    requestedVersion(ctx) ?? (organization.createdAt >= services.config.v2VersioningDateMs ? 'V2' : 'V1');
  ctx.set('x-api-version', apiVersion === 'V1' ? '1.0' : '2.0');
  return { caller, organization, role, dataset, apiVersion };
}
