/** Topics: create (named by the caller or after the first message), rename, clone, delete, list by owner. */
import { badRequest, notFound } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { Role } from '../../core/domain/tenancy.js';
import { topicName } from '../../core/llm/provider.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { topic as presentTopic } from '../present/topic.js';
import { shortCompletion } from '../rag/short-completion.js';
import { boundedString, pathUuid } from '../schemas/common.js';
import { parseCloneTopic, parseCreateTopic, parseUpdateTopic } from '../schemas/topic.js';
import type { QuarryRouter } from './router.js';

const ownerIdParam = boundedString(LIMITS.userIdLength);

/** Registers topic routes (admin or owner of the dataset's organization, as in the reference). */
export function topicRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  router.post('/api/topic', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseCreateTopic(ctx.state.body);
    const name =
      req.name ??
      (await shortCompletion(ctx, services.config, dataset, 'Error getting topic string', ({ provider, options, signal }) => topicName(provider, req.firstMessage!, options, signal)));
    ctx.body = presentTopic(await store.topics.create({ datasetId: dataset.id, name, ownerId: req.ownerId, metadata: req.metadata }));
  });

  router.put('/api/topic', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseUpdateTopic(ctx.state.body);
    await store.topics.update(dataset.id, req.topicId, { name: req.name });
    ctx.status = 204;
  });

  router.post('/api/topic/clone', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseCloneTopic(ctx.state.body);
    ctx.body = presentTopic(await store.topics.clone(dataset.id, req.topicId, { ownerId: req.ownerId, name: req.name }));
  });

  router.delete('/api/topic/:topic_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const topicId = pathUuid(ctx.params.topic_id, 'topic_id');
    if (!(await store.topics.get(dataset.id, topicId))) throw notFound(`topic ${topicId} does not exist in this dataset`);
    await store.topics.delete(dataset.id, topicId);
    ctx.status = 204;
  });

  router.get('/api/topic/owner/:owner_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const parsed = ownerIdParam.safeParse(ctx.params.owner_id ?? '');
    if (!parsed.success || parsed.data === '') throw badRequest(`Path parameter owner_id must be 1 to ${LIMITS.userIdLength} characters long`);
    ctx.body = (await store.topics.listByOwner(dataset.id, parsed.data)).map(presentTopic);
  });
}
