/**
 * User events (`PUT /api/analytics/events`): what people did with results (viewed, clicked, added
 * to a cart, bought, filtered), each optionally linked to the search, RAG answer or
 * recommendation it came from by that request's id. Search, RAG and recommendation events go to
 * their own analytics records (./analytics.ts, ./rag.ts), not here.
 */

/** The event types stored as user events (the reference's `EventTypesFilter`). */
export const USER_EVENT_TYPES = ['view', 'add_to_cart', 'click', 'purchase', 'filter_clicked'] as const;

/** One of {@link USER_EVENT_TYPES}. */
export type UserEventType = (typeof USER_EVENT_TYPES)[number];

/** What kind of request an event links to (the reference's `CTRType`). */
export const REQUEST_TYPES = ['search', 'rag', 'recommendation'] as const;

/** One of {@link REQUEST_TYPES}. */
export type RequestType = (typeof REQUEST_TYPES)[number];

/** A stored user event (table `user_events`). */
export interface UserEvent {
  /** Uuid, chosen by the service when the event is accepted. */
  readonly id: string;
  readonly datasetId: string;
  readonly eventType: UserEventType;
  readonly eventName: string;
  /**
   * The items as the wire lists them: ids for view and add_to_cart; for a click one JSON text
   * `{"chunk_id":…,"position":…}`; for a purchase one JSON text `{"tracking_id":…,"revenue":…}`
   * per item; for filter_clicked none (its filters are in `metadata`).
   */
  readonly items: readonly string[];
  /** Any JSON; null when absent. filter_clicked keeps its `items` object here. */
  readonly metadata: unknown;
  readonly userId: string | null;
  readonly isConversion: boolean;
  /** The search, RAG answer or recommendation this event came from; null when unlinked. */
  readonly requestId: string | null;
  readonly requestType: RequestType | null;
  readonly location: string | null;
  /** A click's 1-based position in the results it came from; null for other events. */
  readonly position: number | null;
  /** A click's chunk id; null for other events. */
  readonly clickedChunkId: string | null;
  /** A purchase's total revenue (sum over its items); 0 for other events. */
  readonly revenue: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A rating of a search or a RAG answer (`PUT /api/analytics/search`, `PUT /api/analytics/rag`); the latest wins. */
export interface QueryRating {
  readonly kind: 'search' | 'rag';
  readonly datasetId: string;
  /** The rated search's or answer's id; it need not exist (yet): ratings are fire-and-forget. */
  readonly queryId: string;
  readonly rating: number;
  readonly note: string | null;
  readonly metadata: unknown;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** Filter of `POST /api/analytics/events/all`. */
export interface UserEventFilter {
  /** Epoch-ms bounds; each absent one is open. */
  readonly createdAfter?: number;
  readonly createdBefore?: number;
  readonly eventType?: UserEventType;
  readonly isConversion?: boolean;
  readonly userId?: string;
  /** `metadata_filter` ("a.b = <json value>"): the metadata at `path` equals `value` (JSON equality). */
  readonly metadata?: { readonly path: readonly string[]; readonly value: unknown };
}
