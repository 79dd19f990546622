/**
 * `PUT /api/analytics/events` bodies, internally tagged on `event_type`, and the records each one
 * stores: view, add_to_cart, click, purchase and filter_clicked become user events; search, rag
 * and recommendation become records of their own analytics tables (and a rating when one is given).
 */
import { z } from 'zod';
import type { RecommendationRecord, SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import { QuarryError } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { RagRecord } from '../../core/domain/rag.js';
import { REQUEST_TYPES, type QueryRating, type UserEvent, type UserEventType } from '../../core/domain/user-events.js';
import type { EventWrites } from '../analytics/event-writer.js';
import { boundedArray, boundedJson, finite, parse, requireBody, trackingIdRef, uuid } from './common.js';
import { MESSAGE_CONTENT_MAX_LENGTH, storableKey, storableText } from './message.js';

/** The bounds of one event. */
export const EVENT_LIMITS = Object.freeze({
  /** Longest `event_name`. */
  eventNameLength: 1024,
  /** Longest `location`. */
  locationLength: 1024,
  /** Most `items` (view, add_to_cart, purchase), `results`, and ids of each recommendation list. */
  items: 1000,
  /** Longest item id of a view or add_to_cart (an item is a chunk id or tracking id). */
  itemLength: LIMITS.trackingIdLength,
  /** Largest click position (the column is a 32-bit integer). */
  position: 2_147_483_647,
  /** Longest rating `note`. */
  noteLength: 4096,
  /** Longest `llm_response` of a rag event. */
  llmResponseLength: LIMITS.ragMessageLength,
});

/** Every `event_type` of the body: the user events, then the three analytics records. */
export const SEND_EVENT_TYPES = ['view', 'add_to_cart', 'click', 'purchase', 'filter_clicked', 'search', 'rag', 'recommendation'] as const;

/** The search kinds a search event may name (`search_type`). */
const SEARCH_KINDS = ['search', 'search_over_groups', 'autocomplete', 'search_within_groups', 'rag'] as const satisfies readonly SearchKind[];

const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const request = z.object({ request_type: z.enum(REQUEST_TYPES), request_id: uuid });
const isConversion = optional(z.boolean());
const metadata = boundedJson.optional();
const itemIds = boundedArray(storableKey(EVENT_LIMITS.itemLength), EVENT_LIMITS.items, 'items');
const results = boundedArray(z.unknown(), EVENT_LIMITS.items, 'results');
const idList = boundedArray(uuid, EVENT_LIMITS.items, 'ids');
const trackingIdList = boundedArray(trackingIdRef, EVENT_LIMITS.items, 'tracking ids');
const userId = optional(storableKey(LIMITS.userIdLength));
/** A token count (the reference's u64). */
const tokens = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const rating = z.object({
  rating: z.number().int().min(-2_147_483_648).max(2_147_483_647),
  note: optional(storableText(EVENT_LIMITS.noteLength)),
  metadata,
});

/** Fields every user event (view … filter_clicked) has. */
const userEventFields = {
  event_name: storableKey(EVENT_LIMITS.eventNameLength),
  request: optional(request),
  user_id: userId,
  location: optional(storableText(EVENT_LIMITS.locationLength)),
};

const SCHEMAS = {
  view: z.object({ ...userEventFields, items: itemIds, metadata }),
  add_to_cart: z.object({ ...userEventFields, items: itemIds, metadata, is_conversion: isConversion }),
  click: z.object({
    ...userEventFields,
    clicked_items: optional(z.object({ chunk_id: uuid, position: z.number().int().min(0).max(EVENT_LIMITS.position) })),
    metadata,
    is_conversion: isConversion,
  }),
  purchase: z.object({
    ...userEventFields,
    items: boundedArray(z.object({ tracking_id: storableKey(LIMITS.trackingIdLength), revenue: finite }), EVENT_LIMITS.items, 'items'),
    metadata,
    is_conversion: isConversion,
  }),
  // The reference has no metadata here: the clicked filters (`{"<filter_type>::<field>": value}`) are the metadata.
  filter_clicked: z.object({ ...userEventFields, items: boundedJson.pipe(z.record(z.string(), z.unknown())), is_conversion: isConversion }),
  search: z.object({
    query: storableText(LIMITS.queryLength),
    tokens,
    search_type: optional(z.enum(SEARCH_KINDS)),
    request_params: metadata,
    latency: optional(finite.refine((n) => n >= 0, { message: 'must be 0 or more' })),
    top_score: optional(finite),
    results: optional(results),
    query_rating: optional(rating),
    metadata,
    user_id: userId,
  }),
  rag: z.object({
    user_message: storableText(MESSAGE_CONTENT_MAX_LENGTH),
    tokens,
    rag_type: optional(z.enum(['chosen_chunks', 'all_chunks'])),
    search_id: optional(uuid),
    topic_id: optional(uuid),
    results: optional(results),
    query_rating: optional(rating),
    llm_response: optional(storableText(EVENT_LIMITS.llmResponseLength)),
    metadata,
    user_id: userId,
    // Accepted as the reference does; no column keeps them.
    hallucination_score: optional(finite),
    detected_hallucinations: optional(boundedArray(storableKey(EVENT_LIMITS.itemLength), EVENT_LIMITS.items, 'detected_hallucinations')),
  }),
  recommendation: z.object({
    recommendation_type: optional(z.enum(['Chunk', 'Group'])),
    positive_ids: optional(idList),
    negative_ids: optional(idList),
    positive_tracking_ids: optional(trackingIdList),
    negative_tracking_ids: optional(trackingIdList),
    request_params: metadata,
    results: optional(results),
    top_score: optional(finite),
    metadata,
    user_id: userId,
  }),
} as const satisfies Record<(typeof SEND_EVENT_TYPES)[number], z.ZodType>;

/** Where and when an accepted event is stored. */
export interface EventStamp {
  /** The stored record's id (the answer's `TR-Event-Id`). */
  readonly id: string;
  readonly datasetId: string;
  /** Epoch ms of acceptance. */
  readonly now: number;
}

/** One JSON text per item, as the wire's `items: string[]` lists a click's or purchase's items. */
const itemText = (item: Record<string, unknown>): string => JSON.stringify(item);

/** The `request` link of a user event. */
const link = (r: { request_type: UserEvent['requestType']; request_id: string } | null | undefined) => ({
  requestId: r?.request_id ?? null,
  requestType: r?.request_type ?? null,
});

/** The validated fields every user event shares. */
type UserEventFields = z.output<z.ZodObject<typeof userEventFields>>;

/** A user event of `type` with the stamp and the fields every one shares; `own` sets the rest. */
function userEvent(
  type: UserEventType,
  b: UserEventFields,
  stamp: EventStamp,
  own: Pick<UserEvent, 'items' | 'metadata' | 'isConversion'> & Partial<Pick<UserEvent, 'position' | 'clickedChunkId' | 'revenue'>>,
): UserEvent {
  return {
    id: stamp.id,
    datasetId: stamp.datasetId,
    eventType: type,
    eventName: b.event_name,
    userId: b.user_id ?? null,
    ...link(b.request),
    location: b.location ?? null,
    position: null,
    clickedChunkId: null,
    revenue: 0,
    ...own,
    createdAt: stamp.now,
    updatedAt: stamp.now,
  };
}

/** The rating given with a search or RAG event, if any. */
function ratingOf(kind: QueryRating['kind'], r: z.output<typeof rating> | null | undefined, stamp: EventStamp): QueryRating[] {
  if (!r) return [];
  return [{ kind, datasetId: stamp.datasetId, queryId: stamp.id, rating: r.rating, note: r.note ?? null, metadata: r.metadata ?? null, createdAt: stamp.now }];
}

/** The members a search, RAG or recommendation record takes from the stamp and the body alike. */
function recordStamp(stamp: EventStamp, b: { user_id?: string | null; metadata?: unknown }) {
  return { id: stamp.id, datasetId: stamp.datasetId, userId: b.user_id ?? null, metadata: b.metadata ?? null, createdAt: stamp.now };
}

/** Score of a result the caller sent, when it carries one (`{score: number}`). */
const scoreOf = (result: unknown): number => {
  const s = typeof result === 'object' && result !== null ? (result as { score?: unknown }).score : undefined;
  return typeof s === 'number' && Number.isFinite(s) ? s : 0;
};

/** The records one validated body stores. */
function writesOf(type: (typeof SEND_EVENT_TYPES)[number], body: unknown, stamp: EventStamp): EventWrites {
  switch (type) {
    case 'view': {
      const b = parse(SCHEMAS.view, body);
      return { userEvents: [userEvent(type, b, stamp, { items: b.items, metadata: b.metadata ?? null, isConversion: false })] };
    }
    case 'add_to_cart': {
      const b = parse(SCHEMAS.add_to_cart, body);
      return { userEvents: [userEvent(type, b, stamp, { items: b.items, metadata: b.metadata ?? null, isConversion: b.is_conversion ?? true })] };
    }
    case 'click': {
      const b = parse(SCHEMAS.click, body);
      const c = b.clicked_items;
      return {
        userEvents: [
          userEvent(type, b, stamp, {
            items: c ? [itemText({ chunk_id: c.chunk_id, position: c.position })] : [],
            metadata: b.metadata ?? null,
            isConversion: b.is_conversion ?? true,
            position: c?.position ?? null,
            clickedChunkId: c?.chunk_id ?? null,
          }),
        ],
      };
    }
    case 'purchase': {
      const b = parse(SCHEMAS.purchase, body);
      return {
        userEvents: [
          userEvent(type, b, stamp, {
            items: b.items.map((i) => itemText({ tracking_id: i.tracking_id, revenue: i.revenue })),
            metadata: b.metadata ?? null,
            isConversion: b.is_conversion ?? true,
            revenue: b.items.reduce((sum, i) => sum + i.revenue, 0),
          }),
        ],
      };
    }
    case 'filter_clicked': {
      const b = parse(SCHEMAS.filter_clicked, body);
      // A conversion unless it says otherwise, as the reference's (only a view never is).
      return { userEvents: [userEvent(type, b, stamp, { items: [], metadata: b.items, isConversion: b.is_conversion ?? true })] };
    }
    case 'search': {
      const b = parse(SCHEMAS.search, body);
      const found = (b.results ?? []) as SearchRecord['results'];
      const record: SearchRecord = {
        ...recordStamp(stamp, b),
        kind: b.search_type ?? 'search',
        searchMethod: '',
        query: b.query,
        requestParams: b.request_params ?? {},
        latencyMs: b.latency ?? 0,
        topScore: b.top_score ?? 0,
        results: found,
        resultCount: found.length,
      };
      return { searches: [record], ratings: ratingOf('search', b.query_rating, stamp) };
    }
    case 'rag': {
      const b = parse(SCHEMAS.rag, body);
      const docs = (b.results ?? []) as RagRecord['results'];
      const record: RagRecord = {
        ...recordStamp(stamp, b),
        ragType: b.rag_type ?? 'all_chunks',
        userMessage: b.user_message,
        searchId: b.search_id ?? null,
        topicId: b.topic_id ?? null,
        results: docs,
        llmResponse: b.llm_response ?? '',
        topScore: docs.length > 0 ? scoreOf(docs[0]) : 0,
        // The wire gives one count: the tokens the answer took.
        promptTokens: b.tokens,
        completionTokens: 0,
        latencyMs: 0,
        hallucinationScore: b.hallucination_score ?? 0,
        detectedHallucinations: b.detected_hallucinations ?? [],
      };
      return { rags: [record], ratings: ratingOf('rag', b.query_rating, stamp) };
    }
    case 'recommendation': {
      const b = parse(SCHEMAS.recommendation, body);
      const record: RecommendationRecord = {
        ...recordStamp(stamp, b),
        recommendationType: b.recommendation_type ?? 'Chunk',
        positiveIds: b.positive_ids ?? [],
        negativeIds: b.negative_ids ?? [],
        positiveTrackingIds: b.positive_tracking_ids ?? [],
        negativeTrackingIds: b.negative_tracking_ids ?? [],
        requestParams: b.request_params ?? {},
        results: (b.results ?? []) as RecommendationRecord['results'],
        topScore: b.top_score ?? 0,
      };
      return { recommendations: [record] };
    }
  }
}

/** Validates a `PUT /api/analytics/events` body into the records it stores, stamped with `stamp`. */
export function parseSendEvent(body: unknown, stamp: EventStamp): EventWrites {
  requireBody(body, `a JSON object with "event_type" (one of ${SEND_EVENT_TYPES.join(', ')})`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new QuarryError('invalid_json', `Json Deserialization Error: body: must be a JSON object with "event_type" (one of ${SEND_EVENT_TYPES.join(', ')})`);
  }
  const type = (body as { event_type?: unknown }).event_type;
  if (!SEND_EVENT_TYPES.includes(type as (typeof SEND_EVENT_TYPES)[number])) {
    const got = type === undefined ? 'nothing' : JSON.stringify(type).slice(0, 64);
    throw new QuarryError('invalid_json', `Json Deserialization Error: event_type: must be one of ${SEND_EVENT_TYPES.join(', ')}, got ${got}`);
  }
  return writesOf(type as (typeof SEND_EVENT_TYPES)[number], body, stamp);
}

const ctr = z.object({
  request_id: uuid,
  ctr_type: z.enum(REQUEST_TYPES),
  clicked_chunk_id: optional(uuid),
  clicked_chunk_tracking_id: optional(trackingIdRef),
  position: z.number().int().min(0).max(EVENT_LIMITS.position),
  metadata,
});

/** A validated deprecated `PUT /api/analytics/ctr`: a click on one chunk of a request's results. */
export interface CtrClick {
  readonly requestId: string;
  readonly requestType: UserEvent['requestType'] & string;
  /** The clicked chunk: by id, or by tracking id (resolved by the route). */
  readonly chunk: { readonly id: string } | { readonly trackingId: string };
  readonly position: number;
  readonly metadata: unknown;
}

/** Validates `PUT /api/analytics/ctr`; one of clicked_chunk_id and clicked_chunk_tracking_id is required (the id wins). */
export function parseCtrClick(body: unknown): CtrClick {
  requireBody(body, 'a JSON object with "request_id", "ctr_type", "position" and "clicked_chunk_id" or "clicked_chunk_tracking_id"');
  const b = parse(ctr, body);
  const chunk =
    b.clicked_chunk_id != null ? { id: b.clicked_chunk_id } : b.clicked_chunk_tracking_id != null ? { trackingId: b.clicked_chunk_tracking_id } : null;
  if (chunk === null) throw new QuarryError('bad_request', 'clicked_chunk_id or clicked_chunk_tracking_id is required');
  return { requestId: b.request_id, requestType: b.ctr_type, chunk, position: b.position, metadata: b.metadata ?? null };
}

/** The click event a deprecated CTR call stores: named "click", a conversion, linked to its request. */
export function ctrClickEvent(click: CtrClick, chunkId: string, stamp: EventStamp): UserEvent {
  return {
    id: stamp.id,
    datasetId: stamp.datasetId,
    eventType: 'click',
    eventName: 'click',
    items: [itemText({ chunk_id: chunkId, position: click.position })],
    metadata: click.metadata,
    userId: null,
    isConversion: true,
    requestId: click.requestId,
    requestType: click.requestType,
    location: null,
    position: click.position,
    clickedChunkId: chunkId,
    revenue: 0,
    createdAt: stamp.now,
    updatedAt: stamp.now,
  };
}
