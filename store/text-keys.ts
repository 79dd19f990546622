/**
 * Free texts as keys of PostgreSQL's analytics tables: a search's query text (up to 4,096 UTF-16
 * units stored) in `search_query_totals`, `search_query_hourly` and `search_query_daily`, an
 * answer's user message (up to 65,536) in `rag_message_totals`, `rag_followup_totals`,
 * `rag_followup_type_totals` and the follow-ups' partial index on `rag_queries`.
 *
 * A PostgreSQL btree entry holds at most 2,704 bytes (a value is compressed first, which random
 * or CJK text barely is), so an index holding the whole text failed the insert of one long text,
 * and with it the whole analytics batch, every time it was retried. On PostgreSQL these tables are
 * therefore unique by the text's md5 (an expression index: every ON CONFLICT and every lookup by
 * key names the same expression) and ranked by the text's first {@link RANK_PREFIX_CHARS}
 * characters, the whole text breaking the ties the prefix leaves (a sort of those few rows only);
 * the follow-ups are indexed in two parts by the message's size ({@link pgTextFits}). SQLite has
 * no such limit: its tables key and rank the texts themselves.
 *
 * The indexes are those of PostgreSQL migration v18, which spells these expressions and constants
 * out: the planner matches them literally, so changing one here needs a migration.
 *
 * md5 collisions can be crafted: two texts with one md5 share one row (the text stored first),
 * so a report counts both under that text. That costs the accuracy of the report lines of whoever
 * crafted them, never a stored record.
 */
import type { Dialect } from './reports/report-sql.js';

/** UTF-8 bytes of a text that an index entry holds whole, uncompressed, with room to spare for the entry's other columns. */
export const PG_WHOLE_TEXT_BYTES = 2000;

/**
 * PostgreSQL's condition that the text `column` fits an index entry (`short`), or its converse:
 * the follow-ups' partial indexes hold the short messages whole (counting them is an index-only
 * scan; an expression of the text would not be) and the long ones without the message. A query
 * names the same condition, so that the planner can prove it implies an index's.
 */
export const pgTextFits = (column: string, short: boolean): string => `octet_length(${column}) ${short ? '<=' : '>'} ${PG_WHOLE_TEXT_BYTES}`;

/** Characters of a text a rank index holds: at most 800 bytes of UTF-8, far below the entry limit. */
export const RANK_PREFIX_CHARS = 200;

/** PostgreSQL's key expression of the text `column` (what the unique indexes and ON CONFLICT name). */
export const pgTextKey = (column: string): string => `md5(${column})`;

/** What a lookup by text compares so that it walks the unique index: the text on SQLite, its key on PostgreSQL. */
export const keyedText = (dialect: Dialect, expr: string): string => (dialect === 'sqlite' ? expr : pgTextKey(expr));

/**
 * ORDER BY terms ranking the text `column` in code-point (UTF-8 byte) order, through the rank
 * index where one exists. On PostgreSQL the prefix first: under the columns' bytewise "C"
 * collation, texts that differ within their prefixes compare as the prefixes do, and a prefix
 * shorter than {@link RANK_PREFIX_CHARS} is its whole text, which sorts before any longer text
 * it begins; so `prefix, text` is the order of `text`, and the planner walks the index on the
 * prefix, sorting only the rows that tie on it.
 */
export const rankedText = (dialect: Dialect, column: string): string =>
  dialect === 'sqlite' ? `${column} COLLATE BINARY` : `left(${column}, ${RANK_PREFIX_CHARS}), ${column}`;
