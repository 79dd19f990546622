/** Every BullMQ queue, job and Redis key name of quarry, in one place. */

/** Queue names. */
export const Queues = {
  /** Deferred deletions of organizations and datasets. */
  maintenance: 'quarry-maintenance',
} as const;

/** Job names per queue. */
export const Jobs = {
  purgeOrganization: 'purge-organization',
  purgeDataset: 'purge-dataset',
} as const;

/** Payload of purge jobs. */
export interface PurgeJob {
  readonly id: string;
}
