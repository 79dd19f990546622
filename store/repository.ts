/**
 * The store is the system of record; every index is derived from it. This interface is what the
 * facade, the core and the job workers see. It is asynchronous so that a PostgreSQL implementation
 * can satisfy it; the embedded SQLite implementation lives in `store/sqlite/`.
 */
import type { DatasetEventType } from '../core/domain/dataset-events.js';
import type { RecommendationRecord, SearchRecord } from '../core/domain/analytics.js';
import type { ChunkInput, ChunkPatch, ChunkRecord, IndexedChunkFields } from '../core/domain/chunk.js';
import type { FileBatch, FileBatchOutcome, FileProgress, FileRecord, FileStatus, NewFile } from '../core/domain/files.js';
import type { GroupInput, GroupRecord } from '../core/domain/group.js';
import type { Experiment, ExperimentAssignment } from '../core/domain/experiments.js';
import type { ChatRole, MessageRecord, RagRecord, TopicRecord } from '../core/domain/rag.js';
import type { SparseVector } from '../core/domain/sparse-vector.js';
import type {
  ApiKeyRecord,
  DatasetRecord,
  DefaultParams,
  MembershipRecord,
  OrganizationRecord,
  RoleValue,
  UserRecord,
} from '../core/domain/tenancy.js';
import type { QueryRating, UserEvent } from '../core/domain/user-events.js';
import type { ReportSql } from './reports/report-sql.js';

/** Counts behind GET /api/organization/usage/{id}. */
export interface OrganizationUsage {
  readonly datasetCount: number;
  readonly userCount: number;
  readonly chunkCount: number;
  /** Bytes of the live datasets' files. */
  readonly fileBytes: number;
  /** Searches recorded for the live datasets (the analytics kept, read from the daily search rollups). */
  readonly searchCount: number;
  /** RAG answers recorded for the live datasets (daily record rollups). */
  readonly answerCount: number;
  /** Of those, the answers of the current UTC calendar month. */
  readonly answersThisMonth: number;
  /** User events recorded for the live datasets (daily user event rollups). */
  readonly eventCount: number;
}

/** Organizations and their lifecycle. */
export interface OrganizationRepository {
  /**
   * Creates an organization; with `ownerUserId` that user becomes its owner in the same
   * transaction, refused (403) when the user already belongs to `maxPerOwner` live organizations.
   */
  create(input: { name: string; ownerUserId?: string | null; maxPerOwner?: number }): Promise<OrganizationRecord>;
  /** Live datasets, members and chunks of an organization. */
  usage(id: string): Promise<OrganizationUsage>;
  /** The organization, or undefined when unknown or deleted (unless `includeDeleted`). */
  get(id: string, includeDeleted?: boolean): Promise<OrganizationRecord | undefined>;
  /** Updates the given fields; returns the new record. */
  update(
    id: string,
    patch: { name?: string; partnerConfiguration?: Record<string, unknown>; deleted?: boolean },
  ): Promise<OrganizationRecord>;
  /** Ids of organizations flagged deleted and not yet purged. */
  listDeleted(): Promise<string[]>;
  /**
   * Removes a flagged organization and everything it owns, in bounded slices (see
   * `store/sqlite/purge.ts`), its row last: a purge cut short leaves it flagged, and purging again
   * finishes it. False when the organization is live (nothing is touched) or not finished.
   */
  purge(id: string): Promise<boolean>;
}

