/**
 * Follow-up answers (issue 15, `followup_queries`): an answer is a follow-up when an answer of the
 * same dataset and topic sorts before it by (created_at, id). Grouping every answer of a dataset
 * by topic with a window function took 1.5 s at 10M events, so both stores keep, with the answers:
 *
 * - `rag_queries.followup` (0/1): set by the statements that insert or delete answers, for every
 *   topic they touch. An answer inserted before its topic's first turns that one into a follow-up;
 *   a purge that removes a topic's first turns the next one into the first. A topic has exactly one
 *   answer with the flag 0 at each commit, its first, so a writer finds the answers whose flag may
 *   be wrong (its own new rows, inserted with 0, and the old first) by the partial index on
 *   `followup = 0`, and the first by the topic's (created_at, id) index.
 * - `rag_followup_totals` (per dataset and user message) and `rag_followup_type_totals` (per
 *   dataset, rag type and user message): the follow-ups counted, ranked by index, for
 *   `followup_queries` over a dataset's whole history with no filter or only a rag type. A key with
 *   no follow-up left has no row.
 *
 * A date range reads the flagged answers by the partial index `rag_queries_followup`
 * (dataset, created_at, rag type, user message), which holds only follow-ups
 * (reports/rag-followups.ts); on PostgreSQL only those whose message an index entry holds, the
 * others by an index of their own (./text-keys.ts).
 */

/** One table of follow-up totals: its name and the columns that key it besides the user message. */
export interface FollowupTotalsTable {
  readonly table: 'rag_followup_totals' | 'rag_followup_type_totals';
  /** Key columns before `user_message`. */
  readonly keys: readonly ('dataset_id' | 'rag_type')[];
}

/** Follow-ups per (dataset, user message). */
export const FOLLOWUP_TOTALS: FollowupTotalsTable = { table: 'rag_followup_totals', keys: ['dataset_id'] };
/** Follow-ups per (dataset, rag type, user message). */
export const FOLLOWUP_TYPE_TOTALS: FollowupTotalsTable = { table: 'rag_followup_type_totals', keys: ['dataset_id', 'rag_type'] };
/** Both totals tables. */
export const FOLLOWUP_TOTALS_TABLES: readonly FollowupTotalsTable[] = [FOLLOWUP_TOTALS, FOLLOWUP_TYPE_TOTALS];

/** An answer whose follow-up flag a write set (or cleared, or that went with it set), as stored. */
export interface FollowupAnswer {
  readonly datasetId: string;
  readonly ragType: string;
  readonly message: string;
}

/** The columns a statement over `rag_queries` (as `alias`, with its dot, or none) returns as a {@link FollowupAnswer}. */
export const followupAnswerColumns = (alias = ''): string => `${alias}dataset_id AS "datasetId", ${alias}rag_type AS "ragType", ${alias}user_message AS message`;

/** A topic of a dataset whose answers a write inserted or deleted. */
export interface TopicKey {
  readonly datasetId: string;
  readonly topicId: string;
}

/** The distinct topics of `rows` (rows without a topic left out), in key order. */
export function touchedTopics(rows: readonly { datasetId: string; topicId?: string | null }[]): TopicKey[] {
  const byKey = new Map<string, TopicKey>();
  for (const r of rows) if (typeof r.topicId === 'string') byKey.set(JSON.stringify([r.datasetId, r.topicId]), { datasetId: r.datasetId, topicId: r.topicId });
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The answers gained and lost as follow-ups by one write. */
export interface FollowupChanges {
  readonly gained: FollowupAnswer[];
  readonly lost: FollowupAnswer[];
}

/** No change yet. */
export const noFollowupChanges = (): FollowupChanges => ({ gained: [], lost: [] });

/** What one write adds to (or takes from) one row of a totals table. */
export interface FollowupDelta {
  /** The row's key values, in the table's `keys` order then the user message. */
  readonly key: readonly string[];
  followups: number;
}

/** What `changes` add to the rows of `table`, summed per row, in key order (every writer touches keys in the same order); zero sums left out. */
export function followupDeltas(changes: FollowupChanges, table: FollowupTotalsTable): FollowupDelta[] {
  const byKey = new Map<string, FollowupDelta>();
  const add = (a: FollowupAnswer, sign: 1 | -1): void => {
    const key = [...table.keys.map((k) => (k === 'dataset_id' ? a.datasetId : a.ragType)), a.message];
    const id = JSON.stringify(key);
    const d = byKey.get(id) ?? byKey.set(id, { key, followups: 0 }).get(id)!;
    d.followups += sign;
  };
  for (const a of changes.gained) add(a, 1);
  for (const a of changes.lost) add(a, -1);
  return [...byKey.keys()]
    .sort()
    .map((k) => byKey.get(k)!)
    .filter((d) => d.followups !== 0);
}

/** A deleted answer as its delete returns it (`subtype`: its rag type; `followup`: its flag). */
export interface DeletedAnswer {
  readonly datasetId: string;
  readonly subtype: string;
  readonly message?: string | null;
  readonly topicId?: string | null;
  readonly followup?: number | string;
}

/** What deleting `gone` changes: the follow-ups lost with them, and the topics whose first went (to settle). */
export function deletedFollowups(gone: readonly DeletedAnswer[]): { topics: TopicKey[]; changes: FollowupChanges } {
  return {
    topics: touchedTopics(gone.filter((r) => Number(r.followup) === 0)),
    changes: {
      gained: [],
      lost: gone.filter((r) => Number(r.followup) === 1).map((r) => ({ datasetId: r.datasetId, ragType: r.subtype, message: String(r.message) })),
    },
  };
}

/** The key columns of a totals table's row, in order. */
export const totalsKeyColumns = (table: FollowupTotalsTable): string[] => [...table.keys, 'user_message'];

/** A topic's first answer by (created_at, id), found by the `rag_queries_topic_order` index; `?` are the dataset and topic. */
export const TOPIC_FIRST_SQL = 'SELECT id FROM rag_queries WHERE dataset_id = ? AND topic_id = ? ORDER BY created_at, id LIMIT 1';

/**
 * The migration statements (after the column, the topic index and the totals tables exist) that set the flag of
 * every stored answer and fill both totals tables from them.
 */
export const FOLLOWUP_BACKFILL = [
  `UPDATE rag_queries SET followup = 1 WHERE topic_id IS NOT NULL AND EXISTS (
     SELECT 1 FROM rag_queries p WHERE p.dataset_id = rag_queries.dataset_id AND p.topic_id = rag_queries.topic_id
       AND (p.created_at < rag_queries.created_at OR (p.created_at = rag_queries.created_at AND p.id < rag_queries.id)));`,
  ...FOLLOWUP_TOTALS_TABLES.map((t) => {
    const keys = totalsKeyColumns(t).join(', ');
    return `INSERT INTO ${t.table} (${keys}, followups) SELECT ${keys}, COUNT(*) FROM rag_queries WHERE followup = 1 GROUP BY ${keys};`;
  }),
].join('\n');
