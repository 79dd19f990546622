/** The chunk: the unit of content that is stored, indexed and searched. */

/** A geographic point. */
export interface GeoPoint {
  readonly lat: number;
  readonly lon: number;
}

/** `fulltext_boost` of a chunk: multiplies the phrase tokens' weight in sparse vectors. */
export interface FulltextBoost {
  readonly phrase: string;
  readonly boost_factor: number;
}

/** `semantic_boost` of a chunk: moves the dense vector toward (or away from) the phrase. */
export interface SemanticBoost {
  readonly phrase: string;
  readonly distance_factor: number;
}

/** A stored chunk. Timestamps are epoch milliseconds; the facade formats them for the wire. */
export interface ChunkRecord {
  readonly id: string;
  readonly datasetId: string;
  readonly trackingId: string | null;
  readonly chunkHtml: string | null;
  readonly link: string | null;
  readonly metadata: unknown;
  readonly tagSet: readonly string[];
  readonly timeStamp: number | null;
  readonly weight: number;
  readonly imageUrls: readonly string[] | null;
  readonly location: GeoPoint | null;
  readonly numValue: number | null;
  /** Text used for dense vectors instead of chunk_html, when given. */
  readonly semanticContent: string | null;
  /** Text used for sparse/BM25 vectors instead of chunk_html, when given. */
  readonly fulltextContent: string | null;
  readonly convertHtmlToText: boolean;
  readonly fulltextBoost: FulltextBoost | null;
  readonly semanticBoost: SemanticBoost | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * What the search core indexes of a stored chunk (`toShardDoc`): reads for indexing fetch only
 * these. The metadata comes parsed (`metadata`) or as the stored JSON text (`metadataJson`, which
 * the shard keeps as it is until a filter reads it).
 */
export type IndexedChunkFields = Pick<
  ChunkRecord,
  'id' | 'trackingId' | 'chunkHtml' | 'link' | 'tagSet' | 'timeStamp' | 'location' | 'numValue' | 'fulltextContent' | 'convertHtmlToText' | 'fulltextBoost'
> & { readonly metadata?: unknown; readonly metadataJson?: string | null };

/** The writable fields of a chunk, as validated from a create request. */
export interface ChunkInput {
  readonly trackingId?: string | null;
  readonly chunkHtml?: string | null;
  readonly link?: string | null;
  readonly metadata?: unknown;
  /**
   * `JSON.stringify(metadata)`, when the caller has made it already (a file import splices it from
   * the row's JSON): the store writes it instead of serialising the metadata again.
   */
  readonly metadataJson?: string;
  readonly tagSet?: readonly string[] | null;
  readonly timeStamp?: number | null;
  readonly weight?: number | null;
  readonly imageUrls?: readonly string[] | null;
  readonly location?: GeoPoint | null;
  readonly numValue?: number | null;
  readonly semanticContent?: string | null;
  readonly fulltextContent?: string | null;
  readonly convertHtmlToText?: boolean;
  readonly fulltextBoost?: FulltextBoost | null;
  readonly semanticBoost?: SemanticBoost | null;
  /** Groups (by id) the chunk joins; they must exist in the dataset. */
  readonly groupIds?: readonly string[];
  /** Groups (by tracking id) the chunk joins; missing ones are created. */
  readonly groupTrackingIds?: readonly string[];
}

/** An update: `undefined` keeps the stored value, anything else replaces it. */
export interface ChunkPatch extends Omit<ChunkInput, 'metadataJson'> {
  /** New tracking id; must not belong to another chunk. */
  readonly newTrackingId?: string | null;
}