/** Users and memberships. */
export interface UserRepository {
  get(id: string): Promise<UserRecord | undefined>;
  findByEmail(email: string): Promise<UserRecord | undefined>;
  /**
   * create_api_only_user: finds or creates the user, creates an organization owned by them and an
   * owner key for it, all in one transaction.
   */
  createApiOnly(input: {
    email: string;
    name: string;
    organizationName: string;
    keyName: string;
    keyHash: string;
  }): Promise<{ user: UserRecord; organization: OrganizationRecord; key: ApiKeyRecord }>;
  membership(userId: string, organizationId: string): Promise<MembershipRecord | undefined>;
  memberships(userId: string): Promise<MembershipRecord[]>;
  /** Members of an organization with their membership there, oldest first. */
  ofOrganization(organizationId: string): Promise<{ user: UserRecord; membership: MembershipRecord }[]>;
  /** Organizations (not deleted) the user belongs to. */
  organizations(userId: string): Promise<OrganizationRecord[]>;
  updateMembership(
    userId: string,
    organizationId: string,
    patch: { role?: RoleValue; scopes?: string[] | null },
  ): Promise<MembershipRecord>;
}

/** Fields of a new API key. */
export interface NewApiKey {
  organizationId: string;
  userId: string | null;
  name: string;
  hash: string;
  role: RoleValue;
  datasetIds: string[];
  scopes: string[];
  defaultParams: DefaultParams | null;
  expiresAt: number | null;
}

/** API keys (by hash only). */
export interface ApiKeyRepository {
  create(input: NewApiKey): Promise<ApiKeyRecord>;
  /** The key with this hash, expired or not (the caller decides what expiry means). */
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  list(organizationId: string): Promise<ApiKeyRecord[]>;
  /** Deletes a key of the organization; false when there is none with that id. */
  delete(organizationId: string, id: string): Promise<boolean>;
}

/** A dataset with its chunk count. */
export interface DatasetWithUsage {
  dataset: DatasetRecord;
  chunkCount: number;
}

/** A dataset with its organization and one user's membership there, as one read finds them. */
export interface DatasetStanding {
  readonly dataset: DatasetRecord;
  readonly organization: OrganizationRecord;
  /** The asked user's membership in the organization; undefined when none or when no user was asked. */
  readonly membership: MembershipRecord | undefined;
}

/** Which dataset a {@link DatasetRepository.standing} read is about: its id, or its tracking id in an organization. */
export type DatasetRef = { readonly id: string } | { readonly organizationId: string; readonly trackingId: string };

/** Datasets. */
export interface DatasetRepository {
  create(input: {
    organizationId: string;
    name: string;
    trackingId: string | null;
    serverConfiguration: Record<string, unknown>;
  }): Promise<DatasetRecord>;
  /** The dataset, or undefined when unknown, flagged deleted, or of an organization flagged deleted. */
  get(id: string): Promise<DatasetRecord | undefined>;
  /** Ids of every live dataset, as {@link get} defines live (for warming the search core). */
  listIds(): Promise<string[]>;
  /** Ids of every dataset of an organization, deleted ones included (for purging their files). */
  idsOfOrganization(organizationId: string): Promise<string[]>;
  getByTrackingId(organizationId: string, trackingId: string): Promise<DatasetRecord | undefined>;
  update(
    id: string,
    patch: { name?: string; trackingId?: string | null; serverConfiguration?: Record<string, unknown> },
  ): Promise<DatasetRecord>;
  /** Flags the dataset deleted (it disappears at once); its rows are purged by a job. */
  markDeleted(id: string): Promise<void>;
  listDeleted(): Promise<string[]>;
  /**
   * Removes a flagged dataset (or one of a flagged organization) and every row referencing it, in
   * bounded slices with the event loop free between them, its own row last: a purge cut short
   * leaves it flagged and invisible, and purging again finishes it. False, touching nothing, when
   * the dataset is live.
   */
  purge(id: string): Promise<boolean>;
  listByOrganization(organizationId: string, limit: number, offset: number): Promise<DatasetWithUsage[]>;
  chunkCount(id: string): Promise<number>;
  /**
   * Deletes every chunk and group the dataset had when the call started, logging each chunk
   * deletion, in bounded slices (a transaction each) with the event loop free between them.
   */
  clear(id: string): Promise<void>;
  /** Distinct tags with their counts, most used first. */
  tags(id: string, page: number, pageSize: number): Promise<{ tags: { tag: string; count: number }[]; total: number }>;
  /**
   * Present on a store whose reads are network round trips (PostgreSQL): in one read, the live
   * dataset ({@link get} by id, {@link getByTrackingId} by tracking id), its organization when
   * live, and `userId`'s membership there. Undefined when the dataset or its organization is not
   * live. A store that serves these from caches (SQLite) leaves it out and is read one by one.
   */
  standing?(ref: DatasetRef, userId: string | null): Promise<DatasetStanding | undefined>;
}

