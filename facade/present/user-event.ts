/** User events on the wire (`EventData`). */
import { formatTimestamp } from '../../core/domain/time.js';
import type { UserEvent } from '../../core/domain/user-events.js';

/**
 * EventData `{id, event_type, event_name, items, metadata, user_id, is_conversion, request_id,
 * request_type, location, dataset_id, created_at, updated_at}`. `metadata` is the JSON text of
 * the stored metadata, "" when there is none: the spec's user event record lists it as a string.
 */
export function eventData(e: UserEvent): Record<string, unknown> {
  return {
    id: e.id,
    event_type: e.eventType,
    event_name: e.eventName,
    items: e.items,
    metadata: e.metadata === null || e.metadata === undefined ? '' : JSON.stringify(e.metadata),
    user_id: e.userId,
    is_conversion: e.isConversion,
    request_id: e.requestId,
    request_type: e.requestType,
    location: e.location,
    dataset_id: e.datasetId,
    created_at: formatTimestamp(e.createdAt),
    updated_at: formatTimestamp(e.updatedAt),
  };
}
