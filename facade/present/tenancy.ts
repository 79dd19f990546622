/** Organizations, users, keys and datasets on the wire. */
import { withConfigDefaults } from '../../core/domain/dataset-config.js';
import type {
  ApiKeyRecord,
  DatasetRecord,
  MembershipRecord,
  OrganizationRecord,
  UserRecord,
} from '../../core/domain/tenancy.js';
import { formatOptionalTimestamp, formatTimestamp } from '../../core/domain/time.js';

/** Organization. */
export function organization(o: OrganizationRecord): Record<string, unknown> {
  return {
    id: o.id,
    name: o.name,
    created_at: formatTimestamp(o.createdAt),
    updated_at: formatTimestamp(o.updatedAt),
    registerable: o.registerable,
    deleted: o.deleted,
    partner_configuration: o.partnerConfiguration,
  };
}

/** UserOrganization (a membership). */
export function membership(m: MembershipRecord): Record<string, unknown> {
  return {
    id: m.id,
    user_id: m.userId,
    organization_id: m.organizationId,
    role: m.role,
    scopes: m.scopes,
    created_at: formatTimestamp(m.createdAt),
    updated_at: formatTimestamp(m.updatedAt),
  };
}

/** SlimUser: the user with their memberships and organizations. */
export function slimUser(
  u: Pick<UserRecord, 'id' | 'email' | 'name' | 'createdAt'>,
  memberships: MembershipRecord[],
  orgs: OrganizationRecord[],
): Record<string, unknown> {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    created_at: formatTimestamp(u.createdAt),
    user_orgs: memberships.map(membership),
    orgs: orgs.map(organization),
  };
}

/** An API key's description (never the key or its hash). */
export function apiKey(k: ApiKeyRecord): Record<string, unknown> {
  return {
    id: k.id,
    name: k.name,
    organization_id: k.organizationId,
    user_id: k.userId,
    role: k.role,
    dataset_ids: k.datasetIds,
    scopes: k.scopes,
    default_params: k.defaultParams,
    expires_at: formatOptionalTimestamp(k.expiresAt),
    created_at: formatTimestamp(k.createdAt),
    updated_at: formatTimestamp(k.updatedAt),
  };
}

/** Secrets stored in a configuration (e.g. LLM_API_KEY) are never sent back. */
function redactSecrets(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).filter(([key]) => !/(API_KEY|SECRET|PASSWORD|TOKEN)$/i.test(key)));
}

/** Dataset, with its server configuration expanded with defaults. */
export function dataset(d: DatasetRecord): Record<string, unknown> {
  return {
    id: d.id,
    name: d.name,
    created_at: formatTimestamp(d.createdAt),
    updated_at: formatTimestamp(d.updatedAt),
    organization_id: d.organizationId,
    server_configuration: redactSecrets(withConfigDefaults(d.serverConfiguration)),
    tracking_id: d.trackingId,
    deleted: d.deleted ? 1 : 0,
  };
}
