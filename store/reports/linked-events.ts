/**
 * The SQL conditions on a user event linked to a report's record `q` (a search, an answer or a
 * recommendation), written once so every report counts a click or conversion the same way: an
 * event links to `q` when its `request_id` is `q`'s id in the same dataset.
 */

/** The link of a user event `e` to the record `q`: a join's ON, or part of a WHERE. */
export const EVENT_LINK = 'e.request_id = q.id AND e.dataset_id = q.dataset_id';

/**
 * `EXISTS (subquery)` that SQLite runs as a correlated subquery. SQLite 3.51 turns a plain EXISTS
 * into a join, and when the outer rows come in ORDER BY order from an index (the latency and top
 * score listings) with an OFFSET, each extra matching event counts against the OFFSET: a page of
 * records with several clicks skipped records (reproduced with better-sqlite3's 3.51.2; the
 * listing contract test in test/store/report-sql-contract.test.ts holds it). A LIMIT in the
 * subquery keeps it a subquery; PostgreSQL plans it as before.
 */
export const exists = (subquery: string): string => `EXISTS (${subquery} LIMIT 1)`;

/** An SQL condition: at least one user event meeting `condition` (on `e`) links to the record `q`. */
export const linkedEvent = (condition: string): string => exists(`SELECT 1 FROM user_events e WHERE ${EVENT_LINK} AND ${condition}`);

/** The record `q` has at least one linked click. */
export const HAS_CLICK = linkedEvent(`e.event_type = 'click'`);

/** The record `q` has at least one linked conversion. */
export const HAS_CONVERSION = linkedEvent('e.is_conversion = 1');

/** A listing's `has_clicks`: true keeps the records with a linked click, false those without, absent all. */
export const clickCondition = (hasClicks: boolean | undefined): string | undefined =>
  hasClicks === undefined ? undefined : hasClicks ? HAS_CLICK : `NOT ${HAS_CLICK}`;
