/** User events: send (committed before the 204), list, get one, and the deprecated CTR click. */
import { notFound } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import { Role } from '../../core/domain/tenancy.js';
import { listUserEvents } from '../../store/reports/user-event-listing.js';
import { datasetAccess } from '../access.js';
import { eventWriter } from '../analytics/event-writer.js';
import type { Services } from '../context.js';
import { eventData } from '../present/user-event.js';
import { pageWindow } from '../schemas/analytics-common.js';
import { parseListEvents } from '../schemas/analytics-events-list.js';
import { ctrClickEvent, parseCtrClick, parseSendEvent } from '../schemas/analytics-events.js';
import { pathUuid } from '../schemas/common.js';
import type { QuarryRouter } from './router.js';

/** Header naming the stored event's id (a 204 has no body to carry it). */
export const EVENT_ID_HEADER = 'TR-Event-Id';

/** Registers the user event routes (admin of the dataset's organization, as in the reference). */
export function analyticsEventRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;
  // One per app: its queue is what gathers concurrent requests into one commit.
  const writer = eventWriter(store);

  router.put('/api/analytics/events', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const id = newId();
    await writer.write(parseSendEvent(ctx.state.body, { id, datasetId: dataset.id, now: Date.now() }));
    ctx.set(EVENT_ID_HEADER, id);
    ctx.status = 204;
  });

  router.post('/api/analytics/events/all', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseListEvents(ctx.state.body);
    // Report SQL: off the event loop on SQLite, under the report deadline on both engines.
    const events = await listUserEvents(store.reports, dataset.id, req.filter, pageWindow(req.page));
    ctx.body = { events: events.map(eventData) };
  });

  router.get('/api/analytics/events/:event_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const id = pathUuid(ctx.params.event_id, 'event_id');
    const event = await store.userEvents.get(dataset.id, id);
    if (!event) throw notFound(`event ${id} does not exist in this dataset`);
    ctx.body = eventData(event);
  });

  // Deprecated by the reference in favour of click events; kept for old clients.
  router.put('/api/analytics/ctr', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const click = parseCtrClick(ctx.state.body);
    let chunkId: string;
    if ('id' in click.chunk) {
      chunkId = click.chunk.id;
    } else {
      const chunk = await store.chunks.get(dataset.id, { trackingId: click.chunk.trackingId });
      if (!chunk) throw notFound(`chunk with tracking_id ${JSON.stringify(click.chunk.trackingId)} does not exist in this dataset`);
      chunkId = chunk.id;
    }
    const id = newId();
    await writer.write({ userEvents: [ctrClickEvent(click, chunkId, { id, datasetId: dataset.id, now: Date.now() })] });
    ctx.set(EVENT_ID_HEADER, id);
    ctx.status = 204;
  });
}
