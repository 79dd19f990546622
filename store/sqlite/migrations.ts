/**
 * Versioned schema. Each entry runs once, in order, inside a transaction; `PRAGMA user_version`
 * records how many have run. Never edit an entry that has shipped: append a new one.
 */
import { EVENT_LINK_TARGETS, EVENT_ROLLUP_TABLES, eventLinkBackfillSql, eventRollupBackfillSql } from '../event-rollup-batch.js';
import { FILTER_ROLLUP_TABLES, filterRollupTableSql } from '../filter-rollup-batch.js';
import { positionsBackfillSql, QUERY_TOTALS_BACKFILL, ROLLUP_TABLES, rollupBackfillSql } from '../search-rollup-batch.js';
import { MESSAGE_TOTALS_BACKFILL, RECORD_SOURCES, recordRollupBackfillSql } from '../record-rollup-batch.js';
import { FOLLOWUP_BACKFILL } from '../followup-batch.js';
import type Database from 'better-sqlite3';
import { USER_ROLLUP_TABLES } from '../user-rollup-batch.js';
import { fillSqliteFilterRollup } from './filter-rollup.js';
import { fillUserRollups } from './user-rollup.js';

/** A migration: SQL, or a function for a fill SQL cannot express (run in the same transaction). */
export type Migration = string | ((db: Database.Database) => void);
import { QUERY_PERIOD_TABLES, queryPeriodBackfillSql } from '../search-query-periods.js';

