/** Row <-> record conversion shared by the SQLite and PostgreSQL repositories (both stores keep the same column types: JSON as text, booleans as 0/1, epoch ms as integers). */
import type { ChunkRecord } from '../core/domain/chunk.js';
import type { GroupRecord } from '../core/domain/group.js';
import type { ChatRole, MessageRecord, RagRecord, RagType, TopicRecord } from '../core/domain/rag.js';
import type {
  ApiKeyRecord,
  DatasetRecord,
  MembershipRecord,
  OrganizationRecord,
  RoleValue,
  UserRecord,
} from '../core/domain/tenancy.js';

/** JSON text of a value, or null for null/undefined. */
export const toJson = (value: unknown): string | null =>
  value === undefined || value === null ? null : JSON.stringify(value);

/** Parsed JSON text, or the fallback for null. */
export function fromJson<T>(text: string | null, fallback: T): T {
  return text === null ? fallback : (JSON.parse(text) as T);
}

type Row = Record<string, any>;

/** Chunk row to record. */
export function chunkFromRow(r: Row): ChunkRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    trackingId: r.tracking_id,
    chunkHtml: r.chunk_html,
    link: r.link,
    metadata: fromJson(r.metadata, null),
    tagSet: fromJson(r.tag_set, []),
    timeStamp: r.time_stamp,
    weight: r.weight,
    imageUrls: fromJson(r.image_urls, null),
    location: r.lat === null || r.lon === null ? null : { lat: r.lat, lon: r.lon },
    numValue: r.num_value,
    semanticContent: r.semantic_content,
    fulltextContent: r.fulltext_content,
    convertHtmlToText: r.convert_html_to_text === 1,
    fulltextBoost: fromJson(r.fulltext_boost, null),
    semanticBoost: fromJson(r.semantic_boost, null),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Group row to record. */
export function groupFromRow(r: Row): GroupRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    name: r.name,
    description: r.description,
    trackingId: r.tracking_id,
    metadata: fromJson(r.metadata, null),
    tagSet: fromJson(r.tag_set, []),
    fileId: r.file_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Organization row to record. */
export function organizationFromRow(r: Row): OrganizationRecord {
  return {
    id: r.id,
    name: r.name,
    registerable: r.registerable === 1,
    deleted: r.deleted === 1,
    partnerConfiguration: fromJson(r.partner_configuration, {}),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** User row to record. */
export function userFromRow(r: Row): UserRecord {
  return { id: r.id, email: r.email, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at };
}

/** Membership row to record. */
export function membershipFromRow(r: Row): MembershipRecord {
  return {
    id: r.id,
    userId: r.user_id,
    organizationId: r.organization_id,
    role: r.role as RoleValue,
    scopes: fromJson(r.scopes, null),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** API key row to record. */
export function apiKeyFromRow(r: Row): ApiKeyRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    userId: r.user_id,
    name: r.name,
    role: r.role as RoleValue,
    datasetIds: fromJson(r.dataset_ids, []),
    scopes: fromJson(r.scopes, []),
    defaultParams: fromJson(r.default_params, null),
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Dataset row to record. */
export function datasetFromRow(r: Row): DatasetRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    trackingId: r.tracking_id,
    serverConfiguration: fromJson(r.server_configuration, {}),
    deleted: r.deleted === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Topic row to record. */
export function topicFromRow(r: Row): TopicRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    name: r.name,
    ownerId: r.owner_id,
    metadata: fromJson(r.metadata, null),
    deleted: r.deleted === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Message row to record. */
export function messageFromRow(r: Row): MessageRecord {
  return {
    id: r.id,
    topicId: r.topic_id,
    datasetId: r.dataset_id,
    sortOrder: r.sort_order,
    role: r.role as ChatRole,
    content: r.content,
    deleted: r.deleted === 1,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** RAG analytics row (`rag_queries`) to record. */
export function ragFromRow(r: Row): RagRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    ragType: r.rag_type as RagType,
    userMessage: r.user_message,
    searchId: r.search_id,
    topicId: r.topic_id,
    results: JSON.parse(r.results),
    llmResponse: r.llm_response,
    topScore: r.top_score,
    userId: r.user_id,
    metadata: fromJson(r.metadata, null),
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    latencyMs: r.latency,
    createdAt: r.created_at,
  };
}
