/** PostgreSQL experiment repository: `experiments`, and their sticky assignments in `experiment_assignments`. */
import type { Experiment } from '../../core/domain/experiments.js';
import {
  ASSIGNMENT_COLUMNS,
  EXPERIMENT_COLUMNS,
  EXPERIMENT_UPDATE_COLUMNS,
  EXPERIMENT_WITH_ASSIGNMENT_COLUMNS,
  assignmentFromRow,
  experimentDatasetGone,
  experimentFromRow,
  experimentNotFound,
  experimentParams,
  experimentUpdateParams,
  firstAssignmentParams,
  newExperiment,
  storedAssignment,
  updatedExperiment,
} from '../experiment-records.js';
import type { ExperimentRepository } from '../repository.js';
import type { PgDb, Sql } from './database.js';

/** Whether a driver error is a foreign-key violation (SQLSTATE 23503: the experiment or its dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23503';

const SELECT_ONE = `SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE dataset_id = $1 AND id = $2`;
// The experiment and, when there is one, the user's stored arm, in one round trip.
const WITH_ASSIGNMENT = `SELECT ${EXPERIMENT_WITH_ASSIGNMENT_COLUMNS}
  FROM experiments e LEFT JOIN experiment_assignments a ON a.experiment_id = e.id AND a.user_id = $3
  WHERE e.dataset_id = $1 AND e.id = $2`;
// A racing first call stores nothing (it waits for the other's commit, then yields to its row) and reads the winner's.
const INSERT_ASSIGNMENT = `INSERT INTO experiment_assignments (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (experiment_id, user_id) DO NOTHING RETURNING ${ASSIGNMENT_COLUMNS}`;

const UPDATE = `UPDATE experiments SET ${EXPERIMENT_UPDATE_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${EXPERIMENT_UPDATE_COLUMNS.length + 1}`;

/**
 * The dataset's experiment, its row locked until the transaction ends (FOR UPDATE), so that an
 * update or delete checks what it then writes over.
 */
async function lockExperiment(tx: Sql, datasetId: string, id: string): Promise<Experiment | undefined> {
  const row = await tx.get(`${SELECT_ONE} FOR UPDATE`, [datasetId, id]);
  return row ? experimentFromRow(row) : undefined;
}

/** Builds the PostgreSQL experiment repository. */
export function pgExperiments(db: PgDb): ExperimentRepository {
  return {
    async create(input) {
      const record = newExperiment(input, Date.now());
      try {
        await db.run(`INSERT INTO experiments (${EXPERIMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, experimentParams(record));
      } catch (err) {
        if (isForeignKeyViolation(err)) throw experimentDatasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      const row = await db.get(SELECT_ONE, [datasetId, id]);
      return row ? experimentFromRow(row) : undefined;
    },
    async list(datasetId) {
      const rows = await db.all(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE dataset_id = $1 ORDER BY created_at DESC, id`, [datasetId]);
      return rows.map(experimentFromRow);
    },
    update(datasetId, id, patch) {
      return db.tx(async (tx) => {
        const current = await lockExperiment(tx, datasetId, id);
        if (!current) throw experimentNotFound(id, datasetId);
        const next = updatedExperiment(current, patch, Date.now());
        await tx.run(UPDATE, experimentUpdateParams(next));
        return next;
      });
    },
    delete(datasetId, id) {
      return db.tx(async (tx) => {
        if (!(await lockExperiment(tx, datasetId, id))) throw experimentNotFound(id, datasetId);
        await tx.run('DELETE FROM experiment_assignments WHERE experiment_id = $1', [id]);
        await tx.run('DELETE FROM experiments WHERE id = $1', [id]);
      });
    },
    // No transaction: a returning user's arm is one read; a new one's is one insert keeping whichever row came first.
    async assign(datasetId, experimentId, userId) {
      const row = await db.get(WITH_ASSIGNMENT, [datasetId, experimentId, userId]);
      if (!row) throw experimentNotFound(experimentId, datasetId);
      const stored = storedAssignment(row, datasetId, experimentId, userId);
      if (stored) return stored;
      let inserted;
      try {
        inserted = await db.get(INSERT_ASSIGNMENT, firstAssignmentParams(experimentFromRow(row), userId, Date.now()));
      } catch (err) {
        // Deleted between the read and the insert.
        if (isForeignKeyViolation(err)) throw experimentNotFound(experimentId, datasetId);
        throw err;
      }
      if (inserted) return assignmentFromRow(inserted);
      const kept = await db.get(`SELECT ${ASSIGNMENT_COLUMNS} FROM experiment_assignments WHERE experiment_id = $1 AND user_id = $2`, [experimentId, userId]);
      if (!kept) throw experimentNotFound(experimentId, datasetId);
      return assignmentFromRow(kept);
    },
  };
}
