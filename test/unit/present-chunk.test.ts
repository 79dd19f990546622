/**
 * facade/present/chunk.ts `chunkJson`: the JSON of a record, encoded once per record and shape,
 * is exactly the JSON of the shape built fresh (chunkFor, slimChunkFor, contentOnlyChunk), for
 * each API version; the same record gives the same bytes; a changed chunk (a new record) gives
 * its new content.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { chunkFor, chunkJson, contentOnlyChunk, slimChunkFor } from '../../facade/present/chunk.js';
import { jsonBytes } from '../../facade/present/json-bytes.js';

const record = (over: Partial<ChunkRecord> = {}): ChunkRecord => ({
  id: '0190f3e2-0000-7000-8000-000000000001',
  datasetId: '0190f3e2-0000-7000-8000-0000000000aa',
  trackingId: 't-1',
  chunkHtml: '<p>β-catenin “quoted” \\ "x"</p>',
  link: null,
  metadata: { a: [1, { b: null }], '2': 'int key' },
  tagSet: ['x', 'y'],
  timeStamp: 1_700_000_000_000,
  weight: 1.5,
  imageUrls: null,
  location: { lat: 1, lon: 2 },
  numValue: null,
  semanticContent: null,
  fulltextContent: null,
  convertHtmlToText: true,
  fulltextBoost: null,
  semanticBoost: null,
  createdAt: 1_700_000_000_123,
  updatedAt: 1_700_000_000_456,
  ...over,
});

const hex = (v: object): string => jsonBytes(v).toString('hex');

describe('chunkJson', () => {
  it('is the JSON of the shape built fresh, for every version and shape', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.array(fc.string(), { maxLength: 4 }), fc.jsonValue(), fc.option(fc.string()), (html, tags, metadata, link) => {
        const c = record({ chunkHtml: html, tagSet: tags, metadata, link });
        for (const version of ['V1', 'V2'] as const) {
          expect(chunkJson(version, 'full', c).bytes.toString('hex')).toBe(hex(chunkFor(version, c)));
          expect(chunkJson(version, 'slim', c).bytes.toString('hex')).toBe(hex(slimChunkFor(version, c)));
          expect(chunkJson(version, 'content', c).bytes.toString('hex')).toBe(hex(contentOnlyChunk(c)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('encodes a record once, and a new record of the same chunk afresh', () => {
    const c = record();
    const first = chunkJson('V2', 'full', c);
    expect(chunkJson('V2', 'full', c)).toBe(first);
    expect(chunkJson('V1', 'full', c)).not.toBe(first);
    expect(JSON.parse(chunkJson('V1', 'full', c).bytes.toString())).toMatchObject({ tag_set: 'x,y' });
    expect(JSON.parse(first.bytes.toString())).toMatchObject({ tag_set: ['x', 'y'] });
    const updated = record({ chunkHtml: 'new text' });
    expect(JSON.parse(chunkJson('V2', 'full', updated).bytes.toString())).toMatchObject({ id: c.id, chunk_html: 'new text' });
    expect(JSON.parse(chunkJson('V2', 'full', c).bytes.toString())).toMatchObject({ chunk_html: c.chunkHtml });
  });
});
