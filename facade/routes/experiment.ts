/**
 * A/B experiments: create, list, get, update, delete, a user's sticky arm (`ab-test`), and the
 * arms' results (a quarry extension). Admin of the dataset's organization, as the reference's
 * AdminOnly, except update and ab-test, which the spec gives to owners.
 */
import { Role } from '../../core/domain/tenancy.js';
import { experimentNotFound } from '../../store/experiment-records.js';
import { experimentResults } from '../../store/reports/experiment-reports.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { experiment as presentExperiment, treatment } from '../present/experiment.js';
import { pathUuid } from '../schemas/common.js';
import { checkAreaUnchanged, parseAbTest, parseCreateExperiment, parseUpdateExperiment } from '../schemas/experiment.js';
import type { QuarryRouter } from './router.js';

/** Registers A/B experiments: create, list, get, update, delete, sticky assignment, and per-arm results. */
export function experimentRoutes(router: QuarryRouter, services: Services): void {
  const { store } = services;

  /** The dataset's experiment named by the path, or 404. */
  const pathExperiment = async (datasetId: string, param: string | undefined) => {
    const id = pathUuid(param, 'experiment_id');
    const found = await store.experiments.get(datasetId, id);
    if (!found) throw experimentNotFound(id, datasetId);
    return found;
  };

  router.post('/api/experiment', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    ctx.body = presentExperiment(await store.experiments.create(parseCreateExperiment(ctx.state.body, dataset.id)));
  });

  router.get('/api/experiment', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    ctx.body = (await store.experiments.list(dataset.id)).map(presentExperiment);
  });

  router.put('/api/experiment', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Owner);
    const req = parseUpdateExperiment(ctx.state.body);
    const current = await store.experiments.get(dataset.id, req.id);
    if (!current) throw experimentNotFound(req.id, dataset.id);
    // The area never changes, so this check cannot go stale before the write.
    checkAreaUnchanged(current, req.area);
    ctx.body = presentExperiment(await store.experiments.update(dataset.id, req.id, req.patch));
  });

  router.post('/api/experiment/ab-test', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Owner);
    const req = parseAbTest(ctx.state.body);
    ctx.body = treatment(await store.experiments.assign(dataset.id, req.experimentId, req.userId));
  });

  router.get('/api/experiment/:experiment_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    ctx.body = presentExperiment(await pathExperiment(dataset.id, ctx.params.experiment_id));
  });

  router.get('/api/experiment/:experiment_id/results', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const found = await pathExperiment(dataset.id, ctx.params.experiment_id);
    ctx.body = await experimentResults(store.reports, dataset.id, found);
  });

  router.delete('/api/experiment/:experiment_id', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    await store.experiments.delete(dataset.id, pathUuid(ctx.params.experiment_id, 'experiment_id'));
    ctx.status = 204;
  });
}