/** Identifies a chunk by id or by tracking id. */
export type ChunkSelector = { id: string } | { trackingId: string };

/** Chunks. Every write is one transaction that also appends to the change log. */
export interface ChunkRepository {
  /**
   * Creates all chunks or none: a tracking id repeated in the batch, or already stored (unless
   * that input's `upsert` flag is set, which replaces the stored chunk), fails the whole call.
   */
  createMany(datasetId: string, inputs: readonly ChunkInput[], upsert?: readonly boolean[]): Promise<ChunkRecord[]>;
  /** Applies a patch; absent fields keep their values. */
  update(datasetId: string, selector: ChunkSelector, patch: ChunkPatch): Promise<ChunkRecord>;
  get(datasetId: string, selector: ChunkSelector): Promise<ChunkRecord | undefined>;
  /** Chunks with these ids, in the order asked, unknown ids dropped. */
  getMany(datasetId: string, ids: readonly string[]): Promise<ChunkRecord[]>;
  getManyByTrackingIds(datasetId: string, trackingIds: readonly string[]): Promise<ChunkRecord[]>;
  /** Deletes one chunk; false when it does not exist. */
  delete(datasetId: string, selector: ChunkSelector): Promise<boolean>;
  /**
   * Deletes the chunks with these ids created at or before `createdAtOrBefore` (ms), in one
   * transaction, each like {@link delete}; returns how many were deleted (unknown ids are skipped).
   */
  deleteMany(datasetId: string, ids: readonly string[], createdAtOrBefore: number): Promise<number>;
  /** Chunks ordered by id, starting after `afterId` (exclusive) or from the first. */
  scrollIds(datasetId: string, afterId: string | null, limit: number): Promise<ChunkRecord[]>;
}

/** Chunk groups and membership. */
export interface GroupRepository {
  /** Creates groups (or with `upsert`, updates those whose tracking id exists); all or nothing. */
  createMany(datasetId: string, inputs: readonly GroupInput[], upsert: boolean): Promise<GroupRecord[]>;
  get(datasetId: string, id: string): Promise<GroupRecord | undefined>;
  getByTrackingId(datasetId: string, trackingId: string): Promise<GroupRecord | undefined>;
  update(datasetId: string, id: string, patch: GroupInput): Promise<GroupRecord>;
  /** Deletes a group, and with `deleteChunks` its chunks; false when unknown. */
  delete(datasetId: string, id: string, deleteChunks: boolean): Promise<boolean>;
  /** Adds a chunk to a group (idempotent). */
  addChunk(datasetId: string, groupId: string, chunkId: string): Promise<void>;
  /** Removes a chunk from a group; false when it was not a member. */
  removeChunk(datasetId: string, groupId: string, chunkId: string): Promise<boolean>;
  /** One page (1-based) of a group's chunks, oldest membership first. */
  chunks(groupId: string, page: number, pageSize: number): Promise<{ chunks: ChunkRecord[]; total: number }>;
  /** One page (1-based) of a dataset's groups, newest first. */
  list(datasetId: string, page: number, pageSize: number): Promise<{ groups: GroupRecord[]; total: number }>;
  /** For each chunk id, the groups it belongs to. */
  groupsOfChunks(datasetId: string, chunkIds: readonly string[]): Promise<Map<string, GroupRecord[]>>;
}

