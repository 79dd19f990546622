/** A/B experiment request bodies: create, update, and a user's assignment (`ab-test`). */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import type { Experiment } from '../../core/domain/experiments.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { ExperimentPatch, NewExperiment } from '../../store/repository.js';
import { parse, requireBody, uuid } from './common.js';
import { storableKey, storableText } from './message.js';

/** Longest experiment, arm or area name. */
export const EXPERIMENT_NAME_MAX_LENGTH = 256;

/** How far the two splits' sum may be from 1: decimal fractions such as 0.1 + 0.2 are not exact in binary. */
export const SPLIT_SUM_TOLERANCE = 1e-9;

const name = storableText(EXPERIMENT_NAME_MAX_LENGTH).refine((s) => s.trim() !== '', { message: 'must not be empty' });
const split = z
  .number({ error: 'must be a number' })
  .refine(Number.isFinite, { message: 'must be a finite number' })
  .refine((n) => n >= 0 && n <= 1, { message: 'must be a fraction between 0 and 1' });

/** The arms of an experiment: two distinct names whose splits sum to 1. */
const arms = {
  t1_name: name,
  t1_split: split,
  control_name: name,
  control_split: split,
};

const createBody = z.object({ name, experiment_config: z.object({ area: name, ...arms }) });

const updateBody = z.object({
  id: uuid,
  name: name.nullable().optional(),
  // The reference's config is whole; `area` may be left out here since it cannot change anyway.
  experiment_config: z.object({ area: name.optional(), ...arms }).nullable().optional(),
});

const abTestBody = z.object({ experiment_id: uuid, user_id: storableKey(LIMITS.userIdLength).refine((s) => s !== '', { message: 'must not be empty' }) });

/** Checks what zod cannot see field by field: the splits' sum and the arms' distinct names. */
function checkArms(c: { t1_name: string; t1_split: number; control_name: string; control_split: number }): void {
  const sum = c.t1_split + c.control_split;
  if (Math.abs(sum - 1) > SPLIT_SUM_TOLERANCE) {
    throw badRequest(`experiment_config.t1_split and experiment_config.control_split must sum to 1, got ${c.t1_split} + ${c.control_split} = ${sum}`);
  }
  if (c.t1_name === c.control_name) {
    throw badRequest(`experiment_config.t1_name and experiment_config.control_name must differ, both are "${c.t1_name}"`);
  }
}

/** Validates POST /api/experiment into what the store creates (the dataset from the caller's access). */
export function parseCreateExperiment(body: unknown, datasetId: string): NewExperiment {
  requireBody(body, 'a JSON object with "name" and "experiment_config"');
  const b = parse(createBody, body);
  const c = b.experiment_config;
  checkArms(c);
  return {
    datasetId,
    name: b.name,
    area: c.area,
    controlName: c.control_name,
    controlSplit: c.control_split,
    t1Name: c.t1_name,
    t1Split: c.t1_split,
  };
}

/** A validated PUT /api/experiment. */
export interface UpdateExperimentRequest {
  readonly id: string;
  readonly patch: ExperimentPatch;
  /** The area the caller sent, which must be the stored one; undefined when not sent. */
  readonly area: string | undefined;
}

/** Validates PUT /api/experiment: only the fields sent are written. */
export function parseUpdateExperiment(body: unknown): UpdateExperimentRequest {
  requireBody(body, 'a JSON object with "id" and "name" or "experiment_config"');
  const b = parse(updateBody, body);
  const c = b.experiment_config;
  if (c) checkArms(c);
  return {
    id: b.id,
    patch: {
      ...(b.name != null ? { name: b.name } : {}),
      ...(c ? { controlName: c.control_name, controlSplit: c.control_split, t1Name: c.t1_name, t1Split: c.t1_split } : {}),
    },
    area: c?.area,
  };
}

/** Refuses an update that would move the experiment to another area (it is fixed at creation). */
export function checkAreaUnchanged(current: Experiment, area: string | undefined): void {
  if (area !== undefined && area !== current.area) {
    throw badRequest(`experiment_config.area cannot be updated: the experiment's area is "${current.area}", got "${area}"`);
  }
}

/** Validates POST /api/experiment/ab-test. */
export function parseAbTest(body: unknown): { experimentId: string; userId: string } {
  requireBody(body, 'a JSON object with "experiment_id" and "user_id"');
  const b = parse(abTestBody, body);
  return { experimentId: b.experiment_id, userId: b.user_id };
}
