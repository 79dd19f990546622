/** The user-event builder of the analytics tests. */
import { randomUUID } from 'node:crypto';
import type { UserEvent, UserEventType } from '../../core/domain/user-events.js';

/** A user event to seed: a fresh id, named after its type, no links or figures unless given; updated when created. */
export function userEvent(e: Partial<UserEvent> & { eventType: UserEventType; createdAt: number; datasetId: string }): UserEvent {
  return {
    id: randomUUID(),
    eventName: e.eventType,
    items: [],
    metadata: null,
    userId: null,
    isConversion: false,
    requestId: null,
    requestType: null,
    location: null,
    position: null,
    clickedChunkId: null,
    revenue: 0,
    updatedAt: e.createdAt,
    ...e,
  };
}