/** A chunk's dense vector as stored. */
export interface StoredVector {
  readonly chunkId: string;
  readonly model: string;
  readonly vector: Float32Array;
  readonly contentHash: string;
}

/** A chunk that needs a (new) vector: what to embed and the hash to store with it. */
export interface PendingEmbedding {
  readonly chunk: ChunkRecord;
  readonly contentHash: string;
}

/** Dense vectors, one per chunk, written with a change-log entry so the shards pick them up. */
export interface VectorRepository {
  /** Up to `limit` chunks of the dataset whose vector is missing, outdated or of another model. */
  pending(datasetId: string, model: string, limit: number): Promise<PendingEmbedding[]>;
  /** Number of chunks pending embedding for `model`. */
  pendingCount(datasetId: string, model: string): Promise<number>;
  /**
   * Stores vectors (replacing older ones) for chunks that still exist and still have the hash
   * they were embedded from; returns how many were stored. One transaction.
   */
  put(datasetId: string, model: string, vectors: readonly { chunkId: string; contentHash: string; vector: Float32Array }[]): Promise<number>;
  /** Vectors of these chunks made by `model` (others are absent from the map). */
  getMany(chunkIds: readonly string[], model: string): Promise<Map<string, Float32Array>>;
}

/** A chunk whose SPLADE vector is missing or outdated, with the version it must be encoded from. */
export interface PendingSparse {
  readonly chunk: ChunkRecord;
  /** The chunk's updated_at when read: the vector is stored only if the chunk is still at it. */
  readonly sourceUpdatedAt: number;
}

/** SPLADE sparse vectors, one per chunk, written with a change-log entry like dense vectors. */
export interface SparseVectorRepository {
  /** Up to `limit` chunks whose sparse vector is missing, outdated or of another model. */
  pending(datasetId: string, model: string, limit: number): Promise<PendingSparse[]>;
  /** Number of chunks pending sparse encoding for `model`. */
  pendingCount(datasetId: string, model: string): Promise<number>;
  /** Stores vectors of chunks still at `sourceUpdatedAt` (others are stale and skipped); returns how many. One transaction. */
  put(datasetId: string, model: string, vectors: readonly { chunkId: string; sourceUpdatedAt: number; vector: SparseVector }[]): Promise<number>;
  /** Vectors of these chunks made by `model`. */
  getMany(chunkIds: readonly string[], model: string): Promise<Map<string, SparseVector>>;
}

/** A worker event of a dataset. */
export interface DatasetEvent {
  readonly id: string;
  readonly datasetId: string;
  readonly eventType: string;
  readonly eventData: unknown;
  readonly createdAt: number;
}

/** Worker events (chunks indexed, failures), newest first. */
export interface DatasetEventRepository {
  /** Records an event of one of the types quarry lists (core/domain/dataset-events.ts). */
  add(datasetId: string, eventType: DatasetEventType, eventData: unknown): Promise<void>;
  list(datasetId: string, eventTypes: readonly string[] | null, page: number, pageSize: number): Promise<{ events: DatasetEvent[]; total: number }>;
  /** The distinct types of the dataset's events, in byte order. */
  types(datasetId: string): Promise<string[]>;
}

/** One entry of a dataset's change log. */
export interface ChangeLogEntry {
  readonly seq: number;
  readonly datasetId: string;
  readonly chunkId: string;
  readonly op: 'upsert' | 'delete';
}

/** The per-dataset change log that shards replay. */
export interface ChangeLogRepository {
  /** Entries of a dataset with sequence greater than `afterSeq`, oldest first. */
  since(datasetId: string, afterSeq: number, limit: number): Promise<ChangeLogEntry[]>;
  /** Highest sequence written so far (0 when empty). */
  head(): Promise<number>;
}

/**
 * Analytics records of searches, recommendations and RAG answers. Inserts ignore ids already stored, so a
 * batch delivered twice (a retried flush job, or the facade's last-resort write) never duplicates.
 */
