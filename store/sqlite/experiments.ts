/** SQLite experiment repository: `experiments`, and their sticky assignments in `experiment_assignments` (migration 8). */
import type { Experiment, ExperimentAssignment } from '../../core/domain/experiments.js';
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
import type { ExperimentPatch, ExperimentRepository } from '../repository.js';
import type { Db } from './database.js';

type Row = Record<string, any>;

/** Whether a driver error is a foreign-key violation (the experiment's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

/** Builds the SQLite experiment repository. */
export function sqliteExperiments(db: Db): ExperimentRepository {
  const insert = db.prepare(`INSERT INTO experiments (${EXPERIMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const one = db.prepare(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE dataset_id = ? AND id = ?`);
  const all = db.prepare(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE dataset_id = ? ORDER BY created_at DESC, id`);
  const rewrite = db.prepare(`UPDATE experiments SET ${EXPERIMENT_UPDATE_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`);
  const removeAssignments = db.prepare('DELETE FROM experiment_assignments WHERE experiment_id = ?');
  const remove = db.prepare('DELETE FROM experiments WHERE id = ?');
  // The experiment and, when there is one, the user's stored arm, in one read.
  const withAssignment = db.prepare(
    `SELECT ${EXPERIMENT_WITH_ASSIGNMENT_COLUMNS}
     FROM experiments e LEFT JOIN experiment_assignments a ON a.experiment_id = e.id AND a.user_id = ?
     WHERE e.dataset_id = ? AND e.id = ?`,
  );
  // A racing first call from another process may have stored the pair first: its row is kept.
  const insertAssignment = db.prepare(
    `INSERT INTO experiment_assignments (${ASSIGNMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (experiment_id, user_id) DO NOTHING`,
  );
  const assignment = db.prepare(`SELECT ${ASSIGNMENT_COLUMNS} FROM experiment_assignments WHERE experiment_id = ? AND user_id = ?`);

  const find = (datasetId: string, id: string): Experiment | undefined => {
    const row = one.get(datasetId, id) as Row | undefined;
    return row ? experimentFromRow(row) : undefined;
  };

  const updateOne = db.transaction((datasetId: string, id: string, patch: ExperimentPatch): Experiment => {
    const current = find(datasetId, id);
    if (!current) throw experimentNotFound(id, datasetId);
    const next = updatedExperiment(current, patch, Date.now());
    rewrite.run(...experimentUpdateParams(next));
    return next;
  });

  const deleteOne = db.transaction((datasetId: string, id: string): void => {
    if (!find(datasetId, id)) throw experimentNotFound(id, datasetId);
    removeAssignments.run(id);
    remove.run(id);
  });

  /**
   * No transaction: a returning user's arm is one read, and a new one's is one insert that keeps
   * whichever row came first (a deferred transaction upgraded to write would fail with
   * SQLITE_BUSY_SNAPSHOT whenever another process wrote since its read).
   */
  const assignOne = (datasetId: string, experimentId: string, userId: string): ExperimentAssignment => {
    const row = withAssignment.get(userId, datasetId, experimentId) as Row | undefined;
    if (!row) throw experimentNotFound(experimentId, datasetId);
    const stored = storedAssignment(row, datasetId, experimentId, userId);
    if (stored) return stored;
    try {
      insertAssignment.run(...firstAssignmentParams(experimentFromRow(row), userId, Date.now()));
    } catch (err) {
      // Deleted between the read and the insert.
      if (isForeignKeyViolation(err)) throw experimentNotFound(experimentId, datasetId);
      throw err;
    }
    const kept = assignment.get(experimentId, userId) as Row | undefined;
    if (!kept) throw experimentNotFound(experimentId, datasetId);
    return assignmentFromRow(kept);
  };

  return {
    async create(input) {
      const record = newExperiment(input, Date.now());
      try {
        insert.run(...experimentParams(record));
      } catch (err) {
        if (isForeignKeyViolation(err)) throw experimentDatasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      return find(datasetId, id);
    },
    async list(datasetId) {
      return (all.all(datasetId) as Row[]).map(experimentFromRow);
    },
    // IMMEDIATE: the write lock is taken before the experiment is read, so what is checked is what is written over.
    async update(datasetId, id, patch) {
      return updateOne.immediate(datasetId, id, patch);
    },
    async delete(datasetId, id) {
      deleteOne.immediate(datasetId, id);
    },
    async assign(datasetId, experimentId, userId) {
      return assignOne(datasetId, experimentId, userId);
    },
  };
}
