/**
 * Reads of rows by a key unique within a dataset (an id, a tracking id), written so that the
 * planner takes the key's index whatever its statistics say.
 *
 * The trap: `dataset_id = 'X' AND tracking_id = 'k'` can use the unique (dataset_id, tracking_id)
 * index, or the (dataset_id, id) index with tracking_id as a filter. With the dataset's value in
 * view, the planner sizes dataset X from the table's statistics, and a dataset created or grown
 * since the last ANALYZE looks like one row there: the two indexes cost the same, and the second,
 * which reads every row of the dataset for each key, was the one taken. Autovacuum analyzes a
 * table only after a tenth of it changed, and at best a minute later, so an import into a fresh
 * dataset grew quadratic: batches of 250 at ~1 s each once the dataset held 10,000 rows (every
 * batch reads its tracking ids first), and a GET by tracking id read the whole dataset. With the
 * value hidden (a sub-select, whose value the planner does not know), dataset X is sized as the
 * table's average dataset, and the unique index, one row whatever the statistics, wins.
 */

/** `dataset_id = <param>`, the parameter's value hidden from the planner (see the top of this file). */
export const datasetIs = (param: string): string => `dataset_id = (SELECT ${param}::text)`;

/**
 * A read of the rows of one dataset (`$1`) whose `column`, unique within a dataset, is one of
 * the keys (`$2`, an array): one index probe per key, whatever the statistics say. The plain
 * `dataset_id = $1 AND column = ANY($2)` (or a join, which the planner makes of a lateral
 * subquery without the LIMIT) lets the planner, while a fresh table's statistics lag behind an
 * ingest, scan the whole dataset and filter or hash the keys: a batch then costs as much as the
 * dataset is big.
 */
export const byKeys = (columns: string, table: string, column: string): string =>
  `SELECT r.* FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT ${columns} FROM ${table} WHERE ${datasetIs('$1')} AND ${column} = k.key LIMIT 1) AS r`;
