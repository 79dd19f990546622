/** Row <-> record conversion shared by the SQLite and PostgreSQL repositories (both stores keep the same column types: JSON as text, booleans as 0/1, epoch ms as integers). */
import type { ChunkRecord, IndexedChunkFields } from '../core/domain/chunk.js';
import type { GroupRecord } from '../core/domain/group.js';
import type { ChatRole, MessageRecord, RagRecord, RagType, TopicRecord } from '../core/domain/rag.js';
import type { RequestType, UserEvent, UserEventType } from '../core/domain/user-events.js';
import type {
  ApiKeyRecord,
  DatasetRecord,
  MembershipRecord,
  OrganizationRecord,
  RoleValue,
  UserRecord,
} from '../core/domain/tenancy.js';
import type { OrganizationUsage } from './repository.js';

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

/**
 * Chunk row to what the search core indexes of it: the metadata left as its JSON text, which
 * the shard keeps as it is until a filter reads it (see workers/shard/filter/field-store.ts).
 */
export function indexedChunkFromRow(r: Row): IndexedChunkFields {
  return {
    id: r.id,
    trackingId: r.tracking_id,
    chunkHtml: r.chunk_html,
    link: r.link,
    metadataJson: r.metadata,
    tagSet: fromJson(r.tag_set, []),
    timeStamp: r.time_stamp,
    location: r.lat === null || r.lon === null ? null : { lat: r.lat, lon: r.lon },
    numValue: r.num_value,
    fulltextContent: r.fulltext_content,
    convertHtmlToText: r.convert_html_to_text === 1,
    fulltextBoost: fromJson(r.fulltext_boost, null),
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

/**
 * Reads a JSON text column: `fallback` stands for null. A report's reader may also return it for
 * damaged text, so that one bad row does not fail the whole report.
 */
export type JsonColumn = <T>(text: unknown, fallback: T) => T;

/** The stores' reader: their rows are written by them, so damaged text is an error worth seeing. */
export const storedJson: JsonColumn = (text, fallback) => fromJson(text as string | null, fallback);

/** RAG analytics row (`rag_queries`) to record. */
export function ragFromRow(r: Row): RagRecord {
  return ragRecordFromRow(r, storedJson);
}

/**
 * RAG analytics row to record, its JSON read by `json`. Numbers go through `Number` because a
 * report may read them from an engine that gives BIGINT as another type.
 */
export function ragRecordFromRow(r: Row, json: JsonColumn): RagRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    ragType: r.rag_type as RagType,
    userMessage: r.user_message,
    searchId: r.search_id,
    topicId: r.topic_id,
    results: json(r.results, []),
    llmResponse: r.llm_response,
    topScore: Number(r.top_score),
    userId: r.user_id,
    metadata: json(r.metadata, null),
    promptTokens: Number(r.prompt_tokens),
    completionTokens: Number(r.completion_tokens),
    latencyMs: Number(r.latency),
    createdAt: Number(r.created_at),
  };
}

/** User event row (`user_events`) to record. */
export function userEventFromRow(r: Row): UserEvent {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    eventType: r.event_type as UserEventType,
    eventName: r.event_name,
    items: JSON.parse(r.items) ?? [],
    metadata: fromJson(r.metadata, null),
    userId: r.user_id,
    isConversion: r.is_conversion === 1,
    requestId: r.request_id,
    requestType: r.request_type as RequestType | null,
    location: r.location,
    position: r.position,
    clickedChunkId: r.clicked_chunk_id,
    revenue: r.revenue,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The start of the UTC calendar month of `ms`, in epoch ms (the usage's current month). */
export const monthStart = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

/** The columns of both stores' organization usage statement. */
export interface UsageRow {
  readonly datasets: number;
  readonly users: number;
  readonly chunks: number;
  readonly file_bytes: number;
  readonly searches: number;
  readonly answers: number;
  readonly answers_this_month: number;
  readonly events: number;
}

/** An organization's usage from its statement's row. */
export const usageFromRow = (r: UsageRow): OrganizationUsage => ({
  datasetCount: Number(r.datasets),
  userCount: Number(r.users),
  chunkCount: Number(r.chunks),
  fileBytes: Number(r.file_bytes),
  searchCount: Number(r.searches),
  answerCount: Number(r.answers),
  answersThisMonth: Number(r.answers_this_month),
  eventCount: Number(r.events),
});
