/**
 * A/B experiments: a dataset's named split of users between a control and one treatment (`t1`),
 * assigned once per user and kept (`POST /api/experiment/ab-test`), so that reports can compare
 * the arms' conversions.
 */
import { createHash } from 'node:crypto';

/** A stored experiment. */
export interface Experiment {
  readonly id: string;
  readonly datasetId: string;
  readonly name: string;
  /** Where in the product the experiment runs (free text); fixed at creation. */
  readonly area: string;
  readonly controlName: string;
  /** Fraction of users in the control arm, 0..1. */
  readonly controlSplit: number;
  readonly t1Name: string;
  /** Fraction of users in the treatment arm, 0..1. */
  readonly t1Split: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A user's arm in an experiment, decided once and kept. */
export interface ExperimentAssignment {
  readonly experimentId: string;
  readonly datasetId: string;
  readonly userId: string;
  readonly treatmentName: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** Buckets of the assignment hash: splits resolve to 1/10,000. */
export const AB_BUCKETS = 10_000;

/**
 * The arm a user falls in when first seen: a stable hash of (experiment, user) into
 * {@link AB_BUCKETS} buckets; those below `t1Split` of them get the treatment. Deterministic, so
 * a lost assignment row would be decided the same way again. SHA-256, not FNV-1a: user ids that
 * differ in one trailing character must still spread evenly over the buckets.
 */
export function assignArm(experiment: Pick<Experiment, 'id' | 't1Name' | 't1Split' | 'controlName'>, userId: string): string {
  const bucket = createHash('sha256').update(`${experiment.id}\u0000${userId}`).digest().readUInt32BE(0) % AB_BUCKETS;
  return bucket < Math.round(experiment.t1Split * AB_BUCKETS) ? experiment.t1Name : experiment.controlName;
}
