/** A/B experiments and assignments on the wire. */
import type { Experiment, ExperimentAssignment } from '../../core/domain/experiments.js';

/** An experiment's time stamp as the spec shows it: `YYYY-MM-DDThh:mm:ssZ` (UTC, whole seconds). */
export const experimentTimestamp = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** Experiment `{id, name, area, t1_name, t1_split, control_name, control_split, dataset_id, created_at, updated_at}`. */
export function experiment(e: Experiment): Record<string, unknown> {
  return {
    id: e.id,
    name: e.name,
    area: e.area,
    t1_name: e.t1Name,
    t1_split: e.t1Split,
    control_name: e.controlName,
    control_split: e.controlSplit,
    dataset_id: e.datasetId,
    created_at: experimentTimestamp(e.createdAt),
    updated_at: experimentTimestamp(e.updatedAt),
  };
}

/** A user's arm `{experiment_id, treatment_name, user_id}` (the reference's UserTreatmentResponse). */
export function treatment(a: ExperimentAssignment): Record<string, unknown> {
  return { experiment_id: a.experimentId, treatment_name: a.treatmentName, user_id: a.userId };
}