export interface AnalyticsRepository {
  /** Stores the search records whose id is new, in one transaction; returns how many were new. */
  insertSearches(records: readonly SearchRecord[]): Promise<number>;
  /** Stores the recommendation records whose id is new, in one transaction; returns how many were new. */
  insertRecommendations(records: readonly RecommendationRecord[]): Promise<number>;
  /** One search record of the dataset, or undefined. */
  getSearch(datasetId: string, id: string): Promise<SearchRecord | undefined>;
  /** A page of the dataset's search records, newest first. */
  listSearches(datasetId: string, page: { limit: number; offset: number }): Promise<SearchRecord[]>;
  /** Stores the RAG records whose id is new, in one transaction; returns how many were new. */
  insertRags(records: readonly RagRecord[]): Promise<number>;
  /** One RAG record of the dataset, or undefined. */
  getRag(datasetId: string, id: string): Promise<RagRecord | undefined>;
  /** A page of the dataset's RAG records, newest first (ties by id). */
  listRags(datasetId: string, page: { limit: number; offset: number }): Promise<RagRecord[]>;
  /**
   * Deletes search, recommendation and RAG records created before `cutoffMs` (epoch ms), in short
   * transactions of at most `batch` rows so that other writers are never held up long; returns
   * how many went.
   */
  purgeBefore(cutoffMs: number, batch?: number): Promise<number>;
  /** Stores ratings of searches and RAG answers, one transaction; a rating replaces the query's earlier one. */
  rate(ratings: readonly QueryRating[]): Promise<void>;
}

/** User events (`PUT /api/analytics/events`): written in batches, read by id. */
export interface UserEventRepository {
  /** Stores the events whose id is new, in one transaction; returns how many were new. */
  insertMany(events: readonly UserEvent[]): Promise<number>;
  /** One event of the dataset, or undefined. (Listings by filter are report SQL: store/reports/user-event-listing.ts.) */
  get(datasetId: string, id: string): Promise<UserEvent | undefined>;
}

/** What creates an experiment. */
export type NewExperiment = Omit<Experiment, 'id' | 'createdAt' | 'updatedAt'>;

/** What may change in an experiment (`area` may not). */
export type ExperimentPatch = Partial<Pick<Experiment, 'name' | 'controlName' | 'controlSplit' | 't1Name' | 't1Split'>>;

/** A/B experiments and their sticky assignments. */
export interface ExperimentRepository {
  /** Creates an experiment; 404 when the dataset does not exist. */
  create(input: NewExperiment): Promise<Experiment>;
  /** One experiment of the dataset, or undefined. */
  get(datasetId: string, id: string): Promise<Experiment | undefined>;
  /** The dataset's experiments, newest first (ties by id). */
  list(datasetId: string): Promise<Experiment[]>;
  /** Writes the given fields; 404 when the experiment is not the dataset's. */
  update(datasetId: string, id: string, patch: ExperimentPatch): Promise<Experiment>;
  /** Deletes an experiment and its assignments; 404 when it is not the dataset's. */
  delete(datasetId: string, id: string): Promise<void>;
  /**
   * The user's arm: the stored assignment, or a new one decided by `assignArm` and stored (two
   * racing first calls store one and both answer it). 404 when the experiment is not the dataset's.
   */
  assign(datasetId: string, experimentId: string, userId: string): Promise<ExperimentAssignment>;
}

/**
 * Topics: the conversations of a dataset, each owned by a caller-chosen id. A topic's messages
 * live in {@link MessageRepository}; deleting or cloning a topic takes its messages along.
 */
