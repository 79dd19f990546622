/**
 * Versioned schema of the PostgreSQL store. Each entry runs once, in order, inside a transaction;
 * the `schema_version` table records how many have run. Never edit an entry that has shipped:
 * append a new one (and the same change to ../sqlite/migrations.ts).
 *
 * The tables and columns are those of the SQLite store after its migrations, with the same value
 * types, so one row conversion (../rows.ts) serves both and a data directory copies across
 * unchanged: JSON as TEXT, booleans as INTEGER 0/1, epoch milliseconds as BIGINT, REAL as DOUBLE
 * PRECISION, BLOB as BYTEA.
 */
import { EVENT_LINK_TARGETS, EVENT_ROLLUP_TABLES, eventLinkBackfillSql, eventRollupBackfillSql } from '../event-rollup-batch.js';
import { FILTER_ROLLUP_TABLES, filterRollupTableSql } from '../filter-rollup-batch.js';
import { positionsBackfillSql, QUERY_TOTALS_BACKFILL, ROLLUP_TABLES, rollupBackfillSql } from '../search-rollup-batch.js';
import { MESSAGE_TOTALS_BACKFILL, RECORD_SOURCES, recordRollupBackfillSql } from '../record-rollup-batch.js';
import { FOLLOWUP_BACKFILL } from '../followup-batch.js';
import { USER_ROLLUP_TABLES } from '../user-rollup-batch.js';
import type { Sql } from './database.js';
import { fillPgFilterRollup } from './filter-rollup.js';
import { fillUserRollups } from './user-rollup.js';
import { QUERY_PERIOD_TABLES, queryPeriodBackfillSql } from '../search-query-periods.js';

/**
 * Every TEXT column compares bytewise (COLLATE "C"), as SQLite's do: ids are ordered for keyset
 * pages (`id > $1 ORDER BY id`) and tags sorted, and the database's own locale (often
 * en_US.UTF-8, which orders 'B' after 'a') must not change either.
 */
const bytewise = (sql: string): string => sql.replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');

/** A migration: SQL, or a function for a fill SQL cannot express (run in the same transaction). */
export type PgMigration = string | ((sql: Sql) => Promise<void>);

