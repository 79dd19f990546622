/**
 * Every bound on what one request may carry, in one place. No request of one tenant may stall
 * another: unbounded arrays held the event loop and the SQLite write lock for seconds (100,000
 * group_tracking_ids on one chunk: 8 s), so each is capped here and refused with a 400 naming the
 * field and the cap (facade/schemas). The chunk text size is configurable
 * (`QUARRY_MAX_CHUNK_TEXT_BYTES`, core/config.ts); the rest are fixed.
 */

/** The caps. Counts are items, lengths are UTF-16 units (JavaScript string length), sizes are UTF-8 bytes. */
export const LIMITS = Object.freeze({
  /** Default largest `chunk_html`, `semantic_content` or `fulltext_content` of one chunk, in UTF-8 bytes (QUARRY_MAX_CHUNK_TEXT_BYTES). */
  chunkTextBytes: 1_048_576,
  /** Most groups one chunk names, in `group_ids` and in `group_tracking_ids` (each). */
  groupsPerChunk: 100,
  /**
   * Most group memberships (`group_ids` plus `group_tracking_ids`, over all chunks) one create
   * request asks for: each is a store lookup and a row under the write lock (~0.1 ms), so a full
   * batch at the per-chunk cap (12,000) held it 1.5 s.
   */
  groupsPerRequest: 1000,
  /** Most tags in one chunk's or group's `tag_set`. */
  tagsPerChunk: 256,
  /** Longest tag of a `tag_set`. */
  tagLength: 1024,
  /** Most `image_urls` of one chunk. */
  imageUrlsPerChunk: 100,
  /** Longest URL: a chunk's `link` and `image_urls`, a dataset's model-server addresses. */
  urlLength: 4096,
  /** Longest `tracking_id` (chunks, groups, datasets, group_tracking_ids and tracking-id lists). */
  trackingIdLength: 1024,
  /**
   * Most UTF-8 bytes of an identifier the store keeps an index on (tracking ids, user and owner
   * ids, event names), whatever its length in characters: a PostgreSQL btree entry holds at most
   * 2,704 bytes, and 1,024 CJK characters (3,072 bytes) made a chunk's insert fail with a 500.
   */
  keyBytes: 2048,
  /** Largest `metadata` of a chunk or group, as JSON, in UTF-8 bytes. */
  metadataBytes: 65_536,
  /** Deepest nesting of objects and arrays in `metadata` (the body parser allows 128 for the whole body). */
  metadataDepth: 32,
  /** Longest group `name`. */
  groupNameLength: 1024,
  /** Longest group `description`. */
  groupDescriptionLength: 65_536,
  /** Most values of one `match`, `match_any` or `match_all`. */
  filterValues: 1000,
  /** Longest string in a filter condition (its field name or a value) and of a `sort_by.field`. */
  filterValueLength: 1024,
  /** Most conditions in one filter clause (`must`, `must_not`, `should`). */
  filterConditions: 100,
  /** Most ids plus tracking ids in one `{ids, tracking_ids}` condition (also the spec's must_not limit). */
  filterIds: 1000,
  /** Most points in one ring of a `geo_polygon`. */
  geoPolygonPoints: 1000,
  /** Most interior rings of a `geo_polygon`. */
  geoPolygonInteriors: 100,
  /** Most ids, or tracking ids, in one positive or negative example list of a recommendation. */
  exampleIds: 1000,
  /** Most ids, or tracking ids, one get-by-ids request names (POST /api/chunks, /api/chunks/tracking, /api/chunk_group/chunks). */
  idsPerLookup: 1000,
  /** Longest query text (search, autocomplete, count, group searches; each multi-query part; rerank_query; boost phrases). */
  queryLength: 4096,
  /** Most parts of a semantic multi-query. */
  multiQueries: 32,
  /** Most entries of `sort_options.tag_weights`. */
  tagWeights: 256,
  /** Longest `user_id` of a search or recommendation. */
  userIdLength: 1024,
  /** Most `highlight_delimiters`. */
  highlightDelimiters: 64,
  /** Longest highlight delimiter. */
  highlightDelimiterLength: 16,
  /** Longest `pre_tag` / `post_tag` (inserted around every highlighted phrase of every chunk returned). */
  highlightTagLength: 256,
  /** Most words in `typo_options.disable_on_word`. */
  typoDisabledWords: 1000,
  /** Longest word in `typo_options.disable_on_word`. */
  typoWordLength: 256,
  /**
   * Longest prompt of a dataset's `server_configuration` (`RAG_PROMPT`, `SYSTEM_PROMPT`, any key
   * ending in `_PROMPT`): sent with every RAG request.
   */
  configPromptLength: 16_384,
  /**
   * Longest other string of a `server_configuration`, and longest key: `EMBEDDING_QUERY_PREFIX`
   * (prepended to every query embedding), model names, API keys, unknown keys' strings.
   * Model-server addresses (keys ending in `_BASE_URL`) have `urlLength`.
   */
  configStringLength: 1024,
  /**
   * Largest `server_configuration` as JSON, in UTF-8 bytes, as stored: an update merges into the
   * stored object, so without this a run of updates with new keys would grow it without end
   * (and every search and job reads it).
   */
  configBytes: 65_536,
  /** Most `chunk_ids` of one POST /api/chunk/generate (each is a document in the model's context). */
  ragChunkIds: 100,
  /** Most `prev_messages` of one POST /api/chunk/generate. */
  ragMessages: 1000,
  /** Longest content of one message given to the model (`prev_messages[].content`). */
  ragMessageLength: 65_536,
  /** Most `stop_tokens` (what OpenAI-compatible endpoints take). */
  ragStopTokens: 4,
  /** Longest stop token. */
  ragStopTokenLength: 256,
  /** Most `image_config.images_per_chunk`. */
  ragImagesPerChunk: 100,
});

