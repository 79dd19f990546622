/** Koa app factory (facade/main.ts listens). No side effects at import time. */
import Koa from 'koa';
import type { RequestState, Services } from './context.js';
import { bodyLimits } from './body-limits.js';
import { abortOnClose } from './middleware/abort-on-close.js';
import { authenticate } from './middleware/auth.js';
import { jsonBody } from './middleware/body.js';
import { errors } from './middleware/errors.js';
import { gate } from './middleware/gate.js';
import { tenantFairness } from './middleware/tenant-fairness.js';
import { requestId } from './middleware/request-id.js';
import { analyticsEventRoutes } from './routes/analytics-events.js';
import { blobRoutes } from './routes/blob.js';
import { chunkGroupRoutes } from './routes/chunk-group.js';
import { chunkRoutes } from './routes/chunk.js';
import { ctrAnalyticsRoutes } from './routes/ctr-analytics.js';
import { datasetRoutes } from './routes/dataset.js';
import { experimentRoutes } from './routes/experiment.js';
import { fileRoutes } from './routes/file.js';
import { generateRoutes } from './routes/generate.js';
import { groupSearchRoutes } from './routes/group-search.js';
import { messageRoutes } from './routes/message.js';
import { healthRoutes } from './routes/health.js';
import { organizationRoutes } from './routes/organization.js';
import { ragAnalyticsRoutes } from './routes/rag-analytics.js';
import { recommendRoutes } from './routes/recommend.js';
import { newRouter } from './routes/router.js';
import { searchAnalyticsRoutes } from './routes/search-analytics.js';
import { searchRoutes } from './routes/search.js';
import { suggestionRoutes } from './routes/suggestions.js';
import { topicRoutes } from './routes/topic.js';
import { userRoutes } from './routes/user.js';

/** Builds the HTTP API over the given services. */
export function createApp(services: Services): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = false;
  // Errors are answered by the errors middleware; Koa's own handler would only log them again.
  app.silent = true;
  const router = newRouter();
  healthRoutes(router, services);
  blobRoutes(router, services);
  userRoutes(router, services);
  organizationRoutes(router, services);
  // Before the dataset routes: GET /api/dataset/scroll_files would match GET /api/dataset/:dataset_id.
  fileRoutes(router, services);
  datasetRoutes(router, services);
  // Search routes first: /api/chunk/search must not be taken for /api/chunk/:chunk_id.
  searchRoutes(router, services);
  recommendRoutes(router, services);
  groupSearchRoutes(router, services);
  // Before chunkRoutes: /api/chunk/generate must not be taken for /api/chunk/:chunk_id.
  generateRoutes(router, services);
  // Before chunkRoutes: /api/chunk/suggestions must not be taken for /api/chunk/:chunk_id.
  suggestionRoutes(router, services);
  chunkRoutes(router, services);
  chunkGroupRoutes(router, services);
  topicRoutes(router, services);
  messageRoutes(router, services);
  analyticsEventRoutes(router, services);
  searchAnalyticsRoutes(router, services);
  ragAnalyticsRoutes(router, services);
  ctrAnalyticsRoutes(router, services);
  experimentRoutes(router, services);

  app.use((ctx, next) => {
    // The request arrives: the store's caches check for other processes' writes once, here.
    services.store.pinReads();
    return next();
  });
  app.use(requestId(services.logger, services.config.serverTiming));
  app.use(errors());
  app.use(abortOnClose(services.core));
  app.use(async (ctx, next) => {
    // Fully permissive CORS, as the reference implementation: keys, not origins, guard the API.
    ctx.set('Access-Control-Allow-Origin', ctx.get('origin') || '*');
    ctx.set('Access-Control-Allow-Credentials', 'true');
    ctx.set('Vary', 'Origin');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET,POST,PUT,PATCH,DELETE,OPTIONS');
      ctx.set('Access-Control-Allow-Headers', ctx.get('access-control-request-headers') || '*');
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    await next();
  });
  // Credentials come from the headers and are checked before any body is read: the body is the
  // expensive part, and only callers the gate lets through may make the process buffer one.
  app.use(authenticate(services));
  app.use(gate(services, router));
  // Before the body: a request waiting for its organization's turn holds no parsed body.
  app.use(
    tenantFairness({ reads: services.config.tenantReadConcurrency, writes: services.config.tenantWriteConcurrency, queue: services.config.tenantQueue, events: services.config.tenantEventConcurrency, answers: services.config.tenantAnswerConcurrency }),
  );
  app.use(jsonBody(bodyLimits(services.config)));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}