/** The migrations, oldest first. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  bytewise(`
  CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    registerable INTEGER NOT NULL DEFAULT 1,
    deleted INTEGER NOT NULL DEFAULT 0,
    partner_configuration TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE TABLE memberships (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    role INTEGER NOT NULL CHECK (role IN (0, 1, 2)),
    scopes TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (user_id, organization_id)
  );
  CREATE INDEX memberships_org ON memberships(organization_id);
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    role INTEGER NOT NULL CHECK (role IN (0, 1, 2)),
    dataset_ids TEXT NOT NULL DEFAULT '[]',
    scopes TEXT NOT NULL DEFAULT '[]',
    default_params TEXT,
    expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX api_keys_org ON api_keys(organization_id);
  CREATE INDEX api_keys_user ON api_keys(user_id);
  CREATE TABLE datasets (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tracking_id TEXT,
    server_configuration TEXT NOT NULL DEFAULT '{}',
    deleted INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE UNIQUE INDEX datasets_tracking ON datasets(organization_id, tracking_id)
    WHERE tracking_id IS NOT NULL AND deleted = 0;
  CREATE INDEX datasets_org ON datasets(organization_id, created_at);
  CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    tracking_id TEXT,
    chunk_html TEXT,
    link TEXT,
    metadata TEXT,
    tag_set TEXT NOT NULL DEFAULT '[]',
    time_stamp BIGINT,
    weight DOUBLE PRECISION NOT NULL DEFAULT 0,
    image_urls TEXT,
    lat DOUBLE PRECISION,
    lon DOUBLE PRECISION,
    num_value DOUBLE PRECISION,
    semantic_content TEXT,
    fulltext_content TEXT,
    convert_html_to_text INTEGER NOT NULL DEFAULT 1,
    fulltext_boost TEXT,
    semantic_boost TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    semantic_hash TEXT,
    vector_model TEXT,
    vector_hash TEXT
  );
  CREATE UNIQUE INDEX chunks_tracking ON chunks(dataset_id, tracking_id) WHERE tracking_id IS NOT NULL;
  CREATE INDEX chunks_dataset ON chunks(dataset_id, id);
  CREATE INDEX chunks_embed_stale ON chunks(dataset_id, id)
    WHERE vector_hash IS NULL OR semantic_hash IS NULL OR vector_hash != semantic_hash;
  CREATE INDEX chunks_vector_model ON chunks(dataset_id, vector_model) WHERE vector_model IS NOT NULL;
  CREATE TABLE chunk_groups (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    tracking_id TEXT,
    metadata TEXT,
    tag_set TEXT NOT NULL DEFAULT '[]',
    file_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE UNIQUE INDEX groups_tracking ON chunk_groups(dataset_id, tracking_id) WHERE tracking_id IS NOT NULL;
  CREATE INDEX groups_dataset ON chunk_groups(dataset_id, created_at);
  CREATE TABLE chunk_group_members (
    group_id TEXT NOT NULL REFERENCES chunk_groups(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (group_id, chunk_id)
  );
  CREATE INDEX group_members_chunk ON chunk_group_members(chunk_id);
  -- seq is drawn while the transaction holds its dataset's advisory lock (database.ts,
  -- Tx.lockDataset), so within a dataset the numbers commit in order.
  CREATE TABLE change_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    created_at BIGINT NOT NULL
  );
  CREATE INDEX change_log_dataset ON change_log(dataset_id, seq);
  CREATE TABLE chunk_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    vector BYTEA NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX chunk_vectors_dataset ON chunk_vectors(dataset_id);
  CREATE TABLE dataset_events (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    event_data TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX dataset_events_dataset ON dataset_events(dataset_id, created_at);
  CREATE TABLE search_queries (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    query TEXT NOT NULL,
    request_params TEXT NOT NULL,
    latency DOUBLE PRECISION NOT NULL,
    top_score DOUBLE PRECISION NOT NULL,
    results TEXT NOT NULL,
    result_count INTEGER NOT NULL,
    user_id TEXT,
    metadata TEXT,
    query_rating TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX search_queries_dataset ON search_queries(dataset_id, created_at);
  CREATE INDEX search_queries_created ON search_queries(created_at);
  CREATE TABLE recommendation_queries (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    recommendation_type TEXT NOT NULL,
    positive_ids TEXT NOT NULL,
    negative_ids TEXT NOT NULL,
    positive_tracking_ids TEXT NOT NULL,
    negative_tracking_ids TEXT NOT NULL,
    request_params TEXT NOT NULL,
    results TEXT NOT NULL,
    top_score DOUBLE PRECISION NOT NULL,
    user_id TEXT,
    metadata TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX recommendation_queries_dataset ON recommendation_queries(dataset_id, created_at);
  CREATE INDEX recommendation_queries_created ON recommendation_queries(created_at);
  CREATE TABLE chunk_sparse_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    model TEXT NOT NULL,
    source_updated_at BIGINT NOT NULL,
    indices BYTEA NOT NULL,
    vals BYTEA NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX chunk_sparse_vectors_dataset ON chunk_sparse_vectors(dataset_id);
  `),
  // v2: RAG (issue 13), the tables of ../sqlite/migrations.ts v6 (see there why each is as it is).
  bytewise(`
  CREATE TABLE topics (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    metadata TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX topics_owner ON topics(dataset_id, owner_id, created_at);
  CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    topic_id TEXT NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    sort_order INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX messages_topic ON messages(topic_id, sort_order);
  CREATE UNIQUE INDEX messages_live_order ON messages(topic_id, sort_order) WHERE deleted = 0;
  CREATE INDEX messages_dataset ON messages(dataset_id);
  CREATE TABLE rag_queries (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    rag_type TEXT NOT NULL,
    user_message TEXT NOT NULL,
    search_id TEXT,
    topic_id TEXT,
    results TEXT NOT NULL,
    llm_response TEXT NOT NULL,
    top_score DOUBLE PRECISION NOT NULL,
    user_id TEXT,
    metadata TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency DOUBLE PRECISION NOT NULL,
    query_rating TEXT,
    hallucination_score DOUBLE PRECISION NOT NULL DEFAULT 0,
    detected_hallucinations TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL
  );
  CREATE INDEX rag_queries_dataset ON rag_queries(dataset_id, created_at);
  CREATE INDEX rag_queries_created ON rag_queries(created_at);
  `),
  // v3: files (issue 14), the table of ../sqlite/migrations.ts v7 (see there why it is as it is).
  // Counts and sizes are BIGINT: a file's bytes pass 2^31.
  bytewise(`
  CREATE TABLE files (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    file_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    link TEXT,
    metadata TEXT,
    tag_set TEXT NOT NULL DEFAULT '[]',
    time_stamp BIGINT,
    size BIGINT NOT NULL DEFAULT 0,
    blob_key TEXT NOT NULL,
    content_type TEXT,
    group_id TEXT,
    import_options TEXT,
    split_options TEXT,
    rows_done BIGINT NOT NULL DEFAULT 0,
    rows_total BIGINT,
    rows_imported BIGINT NOT NULL DEFAULT 0,
    rows_skipped BIGINT NOT NULL DEFAULT 0,
    bytes_done BIGINT NOT NULL DEFAULT 0,
    errors TEXT NOT NULL DEFAULT '[]',
    error_count BIGINT NOT NULL DEFAULT 0,
    failure TEXT,
    cursor TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX files_dataset ON files(dataset_id, created_at);
  `),
  // v4: analytics (issue 15), the tables of ../sqlite/migrations.ts v8 (see there why they are as they are).
  bytewise(`
  CREATE TABLE user_events (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    event_name TEXT NOT NULL,
    items TEXT NOT NULL,
    metadata TEXT,
    user_id TEXT,
    is_conversion INTEGER NOT NULL,
    request_id TEXT,
    request_type TEXT,
    location TEXT,
    position INTEGER,
    clicked_chunk_id TEXT,
    revenue DOUBLE PRECISION NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX user_events_dataset ON user_events(dataset_id, created_at);
  CREATE INDEX user_events_request ON user_events(request_id);
  CREATE INDEX user_events_created ON user_events(created_at);
  CREATE TABLE query_ratings (
    query_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    rating INTEGER NOT NULL,
    note TEXT,
    metadata TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX query_ratings_dataset ON query_ratings(dataset_id, kind);
  CREATE TABLE experiments (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    area TEXT NOT NULL,
    control_name TEXT NOT NULL,
    control_split DOUBLE PRECISION NOT NULL,
    t1_name TEXT NOT NULL,
    t1_split DOUBLE PRECISION NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX experiments_dataset ON experiments(dataset_id, created_at);
  CREATE TABLE experiment_assignments (
    id TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    treatment_name TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (experiment_id, user_id)
  );
  CREATE INDEX experiment_assignments_dataset ON experiment_assignments(dataset_id, user_id);
  CREATE INDEX rag_queries_topic ON rag_queries(dataset_id, topic_id);
  `),
  // v5: the search rollups (../search-rollup-batch.ts), as in ../sqlite/migrations.ts (whose v9
  // comment says why their first fill is v6's now).
  bytewise(`
  CREATE TABLE search_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour BIGINT NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    searches BIGINT NOT NULL,
    latency_sum DOUBLE PRECISION NOT NULL,
    latency_histogram TEXT NOT NULL,
    rated BIGINT NOT NULL,
    positive BIGINT NOT NULL,
    negative BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, hour, search_type, search_method)
  );
  CREATE TABLE search_rollup_daily (
    dataset_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    searches BIGINT NOT NULL,
    latency_sum DOUBLE PRECISION NOT NULL,
    latency_histogram TEXT NOT NULL,
    rated BIGINT NOT NULL,
    positive BIGINT NOT NULL,
    negative BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, day, search_type, search_method)
  );
  `),
  // v6: rating sums, linked clicks and conversions in the rollups, refilled; the latency and top
  // score indexes (as SQLite's v10). The fill is left out of bytewise(): its casts name TEXT as a
  // type, where COLLATE cannot go.
  `
  ALTER TABLE search_rollup_hourly ADD COLUMN rating_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN clicked BIGINT NOT NULL DEFAULT 0, ADD COLUMN converted BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN rating_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN clicked BIGINT NOT NULL DEFAULT 0, ADD COLUMN converted BIGINT NOT NULL DEFAULT 0;
  DELETE FROM search_rollup_hourly;
  DELETE FROM search_rollup_daily;
  CREATE INDEX search_queries_latency ON search_queries(dataset_id, latency);
  CREATE INDEX search_queries_top_score ON search_queries(dataset_id, top_score);
  ` + ROLLUP_TABLES.map((t) => rollupBackfillSql(t, 'postgres', false)).join('\n'),
  // v7: the user event rollups (../event-rollup-batch.ts), as SQLite's v11.
  bytewise(`
  CREATE TABLE user_event_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour BIGINT NOT NULL,
    event_type TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events BIGINT NOT NULL,
    revenue DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (dataset_id, hour, event_type, event_name)
  );
  CREATE TABLE user_event_rollup_daily (
    dataset_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    event_type TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events BIGINT NOT NULL,
    revenue DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (dataset_id, day, event_type, event_name)
  );
  `) + EVENT_ROLLUP_TABLES.map(eventRollupBackfillSql).join('\n'),
  // v8: the all-time searches per query text, and the top score index ending with the id, as SQLite's v12.
  bytewise(`
  CREATE TABLE search_query_totals (
    dataset_id TEXT NOT NULL,
    query TEXT NOT NULL,
    searches BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, query)
  );
  CREATE INDEX search_query_totals_rank ON search_query_totals(dataset_id, searches DESC, query);
  DROP INDEX search_queries_top_score;
  CREATE INDEX search_queries_top_score ON search_queries(dataset_id, top_score, id);
  `) + QUERY_TOTALS_BACKFILL,
  // v9: the record rollups and the recommendations' top score index, as SQLite's v13.
  bytewise(`
  CREATE TABLE record_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour BIGINT NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    records BIGINT NOT NULL,
    rated BIGINT NOT NULL,
    positive BIGINT NOT NULL,
    negative BIGINT NOT NULL,
    rating_sum DOUBLE PRECISION NOT NULL,
    clicked BIGINT NOT NULL,
    converted BIGINT NOT NULL,
    positioned BIGINT NOT NULL,
    position_sum DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (dataset_id, hour, kind, subtype)
  );
  CREATE TABLE record_rollup_daily (
    dataset_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    records BIGINT NOT NULL,
    rated BIGINT NOT NULL,
    positive BIGINT NOT NULL,
    negative BIGINT NOT NULL,
    rating_sum DOUBLE PRECISION NOT NULL,
    clicked BIGINT NOT NULL,
    converted BIGINT NOT NULL,
    positioned BIGINT NOT NULL,
    position_sum DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (dataset_id, day, kind, subtype)
  );
  CREATE TABLE record_event_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour BIGINT NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, hour, kind, subtype, event_name)
  );
  CREATE TABLE record_event_rollup_daily (
    dataset_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, day, kind, subtype, event_name)
  );
  CREATE INDEX recommendation_queries_top_score ON recommendation_queries(dataset_id, top_score, id);
  `) + RECORD_SOURCES.map(recordRollupBackfillSql).join('\n'),
  // v10: the click positions in the search rollups, as SQLite's v14.
  `
  ALTER TABLE search_rollup_hourly ADD COLUMN positioned BIGINT NOT NULL DEFAULT 0, ADD COLUMN position_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN positioned BIGINT NOT NULL DEFAULT 0, ADD COLUMN position_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
  ` + ROLLUP_TABLES.map(positionsBackfillSql).join('\n'),
  // v11: the all-time answers per user message, as SQLite's v15.
  bytewise(`
  CREATE TABLE rag_message_totals (
    dataset_id TEXT NOT NULL,
    user_message TEXT NOT NULL,
    answers BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, user_message)
  );
  CREATE INDEX rag_message_totals_rank ON rag_message_totals(dataset_id, answers DESC, user_message);
  `) + MESSAGE_TOTALS_BACKFILL,
  // v12: the per-user rollups and user ordinals, as SQLite's v16 (filled in TypeScript, ./user-rollup.ts).
  async (sql) => {
    await sql.run(
      bytewise(`
    CREATE TABLE analytics_users (
      dataset_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      ordinal BIGINT NOT NULL,
      PRIMARY KEY (dataset_id, user_id)
    );
    CREATE UNIQUE INDEX analytics_users_ordinal ON analytics_users(dataset_id, ordinal);
    ${USER_ROLLUP_TABLES.map(
      (t) => `CREATE TABLE ${t.table} (
      dataset_id TEXT NOT NULL,
      ${t.column} BIGINT NOT NULL,
      source TEXT NOT NULL,
      type TEXT NOT NULL,
      method TEXT NOT NULL,
      records BIGINT NOT NULL,
      users BIGINT NOT NULL,
      members BYTEA NOT NULL,
      PRIMARY KEY (dataset_id, ${t.column}, source, type, method)
    );`,
    ).join('\n')}
    `),
    );
    await fillUserRollups(sql);
  },
  // v13: the events linked to a stored search and to a stored RAG answer in the user event rollups, as SQLite's v17.
  `
  ALTER TABLE user_event_rollup_hourly ADD COLUMN search_events BIGINT NOT NULL DEFAULT 0, ADD COLUMN search_revenue DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN rag_events BIGINT NOT NULL DEFAULT 0, ADD COLUMN rag_revenue DOUBLE PRECISION NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_daily ADD COLUMN search_events BIGINT NOT NULL DEFAULT 0, ADD COLUMN search_revenue DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN rag_events BIGINT NOT NULL DEFAULT 0, ADD COLUMN rag_revenue DOUBLE PRECISION NOT NULL DEFAULT 0;
  ` + EVENT_ROLLUP_TABLES.flatMap((t) => EVENT_LINK_TARGETS.map((target) => eventLinkBackfillSql(t, target))).join('\n'),
  // v14: the answers' follow-up flag and the follow-ups per user message, as SQLite's v18.
  bytewise(`
  ALTER TABLE rag_queries ADD COLUMN followup INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX rag_queries_topic_order ON rag_queries(dataset_id, topic_id, created_at, id);
  CREATE TABLE rag_followup_totals (
    dataset_id TEXT NOT NULL,
    user_message TEXT NOT NULL,
    followups BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, user_message)
  );
  CREATE INDEX rag_followup_totals_rank ON rag_followup_totals(dataset_id, followups DESC, user_message);
  CREATE TABLE rag_followup_type_totals (
    dataset_id TEXT NOT NULL,
    rag_type TEXT NOT NULL,
    user_message TEXT NOT NULL,
    followups BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, rag_type, user_message)
  );
  CREATE INDEX rag_followup_type_totals_rank ON rag_followup_type_totals(dataset_id, rag_type, followups DESC, user_message);
  `) +
    FOLLOWUP_BACKFILL +
    `
  -- After the backfill: cheaper than keeping them up to date through it.
  CREATE INDEX rag_queries_topic_first ON rag_queries(dataset_id, topic_id) WHERE followup = 0 AND topic_id IS NOT NULL;
  CREATE INDEX rag_queries_followup ON rag_queries(dataset_id, created_at, rag_type, user_message) WHERE followup = 1;
  `,
  // v15: the filter rollups, as SQLite's v19 (filled in TypeScript, ./filter-rollup.ts).
  async (sql) => {
    await sql.run(bytewise(FILTER_ROLLUP_TABLES.map((t) => filterRollupTableSql(t, 'BIGINT')).join('')));
    await fillPgFilterRollup(sql);
  },
  // v16: the searches per (dataset, hour or day, query text), as SQLite's v20.
  bytewise(`
  CREATE TABLE search_query_hourly (
    dataset_id TEXT NOT NULL,
    hour BIGINT NOT NULL,
    query TEXT NOT NULL,
    searches BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, query, hour)
  );
  CREATE INDEX search_query_hourly_rank ON search_query_hourly(dataset_id, hour, searches DESC, query);
  CREATE TABLE search_query_daily (
    dataset_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    query TEXT NOT NULL,
    searches BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, query, day)
  );
  CREATE INDEX search_query_daily_rank ON search_query_daily(dataset_id, day, searches DESC, query);
  `) + QUERY_PERIOD_TABLES.map(queryPeriodBackfillSql).join('\n'),
  // v17: the answers' top score and hallucination score indexes, as SQLite's v21.
  `
  CREATE INDEX rag_queries_top_score ON rag_queries(dataset_id, top_score, id);
  CREATE INDEX rag_queries_hallucination ON rag_queries(dataset_id, hallucination_score, id);
  `,
  // v18 (pgkeys): the free-text keys rebuilt as ../text-keys.ts says, the rows unchanged: unique
  // by md5, ranked by a 200-character prefix (RANK_PREFIX_CHARS: the reports order by the same
  // expression, so a new prefix needs a new migration); the periods' keys keep the text before the
  // period (a query's counts over a range are one index range). The follow-ups' partial index is
  // split in two by the message's size (PG_WHOLE_TEXT_BYTES, named by the reports' conditions too):
  // the short messages whole, so that counting them stays an index-only scan (a part or hash of
  // the text would not: such a scan needs the column itself), the long ones without the message.
  // Fails on a dataset holding two texts of one md5 (crafted), which the old keys allowed. SQLite
  // keeps its schema.
  `
  ALTER TABLE search_query_totals DROP CONSTRAINT search_query_totals_pkey;
  CREATE UNIQUE INDEX search_query_totals_key ON search_query_totals(dataset_id, md5(query));
  DROP INDEX search_query_totals_rank;
  CREATE INDEX search_query_totals_rank ON search_query_totals(dataset_id, searches DESC, left(query, 200));
  ALTER TABLE search_query_hourly DROP CONSTRAINT search_query_hourly_pkey;
  CREATE UNIQUE INDEX search_query_hourly_key ON search_query_hourly(dataset_id, md5(query), hour);
  DROP INDEX search_query_hourly_rank;
  CREATE INDEX search_query_hourly_rank ON search_query_hourly(dataset_id, hour, searches DESC, left(query, 200));
  ALTER TABLE search_query_daily DROP CONSTRAINT search_query_daily_pkey;
  CREATE UNIQUE INDEX search_query_daily_key ON search_query_daily(dataset_id, md5(query), day);
  DROP INDEX search_query_daily_rank;
  CREATE INDEX search_query_daily_rank ON search_query_daily(dataset_id, day, searches DESC, left(query, 200));
  ALTER TABLE rag_message_totals DROP CONSTRAINT rag_message_totals_pkey;
  CREATE UNIQUE INDEX rag_message_totals_key ON rag_message_totals(dataset_id, md5(user_message));
  DROP INDEX rag_message_totals_rank;
  CREATE INDEX rag_message_totals_rank ON rag_message_totals(dataset_id, answers DESC, left(user_message, 200));
  ALTER TABLE rag_followup_totals DROP CONSTRAINT rag_followup_totals_pkey;
  CREATE UNIQUE INDEX rag_followup_totals_key ON rag_followup_totals(dataset_id, md5(user_message));
  DROP INDEX rag_followup_totals_rank;
  CREATE INDEX rag_followup_totals_rank ON rag_followup_totals(dataset_id, followups DESC, left(user_message, 200));
  ALTER TABLE rag_followup_type_totals DROP CONSTRAINT rag_followup_type_totals_pkey;
  CREATE UNIQUE INDEX rag_followup_type_totals_key ON rag_followup_type_totals(dataset_id, rag_type, md5(user_message));
  DROP INDEX rag_followup_type_totals_rank;
  CREATE INDEX rag_followup_type_totals_rank ON rag_followup_type_totals(dataset_id, rag_type, followups DESC, left(user_message, 200));
  DROP INDEX rag_queries_followup;
  CREATE INDEX rag_queries_followup ON rag_queries(dataset_id, created_at, rag_type, user_message) WHERE followup = 1 AND octet_length(user_message) <= 2000;
  CREATE INDEX rag_queries_followup_long ON rag_queries(dataset_id, created_at, rag_type) WHERE followup = 1 AND octet_length(user_message) > 2000;
  -- Without statistics on the size, the planner guesses a third of the answers long and reads the
  -- range's answers instead of the long ones' index. Expression statistics need PostgreSQL 14
  -- (an older server keeps the guess: the same answers, slower); EXECUTE, as older parsers refuse
  -- the statement even where it does not run.
  DO $$ BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
      EXECUTE 'CREATE STATISTICS rag_queries_message_bytes ON (octet_length(user_message)) FROM rag_queries';
    END IF;
  END $$;
  ANALYZE rag_queries;
  `,
];
