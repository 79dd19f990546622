/**
 * Per-arm results of an A/B experiment (`GET /api/experiment/:experiment_id/results`), so that an
 * operator can read which arm wins. One statement, the same on SQLite and PostgreSQL.
 *
 * Who counts in an arm, and which of their records:
 * - A user with an assignment (`experiment_assignments`, made by `POST /api/experiment/ab-test`)
 *   is in the arm stored there. Their user events and searches (`search_queries`) of the
 *   dataset with their `user_id`, created at or after the assignment, count; earlier ones
 *   happened before the experiment reached them. Tags are ignored for them.
 * - A user without an assignment counts only through records tagged with an arm: user events
 *   (and searches) whose `metadata.treatment` is one of the arms' current names, each counted in
 *   the arm it names. Such a user is in every arm one of their records names (contradictory tags
 *   are reported as sent, not resolved). Records without a `user_id` count nowhere: there is no
 *   user to attribute them to.
 *
 * Per arm: `users` (the users in it), `converted_users` (those with at least one counted event
 * with is_conversion), `conversion_rate` (converted_users / users, 0 when no users), `searches`
 * and `events` (counted rows), `revenue` (sum of the counted events' `revenue`). The arms are
 * control then t1 (their current names), then any other name assignments still hold (an arm
 * renamed after users were assigned to it), by name.
 */
import type { Experiment } from '../../core/domain/experiments.js';
import { jsonText, type ReportSql } from './report-sql.js';

/** One arm's figures. */
export interface ArmResult {
  readonly treatment_name: string;
  readonly users: number;
  readonly converted_users: number;
  /** converted_users / users, 0..1 (0 when the arm has no users). */
  readonly conversion_rate: number;
  readonly searches: number;
  readonly events: number;
  readonly revenue: number;
}

/** The results route's answer. */
export interface ExperimentResults {
  readonly experiment_id: string;
  readonly arms: ArmResult[];
}

/** The statement, built once per dialect (the only difference is the JSON field expression). */
function resultsSql(sql: ReportSql): string {
  const eventTag = jsonText(sql.dialect, 'e.metadata', 'treatment');
  const searchTag = jsonText(sql.dialect, 's.metadata', 'treatment');
  return `
WITH assigned AS (
  SELECT user_id, treatment_name AS arm, created_at AS since
  FROM experiment_assignments WHERE experiment_id = ? AND dataset_id = ?
),
ev AS (
  SELECT a.arm AS arm, e.user_id AS user_id, e.is_conversion AS is_conversion, e.revenue AS revenue
  FROM assigned a JOIN user_events e ON e.dataset_id = ? AND e.user_id = a.user_id AND e.created_at >= a.since
  UNION ALL
  SELECT ${eventTag} AS arm, e.user_id AS user_id, e.is_conversion AS is_conversion, e.revenue AS revenue
  FROM user_events e
  WHERE e.dataset_id = ? AND e.user_id IS NOT NULL AND ${eventTag} IN (?, ?)
    AND NOT EXISTS (SELECT 1 FROM assigned a WHERE a.user_id = e.user_id)
),
sq AS (
  SELECT a.arm AS arm, s.user_id AS user_id
  FROM assigned a JOIN search_queries s ON s.dataset_id = ? AND s.user_id = a.user_id AND s.created_at >= a.since
  UNION ALL
  SELECT ${searchTag} AS arm, s.user_id AS user_id
  FROM search_queries s
  WHERE s.dataset_id = ? AND s.user_id IS NOT NULL AND ${searchTag} IN (?, ?)
    AND NOT EXISTS (SELECT 1 FROM assigned a WHERE a.user_id = s.user_id)
),
members AS (
  SELECT arm, user_id FROM assigned
  UNION SELECT arm, user_id FROM ev
  UNION SELECT arm, user_id FROM sq
)
SELECT m.arm AS arm, m.users AS users, COALESCE(c.converted, 0) AS converted_users,
  COALESCE(x.events, 0) AS events, COALESCE(x.revenue, 0) AS revenue, COALESCE(q.searches, 0) AS searches
FROM (SELECT arm, COUNT(*) AS users FROM members GROUP BY arm) m
LEFT JOIN (SELECT arm, COUNT(DISTINCT user_id) AS converted FROM ev WHERE is_conversion = 1 GROUP BY arm) c ON c.arm = m.arm
LEFT JOIN (SELECT arm, COUNT(*) AS events, SUM(revenue) AS revenue FROM ev GROUP BY arm) x ON x.arm = m.arm
LEFT JOIN (SELECT arm, COUNT(*) AS searches FROM sq GROUP BY arm) q ON q.arm = m.arm`;
}

const statements = new Map<string, string>();

/** The per-arm results of `experiment` (already looked up in `datasetId`). */
export async function experimentResults(sql: ReportSql, datasetId: string, experiment: Experiment): Promise<ExperimentResults> {
  let text = statements.get(sql.dialect);
  if (text === undefined) {
    text = resultsSql(sql);
    statements.set(sql.dialect, text);
  }
  const arms = [experiment.controlName, experiment.t1Name] as const;
  const rows = await sql.all(text, [experiment.id, datasetId, datasetId, datasetId, ...arms, datasetId, datasetId, ...arms]);
  const byArm = new Map(rows.map((r) => [String(r.arm), r]));
  const names = [...arms, ...[...byArm.keys()].filter((n) => !arms.includes(n)).sort()];
  return {
    experiment_id: experiment.id,
    arms: names.map((name): ArmResult => {
      const r = byArm.get(name);
      const users = Number(r?.users ?? 0);
      const converted = Number(r?.converted_users ?? 0);
      return {
        treatment_name: name,
        users,
        converted_users: converted,
        conversion_rate: users === 0 ? 0 : converted / users,
        searches: Number(r?.searches ?? 0),
        events: Number(r?.events ?? 0),
        revenue: Number(r?.revenue ?? 0),
      };
    }),
  };
}