export interface TopicRepository {
  /** Creates a topic (name already decided by the caller); 404 when the dataset does not exist. */
  create(input: { datasetId: string; name: string; ownerId: string; metadata: unknown }): Promise<TopicRecord>;
  /** A live topic of the dataset, or undefined (unknown, deleted, or another dataset's). */
  get(datasetId: string, id: string): Promise<TopicRecord | undefined>;
  /** Renames a live topic; 404 QuarryError when it is not the dataset's live topic. */
  update(datasetId: string, id: string, patch: { name?: string; metadata?: unknown }): Promise<TopicRecord>;
  /** Deletes a topic and its messages (one transaction); 404 when unknown. */
  delete(datasetId: string, id: string): Promise<void>;
  /** Copies a live topic and its live messages (new ids, same sort orders) in one transaction; 404 when unknown. */
  clone(datasetId: string, id: string, patch: { ownerId?: string; name?: string }): Promise<TopicRecord>;
  /** The owner's live topics of the dataset, newest first (ties by id). */
  listByOwner(datasetId: string, ownerId: string): Promise<TopicRecord[]>;
}

/** A message to append to a topic. */
export interface NewMessage {
  readonly role: ChatRole;
  readonly content: string;
  /** @defaultValue `0` */
  readonly promptTokens?: number;
  /** @defaultValue `0` */
  readonly completionTokens?: number;
}

/** The messages of topics. Live messages of a topic have sort orders 1..n without gaps. */
export interface MessageRepository {
  /** Live messages of a live topic of the dataset, by sort order; 404 when the topic is unknown. */
  list(datasetId: string, topicId: string): Promise<MessageRecord[]>;
  /** A live message of a live topic of the dataset, or undefined (a deleted or superseded message is gone). */
  get(datasetId: string, id: string): Promise<MessageRecord | undefined>;
  /**
   * In ONE transaction: marks the topic's live messages with sort_order >= `fromSortOrder` deleted (none when
   * undefined), then appends `messages` after the highest remaining live sort order (so sort orders of live
   * messages are 1..n without gaps), and bumps the topic's updated_at. 404 when the topic is not the dataset's live
   * topic; 400 (nothing stored) for a role that is not a chat role. Returns the stored messages. Used after an
   * answer completes, so a half-written answer is never stored. Appends to one topic are serialized (on
   * PostgreSQL by a lock on the topic's row), so concurrent appends never share a sort order.
   */
  append(datasetId: string, topicId: string, messages: readonly NewMessage[], fromSortOrder?: number): Promise<MessageRecord[]>;
}

/** Files of a dataset: CSV/JSONL imports and documents, with their import progress. */
export interface FileRepository {
  /** Stores a new file record; 404 when the dataset does not exist. */
  create(input: NewFile): Promise<FileRecord>;
  /** A file of the dataset, or undefined (unknown, or another dataset's). */
  get(datasetId: string, id: string): Promise<FileRecord | undefined>;
  /** A file by id alone (the blob route and the import job, which hold no dataset yet). */
  getById(id: string): Promise<FileRecord | undefined>;
  /** One page (1-based) of the dataset's files, newest first (ties by id), and how many there are. */
  list(datasetId: string, page: number, pageSize: number): Promise<{ files: FileRecord[]; total: number }>;
  /** At most `limit` of the dataset's files by id, from `fromId` (inclusive) or the first. */
  scroll(datasetId: string, fromId: string | null, limit: number): Promise<FileRecord[]>;
  /**
   * Moves a file to `status` only if it is in one of `from` (compare and set); returns the new
   * record, or undefined when it was not in `from` (or is unknown). `patch` sets the size once the
   * upload completes, the group once created, the total once the end is read, and the failure.
   */
  transition(
    id: string,
    from: readonly FileStatus[],
    status: FileStatus,
    patch?: { size?: number; groupId?: string; rowsTotal?: number; failure?: string | null },
  ): Promise<FileRecord | undefined>;
  /**
   * Commits one batch's progress (counts added, cursor replaced, errors appended up to
   * MAX_STORED_ROW_ERRORS and all counted) if the file is still `processing`; false otherwise
   * (deleted, or another worker finished it).
   */
  commitProgress(id: string, progress: FileProgress): Promise<boolean>;
  /**
   * Commits one batch of an import in one transaction, if the file (of `datasetId`) is still
   * `processing`: the rows' chunks written as `chunks.createMany` writes them (change-log entries,
   * groups), rows whose tracking id is stored skipped unless `batch.upsert`, and then the file's
   * progress with the rows' counts added. A batch the store refuses for one row's sake is written
   * row by row within the transaction, the refused rows becoming row errors. Returns what the rows
   * did, or undefined (and writes nothing) when the file is not processing (deleted, finished).
   */
  commitBatch(id: string, datasetId: string, batch: FileBatch): Promise<FileBatchOutcome | undefined>;
  /** Deletes the file's record (its group and chunks are the caller's); false when unknown. */
  delete(datasetId: string, id: string): Promise<boolean>;
  /**
   * About how many more chunks the dataset's imports in progress will write: for each file
   * `processing` with a batch committed, its bytes left at the rows per byte committed so far
   * (rounded down; 0 without such a file). The search core lays out an index by the size it is
   * about to reach, not only the size it has.
   */
  rowsToCome(datasetId: string): Promise<number>;
}

