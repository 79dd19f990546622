/** Chunk groups: named sets of chunks within a dataset (a document, a product, a file). */

/** A stored chunk group. */
export interface GroupRecord {
  readonly id: string;
  readonly datasetId: string;
  readonly name: string;
  readonly description: string;
  readonly trackingId: string | null;
  readonly metadata: unknown;
  readonly tagSet: readonly string[];
  readonly fileId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Writable fields of a group. */
export interface GroupInput {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly trackingId?: string | null;
  readonly metadata?: unknown;
  readonly tagSet?: readonly string[] | null;
  /** The file whose import created the group (set on create only). */
  readonly fileId?: string | null;
}