/**
 * UTF-8 byte length of `s` (a lone surrogate counts 3, as its replacement character); above
 * `stopAbove` it may return any value above it. Native: a JavaScript loop took 0.5 ms of an event
 * loop per 200 KB, paid on every long string of every request.
 */
export function utf8Length(s: string, stopAbove = Infinity): number {
  // Every UTF-16 unit is at least one byte: a string longer than the bound is over it already.
  if (s.length > stopAbove) return s.length;
  return Buffer.byteLength(s, 'utf8');
}

/** What {@link measureJson} found: the JSON size (an upper bound) and nesting depth, up to where it stopped. */
export interface JsonMeasure {
  /** UTF-8 bytes of the value's JSON text (an upper bound: escapes are counted at their longest). */
  readonly bytes: number;
  /** Deepest nesting of objects and arrays (a scalar is 0). */
  readonly depth: number;
  /** Whether it stopped early because `maxBytes` or `maxDepth` was passed. */
  readonly over: boolean;
}

/** A UTF-16 unit JSON escapes: a control character, `"` or `\\`. */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\]/;
const NEEDS_ESCAPE_ALL = /[\u0000-\u001f"\\]/g;

/** Upper bound of the UTF-8 bytes of a string's JSON literal: quotes, and 6 bytes (`\u00xx`) per unit needing an escape. */
function jsonStringBytes(s: string, stopAbove: number): number {
  const bytes = 2 + utf8Length(s, stopAbove);
  if (bytes > stopAbove || !NEEDS_ESCAPE.test(s)) return bytes;
  return bytes + 5 * (s.length - s.replace(NEEDS_ESCAPE_ALL, '').length);
}

/**
 * Measures the JSON text of a parsed JSON value without building it, iteratively (no recursion
 * to overflow): JSON.stringify would build megabytes only to learn they are too many. Stops as
 * soon as either bound is passed.
 */
export function measureJson(value: unknown, maxBytes: number, maxDepth: number): JsonMeasure {
  let bytes = 0;
  let depth = 0;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v === 'string') {
      bytes += jsonStringBytes(v, maxBytes);
    } else if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) {
      bytes += v === null || v === undefined ? 4 : String(v).length;
    } else if (typeof v === 'object') {
      const inner = d + 1;
      if (inner > depth) depth = inner;
      if (depth > maxDepth) return { bytes, depth, over: true };
      if (Array.isArray(v)) {
        bytes += 2 + Math.max(0, v.length - 1);
        for (let i = v.length - 1; i >= 0 && bytes <= maxBytes; i--) stack.push({ v: v[i], d: inner });
      } else {
        const keys = Object.keys(v);
        bytes += 2 + Math.max(0, keys.length - 1);
        for (let i = keys.length - 1; i >= 0 && bytes <= maxBytes; i--) {
          const key = keys[i]!;
          bytes += 1 + jsonStringBytes(key, maxBytes);
          stack.push({ v: (v as Record<string, unknown>)[key], d: inner });
        }
      }
    } else {
      bytes += 4;
    }
    if (bytes > maxBytes) return { bytes, depth, over: true };
  }
  return { bytes, depth, over: false };
}
