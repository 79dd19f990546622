/**
 * The experiment and assignment records a write makes, their rows, and the errors of experiment
 * writes, shared by both stores so that the same call stores the same record and fails with the
 * same error on each.
 */
import { assignArm, type Experiment, type ExperimentAssignment } from '../core/domain/experiments.js';
import { notFound, type QuarryError } from '../core/domain/errors.js';
import { newId } from '../core/domain/ids.js';
import type { ExperimentPatch, NewExperiment } from './repository.js';

/** Columns of `experiments`, in the order {@link experimentParams} binds them. */
export const EXPERIMENT_COLUMNS = 'id, dataset_id, name, area, control_name, control_split, t1_name, t1_split, created_at, updated_at';

/** Columns of `experiment_assignments`, in the order {@link assignmentParams} binds them. */
export const ASSIGNMENT_COLUMNS = 'id, experiment_id, dataset_id, user_id, treatment_name, created_at';

/**
 * The columns of an experiment `e` joined to the user's assignment `a` (`assigned_name`,
 * `assigned_at`: null when the user has none), so that a returning user's arm is one read.
 */
export const EXPERIMENT_WITH_ASSIGNMENT_COLUMNS = `${EXPERIMENT_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')}, a.treatment_name AS assigned_name, a.created_at AS assigned_at`;

/** The columns an update rewrites, in the order {@link experimentUpdateParams} binds them (then the id). */
export const EXPERIMENT_UPDATE_COLUMNS = ['name', 'control_name', 'control_split', 't1_name', 't1_split', 'updated_at'] as const;

/** The 404 of an experiment that is not the dataset's (the reference's message). */
export const experimentNotFound = (id: string, datasetId: string): QuarryError =>
  notFound(`Experiment with id ${id} not found in dataset ${datasetId}`);

/** The 404 of an experiment created for a dataset that is gone (purged after the caller looked it up). */
export const experimentDatasetGone = (datasetId: string): QuarryError => notFound(`dataset with id ${datasetId} does not exist`);

/** A new experiment. */
export function newExperiment(input: NewExperiment, now: number): Experiment {
  return {
    id: newId(),
    datasetId: input.datasetId,
    name: input.name,
    area: input.area,
    controlName: input.controlName,
    controlSplit: input.controlSplit,
    t1Name: input.t1Name,
    t1Split: input.t1Split,
    createdAt: now,
    updatedAt: now,
  };
}

/** An experiment after an update: absent fields keep their values; updated_at never goes back. */
export function updatedExperiment(current: Experiment, patch: ExperimentPatch, now: number): Experiment {
  return {
    ...current,
    name: patch.name ?? current.name,
    controlName: patch.controlName ?? current.controlName,
    controlSplit: patch.controlSplit ?? current.controlSplit,
    t1Name: patch.t1Name ?? current.t1Name,
    t1Split: patch.t1Split ?? current.t1Split,
    updatedAt: Math.max(now, current.updatedAt),
  };
}

/** The values of an `experiments` row, in {@link EXPERIMENT_COLUMNS} order. */
export const experimentParams = (e: Experiment): unknown[] => [
  e.id,
  e.datasetId,
  e.name,
  e.area,
  e.controlName,
  e.controlSplit,
  e.t1Name,
  e.t1Split,
  e.createdAt,
  e.updatedAt,
];

/** The values of an update: {@link EXPERIMENT_UPDATE_COLUMNS}, then the experiment's id. */
export const experimentUpdateParams = (e: Experiment): unknown[] => [e.name, e.controlName, e.controlSplit, e.t1Name, e.t1Split, e.updatedAt, e.id];

/** A stored `experiments` row as a record. */
export function experimentFromRow(r: Record<string, any>): Experiment {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    name: r.name,
    area: r.area,
    controlName: r.control_name,
    controlSplit: Number(r.control_split),
    t1Name: r.t1_name,
    t1Split: Number(r.t1_split),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A new assignment of `userId` to `treatmentName`. */
export function newAssignment(experiment: Experiment, userId: string, treatmentName: string, now: number): ExperimentAssignment {
  return { experimentId: experiment.id, datasetId: experiment.datasetId, userId, treatmentName, createdAt: now };
}

/** The row values of a user's first assignment: the arm is decided here, once, then kept. */
export const firstAssignmentParams = (experiment: Experiment, userId: string, now: number): unknown[] =>
  assignmentParams(newAssignment(experiment, userId, assignArm(experiment, userId), now));

/** The values of an `experiment_assignments` row (a fresh row id first), in {@link ASSIGNMENT_COLUMNS} order. */
export const assignmentParams = (a: ExperimentAssignment): unknown[] => [newId(), a.experimentId, a.datasetId, a.userId, a.treatmentName, a.createdAt];

/** A stored `experiment_assignments` row as a record. */
export function assignmentFromRow(r: Record<string, any>): ExperimentAssignment {
  return {
    experimentId: r.experiment_id,
    datasetId: r.dataset_id,
    userId: r.user_id,
    treatmentName: r.treatment_name,
    createdAt: Number(r.created_at),
  };
}

/** The assignment already stored in a {@link EXPERIMENT_WITH_ASSIGNMENT_COLUMNS} row, or undefined for a new user. */
export function storedAssignment(row: Record<string, any>, datasetId: string, experimentId: string, userId: string): ExperimentAssignment | undefined {
  if (row.assigned_name == null) return undefined;
  return { experimentId, datasetId, userId, treatmentName: row.assigned_name as string, createdAt: Number(row.assigned_at) };
}