/** The migrations, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    registerable INTEGER NOT NULL DEFAULT 1,
    deleted INTEGER NOT NULL DEFAULT 0,
    partner_configuration TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE memberships (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    role INTEGER NOT NULL CHECK (role IN (0, 1, 2)),
    scopes TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (user_id, organization_id)
  );
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
    expires_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX api_keys_org ON api_keys(organization_id);
  CREATE TABLE datasets (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tracking_id TEXT,
    server_configuration TEXT NOT NULL DEFAULT '{}',
    deleted INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
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
    time_stamp INTEGER,
    weight REAL NOT NULL DEFAULT 0,
    image_urls TEXT,
    lat REAL,
    lon REAL,
    num_value REAL,
    semantic_content TEXT,
    fulltext_content TEXT,
    convert_html_to_text INTEGER NOT NULL DEFAULT 1,
    fulltext_boost TEXT,
    semantic_boost TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX chunks_tracking ON chunks(dataset_id, tracking_id) WHERE tracking_id IS NOT NULL;
  CREATE INDEX chunks_dataset ON chunks(dataset_id, id);
  CREATE TABLE chunk_groups (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    tracking_id TEXT,
    metadata TEXT,
    tag_set TEXT NOT NULL DEFAULT '[]',
    file_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX groups_tracking ON chunk_groups(dataset_id, tracking_id) WHERE tracking_id IS NOT NULL;
  CREATE INDEX groups_dataset ON chunk_groups(dataset_id, created_at);
  CREATE TABLE chunk_group_members (
    group_id TEXT NOT NULL REFERENCES chunk_groups(id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, chunk_id)
  );
  CREATE INDEX group_members_chunk ON chunk_group_members(chunk_id);
  CREATE TABLE change_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    created_at INTEGER NOT NULL
  );
  CREATE INDEX change_log_dataset ON change_log(dataset_id, seq);
  `,
  `
  -- Dense vectors: one row per chunk (so a chunk never has two), tagged with the model that made
  -- it and the hash of the text it was made from, so outdated vectors are found with one join.
  CREATE TABLE chunk_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX chunk_vectors_dataset ON chunk_vectors(dataset_id);
  ALTER TABLE chunks ADD COLUMN semantic_hash TEXT;
  -- Worker events of a dataset (chunks indexed, failures), listed by POST /api/dataset/events.
  CREATE TABLE dataset_events (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    event_data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX dataset_events_dataset ON dataset_events(dataset_id, created_at);
  `,
  `
  -- Analytics records, named as the reference's ClickHouse tables so the analytics endpoints can
  -- serve them unchanged. No foreign key to datasets: a record flushed after its dataset was
  -- deleted must still insert (a failing row would fail its whole batch, again on every retry).
  -- JSON columns hold text; latency is in milliseconds; timestamps are epoch milliseconds;
  -- query_rating stays NULL until a rating is sent (PUT /api/analytics/search).
  CREATE TABLE search_queries (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    query TEXT NOT NULL,
    request_params TEXT NOT NULL,
    latency REAL NOT NULL,
    top_score REAL NOT NULL,
    results TEXT NOT NULL,
    result_count INTEGER NOT NULL,
    user_id TEXT,
    metadata TEXT,
    query_rating TEXT,
    created_at INTEGER NOT NULL
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
    top_score REAL NOT NULL,
    user_id TEXT,
    metadata TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX recommendation_queries_dataset ON recommendation_queries(dataset_id, created_at);
  CREATE INDEX recommendation_queries_created ON recommendation_queries(created_at);
  `,
  // v4: SPLADE sparse vectors (fulltext search with SPLADE_BASE_URL), one per chunk. A vector is
  // current while source_updated_at equals its chunk's updated_at (any edit makes it pending).
  `
  CREATE TABLE chunk_sparse_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    model TEXT NOT NULL,
    source_updated_at INTEGER NOT NULL,
    indices BLOB NOT NULL,
    vals BLOB NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX chunk_sparse_vectors_dataset ON chunk_sparse_vectors(dataset_id);
  `,
  // v5: which vector each chunk has (model, hash of the text it was made from), copied beside the
  // chunk so that the chunks pending embedding are found and counted through partial indexes, in
  // time proportional to what is pending, not to the dataset (the usage route and the job
  // workers' sweep ran a LEFT JOIN over every chunk: ~0.7 s per 200,000 chunks, blocking).
  // vectors.ts keeps both in step with chunk_vectors in the transaction that stores a vector.
  `
  ALTER TABLE chunks ADD COLUMN vector_model TEXT;
  ALTER TABLE chunks ADD COLUMN vector_hash TEXT;
  UPDATE chunks SET vector_model = v.model, vector_hash = v.content_hash FROM chunk_vectors v WHERE v.chunk_id = chunks.id;
  CREATE INDEX chunks_embed_stale ON chunks(dataset_id, id)
    WHERE vector_hash IS NULL OR semantic_hash IS NULL OR vector_hash != semantic_hash;
  CREATE INDEX chunks_vector_model ON chunks(dataset_id, vector_model) WHERE vector_model IS NOT NULL;
  `,
  // v6: RAG (issue 13). Topics (conversations of an owner) and their messages; a message is never
  // overwritten: a regenerated or edited tail is flagged deleted and new messages appended, so the
  // sort orders of live messages stay 1..n. The unique index over live messages makes two appends
  // that raced to the same sort order fail instead of both storing it. messages.dataset_id is
  // indexed for the purge's slices. rag_queries is the RAG analytics record, named as the
  // reference's ClickHouse columns like search_queries (no foreign key, for the same reason);
  // query_rating, hallucination_score and detected_hallucinations are filled by later analytics.
  `
  CREATE TABLE topics (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    metadata TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
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
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
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
    top_score REAL NOT NULL,
    user_id TEXT,
    metadata TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency REAL NOT NULL,
    query_rating TEXT,
    hallucination_score REAL NOT NULL DEFAULT 0,
    detected_hallucinations TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL
  );
  CREATE INDEX rag_queries_dataset ON rag_queries(dataset_id, created_at);
  CREATE INDEX rag_queries_created ON rag_queries(created_at);
  `,
  // v7: files (issue 14): CSV/JSONL imports and documents, one row per file through its life
  // (core/domain/files.ts). The import commits its cursor, counts and first row errors here after
  // each batch, so a killed worker resumes where the last batch ended. JSON columns (options,
  // errors, cursor, metadata, tags) hold text as everywhere else; the group the import makes is
  // kept without a foreign key (the import creates it after the file, and deletes of either are
  // the caller's). The index serves the newest-first list of a dataset's files.
  `
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
    time_stamp INTEGER,
    size INTEGER NOT NULL DEFAULT 0,
    blob_key TEXT NOT NULL,
    content_type TEXT,
    group_id TEXT,
    import_options TEXT,
    split_options TEXT,
    rows_done INTEGER NOT NULL DEFAULT 0,
    rows_total INTEGER,
    rows_imported INTEGER NOT NULL DEFAULT 0,
    rows_skipped INTEGER NOT NULL DEFAULT 0,
    bytes_done INTEGER NOT NULL DEFAULT 0,
    errors TEXT NOT NULL DEFAULT '[]',
    error_count INTEGER NOT NULL DEFAULT 0,
    failure TEXT,
    cursor TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX files_dataset ON files(dataset_id, created_at);
  `,
  // v8: analytics (issue 15). user_events are the events of PUT /api/analytics/events that are not
  // searches, RAG answers or recommendations (those keep their own tables); like the other
  // analytics rows they have no foreign key, so a batch written after its dataset went still
  // inserts. A click's position and chunk and a purchase's revenue have columns of their own so
  // that the reports aggregate them without parsing JSON. query_ratings keeps the latest rating
  // of a search or RAG answer apart from its record: a rating may arrive before the record is
  // flushed. Experiments belong to their dataset; an assignment is decided once per
  // (experiment, user) and kept, the unique pair making two racing first calls agree. A topic's
  // RAG answers are found by (dataset, topic) for the topic reports.
  `
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
    revenue REAL NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
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
    created_at INTEGER NOT NULL
  );
  CREATE INDEX query_ratings_dataset ON query_ratings(dataset_id, kind);
  CREATE TABLE experiments (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    area TEXT NOT NULL,
    control_name TEXT NOT NULL,
    control_split REAL NOT NULL,
    t1_name TEXT NOT NULL,
    t1_split REAL NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX experiments_dataset ON experiments(dataset_id, created_at);
  CREATE TABLE experiment_assignments (
    id TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    treatment_name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (experiment_id, user_id)
  );
  CREATE INDEX experiment_assignments_dataset ON experiment_assignments(dataset_id, user_id);
  CREATE INDEX rag_queries_topic ON rag_queries(dataset_id, topic_id);
  `,
  // v9: the search rollups (../search-rollup-batch.ts), hourly and daily; from here on every
  // insert and delete of search_queries keeps them. v9 first filled them from the searches
  // already stored too; that fill, whose SQL names the rollups' current columns, is v10's now
  // (v10 empties and refills them, so a store past v9 and one migrated from v8 end the same).
  `
  CREATE TABLE search_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    searches INTEGER NOT NULL,
    latency_sum REAL NOT NULL,
    latency_histogram TEXT NOT NULL,
    rated INTEGER NOT NULL,
    positive INTEGER NOT NULL,
    negative INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, hour, search_type, search_method)
  );
  CREATE TABLE search_rollup_daily (
    dataset_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    search_type TEXT NOT NULL,
    search_method TEXT NOT NULL,
    searches INTEGER NOT NULL,
    latency_sum REAL NOT NULL,
    latency_histogram TEXT NOT NULL,
    rated INTEGER NOT NULL,
    positive INTEGER NOT NULL,
    negative INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, day, search_type, search_method)
  );
  `,
  // v10: the rollups also sum the ratings and count the searches with a linked click and
  // conversion (the rating and CTR graphs read them), refilled from the stored searches; the
  // listings sorted by latency or top score walk an index instead of sorting a dataset's searches.
  `
  ALTER TABLE search_rollup_hourly ADD COLUMN rating_sum REAL NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_hourly ADD COLUMN clicked INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_hourly ADD COLUMN converted INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN rating_sum REAL NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN clicked INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN converted INTEGER NOT NULL DEFAULT 0;
  DELETE FROM search_rollup_hourly;
  DELETE FROM search_rollup_daily;
  CREATE INDEX search_queries_latency ON search_queries(dataset_id, latency);
  CREATE INDEX search_queries_top_score ON search_queries(dataset_id, top_score);
  ` + ROLLUP_TABLES.map((t) => rollupBackfillSql(t, 'sqlite', false)).join('\n'),
  // v11: the user event rollups (../event-rollup-batch.ts), hourly and daily, filled from the
  // events already stored; from here on every batch of user events adds to them.
  `
  CREATE TABLE user_event_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events INTEGER NOT NULL,
    revenue REAL NOT NULL,
    PRIMARY KEY (dataset_id, hour, event_type, event_name)
  );
  CREATE TABLE user_event_rollup_daily (
    dataset_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events INTEGER NOT NULL,
    revenue REAL NOT NULL,
    PRIMARY KEY (dataset_id, day, event_type, event_name)
  );
  ` + EVENT_ROLLUP_TABLES.map(eventRollupBackfillSql).join('\n'),
  // v12: the all-time searches per query text (../search-rollup-batch.ts, QUERY_TOTALS), filled
  // from the searches already stored; from here on kept with the search rollups. The top score
  // index ends with the id, the listings' tie-break: low_confidence_queries' first page sorted a
  // whole block of equal scores (every search that found nothing scores 0: 2.5 s at 10M events).
  `
  CREATE TABLE search_query_totals (
    dataset_id TEXT NOT NULL,
    query TEXT NOT NULL,
    searches INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, query)
  );
  CREATE INDEX search_query_totals_rank ON search_query_totals(dataset_id, searches DESC, query);
  DROP INDEX search_queries_top_score;
  CREATE INDEX search_queries_top_score ON search_queries(dataset_id, top_score, id);
  ` + QUERY_TOTALS_BACKFILL,
  // v13: the record rollups of RAG answers and recommendations and of the user events linked to
  // them (../record-rollup-batch.ts), filled from the rows already stored; from here on kept by
  // every write of those records, their ratings and user events. low_confidence_recommendations
  // walks a top score index, as low_confidence_queries does.
  `
  CREATE TABLE record_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    records INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    positive INTEGER NOT NULL,
    negative INTEGER NOT NULL,
    rating_sum REAL NOT NULL,
    clicked INTEGER NOT NULL,
    converted INTEGER NOT NULL,
    positioned INTEGER NOT NULL,
    position_sum REAL NOT NULL,
    PRIMARY KEY (dataset_id, hour, kind, subtype)
  );
  CREATE TABLE record_rollup_daily (
    dataset_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    records INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    positive INTEGER NOT NULL,
    negative INTEGER NOT NULL,
    rating_sum REAL NOT NULL,
    clicked INTEGER NOT NULL,
    converted INTEGER NOT NULL,
    positioned INTEGER NOT NULL,
    position_sum REAL NOT NULL,
    PRIMARY KEY (dataset_id, day, kind, subtype)
  );
  CREATE TABLE record_event_rollup_hourly (
    dataset_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, hour, kind, subtype, event_name)
  );
  CREATE TABLE record_event_rollup_daily (
    dataset_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT NOT NULL,
    event_name TEXT NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, day, kind, subtype, event_name)
  );
  CREATE INDEX recommendation_queries_top_score ON recommendation_queries(dataset_id, top_score, id);
  ` + RECORD_SOURCES.map(recordRollupBackfillSql).join('\n'),
  // v14: the search rollups also count their searches' linked clicks that carry a position and
  // sum those positions (\`/events/ctr\`'s search_ctr_metrics reads them), set from the stored clicks.
  `
  ALTER TABLE search_rollup_hourly ADD COLUMN positioned INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_hourly ADD COLUMN position_sum REAL NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN positioned INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE search_rollup_daily ADD COLUMN position_sum REAL NOT NULL DEFAULT 0;
  ` + ROLLUP_TABLES.map(positionsBackfillSql).join('\n'),
  // v15: the all-time answers per user message (../record-rollup-batch.ts, MESSAGE_TOTALS), filled
  // from the answers already stored; from here on kept with the record rollups.
  `
  CREATE TABLE rag_message_totals (
    dataset_id TEXT NOT NULL,
    user_message TEXT NOT NULL,
    answers INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, user_message)
  );
  CREATE INDEX rag_message_totals_rank ON rag_message_totals(dataset_id, answers DESC, user_message);
  ` + MESSAGE_TOTALS_BACKFILL,
  // v16: the per-user rollups (../user-rollup-batch.ts): each dataset's user ordinals, and per hour
  // and day the records with a user and the set of those users, filled from the records already
  // stored (the sets are built in TypeScript, ./user-rollup.ts); from here on kept by every insert
  // and purge of searches, answers and recommendations.
  (db) => {
    db.exec(`
    CREATE TABLE analytics_users (
      dataset_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      ordinal INTEGER NOT NULL,
      PRIMARY KEY (dataset_id, user_id)
    );
    CREATE UNIQUE INDEX analytics_users_ordinal ON analytics_users(dataset_id, ordinal);
    ${USER_ROLLUP_TABLES.map(
      (t) => `CREATE TABLE ${t.table} (
      dataset_id TEXT NOT NULL,
      ${t.column} INTEGER NOT NULL,
      source TEXT NOT NULL,
      type TEXT NOT NULL,
      method TEXT NOT NULL,
      records INTEGER NOT NULL,
      users INTEGER NOT NULL,
      members BLOB NOT NULL,
      PRIMARY KEY (dataset_id, ${t.column}, source, type, method)
    );`,
    ).join('\n')}
    `);
    fillUserRollups(db);
  },
  // v17: the user event rollups also count the events linked to a stored search and to a
  // stored RAG answer, and their revenue (`search_revenue` and `chat_revenue` with `direct` read
  // them instead of testing every purchase for its record), set from the stored events and records.
  `
  ALTER TABLE user_event_rollup_hourly ADD COLUMN search_events INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_hourly ADD COLUMN search_revenue REAL NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_hourly ADD COLUMN rag_events INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_hourly ADD COLUMN rag_revenue REAL NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_daily ADD COLUMN search_events INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_daily ADD COLUMN search_revenue REAL NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_daily ADD COLUMN rag_events INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE user_event_rollup_daily ADD COLUMN rag_revenue REAL NOT NULL DEFAULT 0;
  ` + EVENT_ROLLUP_TABLES.flatMap((t) => EVENT_LINK_TARGETS.map((target) => eventLinkBackfillSql(t, target))).join('\n'),
  // v18: each answer's follow-up flag and the follow-ups per user message
  // (../followup-batch.ts), set from the answers already stored; from here on kept by their writers.
  `
  ALTER TABLE rag_queries ADD COLUMN followup INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX rag_queries_topic_order ON rag_queries(dataset_id, topic_id, created_at, id);
  CREATE TABLE rag_followup_totals (
    dataset_id TEXT NOT NULL,
    user_message TEXT NOT NULL,
    followups INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, user_message)
  );
  CREATE INDEX rag_followup_totals_rank ON rag_followup_totals(dataset_id, followups DESC, user_message);
  CREATE TABLE rag_followup_type_totals (
    dataset_id TEXT NOT NULL,
    rag_type TEXT NOT NULL,
    user_message TEXT NOT NULL,
    followups INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, rag_type, user_message)
  );
  CREATE INDEX rag_followup_type_totals_rank ON rag_followup_type_totals(dataset_id, rag_type, followups DESC, user_message);
  ` +
    FOLLOWUP_BACKFILL +
    `
  -- After the backfill: cheaper than keeping them up to date through it.
  CREATE INDEX rag_queries_topic_first ON rag_queries(dataset_id, topic_id) WHERE followup = 0 AND topic_id IS NOT NULL;
  CREATE INDEX rag_queries_followup ON rag_queries(dataset_id, created_at, rag_type, user_message) WHERE followup = 1;
  `,
  // v19: the filter rollups of popular_filters (../filter-rollup-batch.ts), filled from the stored
  // searches by parsing their request params in TypeScript (./filter-rollup.ts): the JSON rules of
  // ../filter-uses.ts are not SQL of both engines.
  (db) => {
    db.exec(FILTER_ROLLUP_TABLES.map((t) => filterRollupTableSql(t, 'INTEGER')).join(''));
    fillSqliteFilterRollup(db);
  },
  // v20: the searches per (dataset, hour or day, query text) (../search-query-periods.ts),
  // filled from the searches already stored; from here on kept with the search rollups. The
  // primary key leads with the query (a query's searches over a span of periods); the rank index
  // gives a period's most searched queries first, ties by text (head_queries over a date range).
  `
  CREATE TABLE search_query_hourly (
    dataset_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    query TEXT NOT NULL,
    searches INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, query, hour)
  );
  CREATE INDEX search_query_hourly_rank ON search_query_hourly(dataset_id, hour, searches DESC, query);
  CREATE TABLE search_query_daily (
    dataset_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    query TEXT NOT NULL,
    searches INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, query, day)
  );
  CREATE INDEX search_query_daily_rank ON search_query_daily(dataset_id, day, searches DESC, query);
  ` + QUERY_PERIOD_TABLES.map(queryPeriodBackfillSql).join('\n'),
  // v21: rag_queries sorted by top score or hallucination score walk an index of the dataset's
  // answers by that column, as the searches' and recommendations' listings do (277 ms at 10M events,
  // sorting 400k answers). Aggregates keep the (dataset_id, created_at) index (checked with EXPLAIN).
  `
  CREATE INDEX rag_queries_top_score ON rag_queries(dataset_id, top_score, id);
  CREATE INDEX rag_queries_hallucination ON rag_queries(dataset_id, hallucination_score, id);
  `,
];
