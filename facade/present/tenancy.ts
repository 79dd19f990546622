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
import type { OrganizationUsage } from '../../store/repository.js';

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

/** OrganizationUsageCount (GET /api/organization/usage/{id}): `file_storage` in bytes, `message_count` the RAG answers recorded. */
export function organizationUsage(organizationId: string, u: OrganizationUsage): Record<string, unknown> {
  return {
    id: organizationId,
    org_id: organizationId,
    dataset_count: u.datasetCount,
    user_count: u.userCount,
    file_storage: u.fileBytes,
    message_count: u.answerCount,
    chunk_count: u.chunkCount,
  };
}

/**
 * ExtendedOrganizationUsageCount (POST /api/organization/usage/{id}): searches, RAG answers and user
 * events as the analytics keep them (their daily rollups); the counters quarry does not keep
 * (tokens, ingested bytes, OCR pages, scraped pages) are 0.
 */
export function extendedOrganizationUsage(u: OrganizationUsage): Record<string, unknown> {
  return {
    search_tokens: 0,
    message_tokens: 0,
    dataset_count: u.datasetCount,
    user_count: u.userCount,
    file_storage: u.fileBytes,
    message_count: u.answerCount,
    search_count: u.searchCount,
    chunk_count: u.chunkCount,
    bytes_ingested: 0,
    tokens_ingested: 0,
    ocr_pages_ingested: 0,
    website_pages_scraped: 0,
    events_ingested: u.eventCount,
    current_months_message_count: u.answersThisMonth,
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

/**
 * Secrets stored in a configuration (e.g. LLM_API_KEY) are never sent back, nor the key a public
 * dataset publishes (PUBLIC_DATASET.api_key), which the reference does not serialize either.
 */
function redactSecrets(config: Record<string, unknown>): Record<string, unknown> {
  const out = Object.fromEntries(Object.entries(config).filter(([key]) => !/(API_KEY|SECRET|PASSWORD|TOKEN)$/i.test(key)));
  const published = out.PUBLIC_DATASET;
  if (typeof published === 'object' && published !== null && !Array.isArray(published) && 'api_key' in published) {
    const { api_key: _secret, ...rest } = published as Record<string, unknown>;
    out.PUBLIC_DATASET = rest;
  }
  return out;
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