/**
 * A chunk as the search core indexes it: the record's indexed fields (a store may give the whole
 * record), its group ids and its vectors of the asked models.
 */
export interface IndexedChunk {
  readonly chunk: IndexedChunkFields;
  /** Groups of the dataset the chunk belongs to, as {@link GroupRepository.groupsOfChunks} orders them. */
  readonly groupIds: readonly string[];
  readonly vector: Float32Array | null;
  readonly sparse: SparseVector | null;
}

/**
 * The search core's reads while applying the change log: everything a slice of chunks needs in
 * one snapshot, instead of a read per repository per chunk.
 */
export interface IndexReads {
  /**
   * Chunks the core asks for per {@link chunks} call: large where reads are asynchronous (the
   * event loop is free while PostgreSQL works), small where they hold the thread (SQLite).
   */
  readonly sliceSize: number;
  /**
   * The dataset's chunks with these ids in the order asked (unknown ids dropped), each with its
   * group ids, its dense vector of `model` and its sparse vector of `sparseModel` (null: none
   * asked), read in one snapshot.
   */
  chunks(datasetId: string, ids: readonly string[], model: string, sparseModel: string | null): Promise<IndexedChunk[]>;
}

/** The whole store. */
export interface Store {
  readonly organizations: OrganizationRepository;
  readonly users: UserRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly datasets: DatasetRepository;
  readonly chunks: ChunkRepository;
  readonly groups: GroupRepository;
  readonly changeLog: ChangeLogRepository;
  readonly vectors: VectorRepository;
  readonly sparseVectors: SparseVectorRepository;
  readonly events: DatasetEventRepository;
  readonly analytics: AnalyticsRepository;
  readonly topics: TopicRepository;
  readonly messages: MessageRepository;
  readonly files: FileRepository;
  readonly userEvents: UserEventRepository;
  readonly experiments: ExperimentRepository;
  /** Read-only SQL for the analytics reports (`store/reports/`), in the engine's dialect. */
  readonly reports: ReportSql;
  /** What the search core reads to index chunks. */
  readonly indexReads: IndexReads;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Marks where a request from outside (an HTTP request, a gRPC call) arrives: the store checks
   * once whether other connections wrote, and its caches rely on that check for the rest of this
   * event-loop turn. Reads still see every commit made before the request arrived and every
   * write of this process at once. A no-op for a store without read caches.
   */
  pinReads(): void;
  /**
   * Present on a store that other machines write to (PostgreSQL): calls `onChange(datasetId)`
   * after each commit that appended to a dataset's change log, from any process, in commit order;
   * `onChange(null)` when notices may have been missed (the listening connection was lost and is
   * back), so every dataset should be checked. Resolves to a function that stops listening.
   */
  watchChanges?(onChange: (datasetId: string | null) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
