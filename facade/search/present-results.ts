/**
 * Ranked chunks on the wire: V2 `{chunk, highlights, score}` and V1 `{metadata: [chunk],
 * highlights, score}`, in the slim / content-only / full shape the request asks for, with the
 * highlighted chunk_html when highlighting runs.
 */
import type { ApiVersion } from '../access.js';
import { highlightChunk, type HighlightOptions } from '../highlight/index.js';
import { chunkJson, chunkOfShape, type ChunkShape } from '../present/chunk.js';
import type { Ranked } from '../../core/pipeline/post-rank.js';
import { withFields } from '../../core/domain/with-fields.js';

/** How results are shaped. */
export interface ResultShape {
  readonly version: ApiVersion;
  readonly slimChunks: boolean;
  readonly contentOnly: boolean;
  /** Null: no highlighting (`highlights: null`, as the reference answers without highlight_options). */
  readonly highlight: HighlightOptions | null;
  /** The text highlights are computed for. */
  readonly query: string;
}

/** The chunk shape a result takes. */
const chunkShapeOf = (shape: ResultShape): ChunkShape => (shape.contentOnly ? 'content' : shape.slimChunks ? 'slim' : 'full');

/** One result in the shape of the caller's API version. */
export function presentResult(shape: ResultShape, r: Ranked): Record<string, unknown> {
  let chunk: unknown;
  let highlights: string[] | null = null;
  // Slim chunks carry no html to mark up, so they get no highlights (as in the reference).
  if (shape.highlight && !shape.slimChunks) {
    const h = highlightChunk(r.c.chunkHtml ?? '', shape.query, shape.highlight);
    chunk = withFields(chunkOfShape(shape.version, chunkShapeOf(shape), r.c), { chunk_html: h.html });
    highlights = h.highlights;
  } else {
    // Not marked up: the record's JSON, encoded once for every page that shows it.
    chunk = chunkJson(shape.version, chunkShapeOf(shape), r.c);
  }
  return shape.version === 'V1' ? { metadata: [chunk], highlights, score: r.score } : { chunk, highlights, score: r.score };
}
