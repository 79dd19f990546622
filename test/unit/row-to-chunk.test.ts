import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAPPING_TARGETS, type ColumnMapping, type MappingTarget, type RowImportOptions } from '../../core/domain/files.js';
import { LIMITS, measureJson } from '../../core/domain/limits.js';
import { rowToChunk } from '../../core/files/row-to-chunk.js';
import { parseCreateChunks } from '../../facade/schemas/chunk.js';

const BASE: RowImportOptions = {
  tagSet: [],
  link: null,
  timeStamp: null,
  groupTrackingId: 'file-1',
  upsertByTrackingId: true,
  mappings: [],
  fulltextBoostFactor: null,
  semanticBoostFactor: null,
};

const opts = (over: Partial<RowImportOptions> = {}): RowImportOptions => ({ ...BASE, ...over });
const map = (...pairs: [string, MappingTarget][]): ColumnMapping[] => pairs.map(([csvJsonlField, chunkReqPayloadField]) => ({ csvJsonlField, chunkReqPayloadField }));

/** The chunk of a row that must map; fails the test with the row error otherwise. */
function chunkOf(value: Record<string, unknown>, options: RowImportOptions = BASE, fileMetadata: unknown = null, rowIndex = 0): Record<string, unknown> {
  const out = rowToChunk(value, rowIndex, options, fileMetadata);
  if ('error' in out) throw new Error(`unexpected row error: ${out.error}`);
  return out.chunk;
}

/** The row error of a row that must not map. */
function errorOf(value: Record<string, unknown>, options: RowImportOptions, fileMetadata: unknown = null, maxTextBytes?: number): string {
  const out = rowToChunk(value, 0, options, fileMetadata, maxTextBytes);
  if (!('error' in out)) throw new Error(`expected a row error, got ${JSON.stringify(out.chunk)}`);
  return out.error;
}

/** The chunk as the real `POST /api/chunk` body parser reads it (throws when it refuses it). */
const parsed = (chunk: Record<string, unknown>, maxTextBytes?: number) => parseCreateChunks(chunk, 1, maxTextBytes).inputs[0]!;

describe('rowToChunk: the row itself', () => {
  it('writes the row without nulls as chunk_html and over the file metadata as metadata', () => {
    const chunk = chunkOf({ b: 1, a: 'x', gone: null, nested: { k: null } }, BASE, { a: 'file', origin: 'upload' }, 7);
    expect(chunk.chunk_html).toBe('{"b":1,"a":"x","nested":{"k":null}}');
    expect(chunk.metadata).toEqual({ a: 'x', origin: 'upload', b: 1, nested: { k: null } });
    expect(chunk.tracking_id).toBe('file-1|7');
    expect(chunk.group_tracking_ids).toEqual(['file-1']);
    // No upsert flag: the import job decides upsert or skip.
    expect(Object.keys(chunk).sort()).toEqual(['chunk_html', 'group_tracking_ids', 'metadata', 'tracking_id']);
  });

  it.each([[null], [[1, 2]], ['text'], [42]])('uses the row alone as metadata when the file metadata is %j', (fileMetadata) => {
    expect(chunkOf({ a: '1' }, BASE, fileMetadata).metadata).toEqual({ a: '1' });
  });

  it('keeps a __proto__ column as an own field, after dropping nulls too', () => {
    const row = JSON.parse('{"__proto__":"p","x":null,"y":"1"}') as Record<string, unknown>;
    const chunk = chunkOf(row, BASE, { f: 1 });
    expect(chunk.chunk_html).toBe('{"__proto__":"p","y":"1"}');
    expect(Object.keys(chunk.metadata as object)).toEqual(['f', '__proto__', 'y']);
    expect(Object.getPrototypeOf(chunk.metadata)).toBe(Object.prototype);
  });
});

describe('rowToChunk: mappings', () => {
  it('takes a mapped tracking id (as a string), and the row default when it is empty or absent', () => {
    const options = opts({ mappings: map(['sku', 'tracking_id']) });
    expect(chunkOf({ sku: 'A-1' }, options).tracking_id).toBe('A-1');
    expect(chunkOf({ sku: 42 }, options).tracking_id).toBe('42');
    expect(chunkOf({ sku: '' }, options, null, 3).tracking_id).toBe('file-1|3');
    expect(chunkOf({ other: 'x' }, options, null, 4).tracking_id).toBe('file-1|4');
    expect(errorOf({ sku: 'x'.repeat(LIMITS.trackingIdLength + 1) }, options)).toMatch(/column "sku" \(tracking_id\) is longer than 1024/);
  });

  it('accumulates tag_set: the options first, then strings split on commas and array elements', () => {
    const options = opts({ tagSet: ['base'], mappings: map(['t1', 'tag_set'], ['missing', 'tag_set'], ['t2', 'tag_set'], ['t3', 'tag_set']) });
    const chunk = chunkOf({ t1: ' red, ,blue ,', t2: ['x,y', 5, true, null], t3: 7 }, options);
    expect(chunk.tag_set).toEqual(['base', 'red', 'blue', 'x,y', '5', 'true', '7']);
    expect(errorOf({ t1: { a: 1 } }, options)).toBe('column "t1" (tag_set) is not a string or an array: {"a":1}');
    const many = Array.from({ length: LIMITS.tagsPerChunk }, (_, i) => `t${i}`).join(',');
    expect(errorOf({ t1: many }, options)).toBe(`the row has ${LIMITS.tagsPerChunk + 1} tags, at most ${LIMITS.tagsPerChunk} allowed`);
  });

  it('leaves tag_set out when there are no tags', () => {
    expect('tag_set' in chunkOf({ t: ' , ' }, opts({ mappings: map(['t', 'tag_set']) }))).toBe(false);
  });

  it('accumulates image_urls: arrays contribute elements, a string itself (not split)', () => {
    const options = opts({ mappings: map(['a', 'image_urls'], ['b', 'image_urls']) });
    expect(chunkOf({ a: ['http://x/1', 'http://x/2'], b: 'http://x/3,4' }, options).image_urls).toEqual(['http://x/1', 'http://x/2', 'http://x/3,4']);
    expect('image_urls' in chunkOf({ c: 1 }, options)).toBe(false);
  });

  it('puts the file group first in group_tracking_ids, then the mapped ones, without repeats', () => {
    const options = opts({ mappings: map(['g', 'group_tracking_ids'], ['h', 'group_tracking_ids']) });
    expect(chunkOf({ g: ['a', 'file-1', 'b', ''], h: 'a' }, options).group_tracking_ids).toEqual(['file-1', 'a', 'b']);
  });

  it('joins boost phrases with single spaces and uses each boost whose factor is set', () => {
    const mappings = map(['p1', 'boost_phrase'], ['p2', 'boost_phrase'], ['p3', 'boost_phrase']);
    const row = { p1: 'red shoes', p2: '', p3: 'sale' };
    expect(chunkOf(row, opts({ mappings, fulltextBoostFactor: 2, semanticBoostFactor: -0.5 }))).toMatchObject({
      fulltext_boost: { phrase: 'red shoes sale', boost_factor: 2 },
      semantic_boost: { phrase: 'red shoes sale', distance_factor: -0.5 },
    });
    const onlyFulltext = chunkOf(row, opts({ mappings, fulltextBoostFactor: 1.5 }));
    expect(onlyFulltext.fulltext_boost).toEqual({ phrase: 'red shoes sale', boost_factor: 1.5 });
    expect('semantic_boost' in onlyFulltext).toBe(false);
    const none = chunkOf(row, opts({ mappings }));
    expect('fulltext_boost' in none || 'semantic_boost' in none).toBe(false);
    // An empty phrase boosts nothing.
    expect('fulltext_boost' in chunkOf({ p2: '' }, opts({ mappings, fulltextBoostFactor: 2 }))).toBe(false);
  });

  it('reads num_value and weight from numbers and from strings that are numbers entirely', () => {
    const options = opts({ mappings: map(['price', 'num_value'], ['w', 'weight']) });
    expect(chunkOf({ price: '12.5', w: 3 }, options)).toMatchObject({ num_value: 12.5, weight: 3 });
    expect(chunkOf({ price: ' -1e3 ', w: '.5' }, options)).toMatchObject({ num_value: -1000, weight: 0.5 });
    expect(errorOf({ price: 'abc' }, options)).toBe('column "price" (num_value) is not a number: "abc"');
    for (const bad of ['', ' ', '0x10', '0b1', 'Infinity', '1,5', '12abc']) {
      expect(errorOf({ price: bad }, options)).toBe(`column "price" (num_value) is not a number: ${JSON.stringify(bad)}`);
    }
    expect(errorOf({ w: true }, options)).toBe('column "w" (weight) is not a number: true');
    expect(errorOf({ w: [1] }, options)).toBe('column "w" (weight) is not a number: [1]');
  });

  it('takes the last mapping the row has for single-valued targets', () => {
    const options = opts({ mappings: map(['l1', 'link'], ['l2', 'link'], ['n1', 'num_value'], ['n2', 'num_value']) });
    expect(chunkOf({ l1: 'http://a', l2: 'http://b', n1: '1', n2: '2' }, options)).toMatchObject({ link: 'http://b', num_value: 2 });
    expect(chunkOf({ l1: 'http://a', n1: '1' }, options)).toMatchObject({ link: 'http://a', num_value: 1 });
    // Only the last value counts: an unusable earlier one does not fail the row.
    expect(chunkOf({ n1: 'abc', n2: '2' }, options).num_value).toBe(2);
  });

  it('uses the mapped link, else the file link', () => {
    const options = opts({ link: 'http://file', mappings: map(['url', 'link']) });
    expect(chunkOf({ url: 'http://row' }, options).link).toBe('http://row');
    expect(chunkOf({}, options).link).toBe('http://file');
    expect('link' in chunkOf({}, BASE)).toBe(false);
    expect(errorOf({ url: { a: 1 } }, options)).toBe('column "url" (link) is not a string: {"a":1}');
  });

  it('makes a location of lat and lon, checks their ranges, and refuses one without the other', () => {
    const options = opts({ mappings: map(['la', 'lat'], ['lo', 'lon']) });
    expect(chunkOf({ la: '48.85', lo: 2.35 }, options).location).toEqual({ lat: 48.85, lon: 2.35 });
    expect(errorOf({ la: '48.85' }, options)).toBe('the row has a lat (column "la") but no lon');
    expect(errorOf({ lo: '2' }, options)).toBe('the row has a lon (column "lo") but no lat');
    expect(errorOf({ la: '91', lo: '0' }, options)).toBe('column "la" (lat) is outside -90..90: 91');
    expect(errorOf({ la: '0', lo: '-180.5' }, options)).toBe('column "lo" (lon) is outside -180..180: -180.5');
    expect(errorOf({ la: 'north', lo: '0' }, options)).toBe('column "la" (lat) is not a number: "north"');
  });

  it('reads a time stamp as ISO 8601, or a number as Unix seconds (milliseconds from 1e11), else the file time stamp', () => {
    const fileMs = Date.UTC(2023, 4, 6, 7, 8, 9, 10);
    const options = opts({ timeStamp: fileMs, mappings: map(['when', 'time_stamp']) });
    const at = (when: unknown) => chunkOf({ when }, options).time_stamp;
    expect(at('2024-01-31T12:00:00+02:00')).toBe('2024-01-31 10:00:00.000');
    expect(at('2024-01-31')).toBe('2024-01-31 00:00:00.000');
    expect(at(1_700_000_000)).toBe('2023-11-14 22:13:20.000');
    expect(at('1700000000.5')).toBe('2023-11-14 22:13:20.500');
    expect(at(1_700_000_000_123)).toBe('2023-11-14 22:13:20.123');
    expect(chunkOf({}, options).time_stamp).toBe('2023-05-06 07:08:09.010');
    expect('time_stamp' in chunkOf({}, BASE)).toBe(false);
    expect(errorOf({ when: 'yesterday' }, options)).toBe('column "when" (time_stamp) is not a timestamp: "yesterday"');
    expect(errorOf({ when: 1e15 }, options)).toBe('the time stamp of column "when" is outside the years 0000-9999');
    // What it writes, the chunk schema reads back as the same instant.
    expect(parsed(chunkOf({ when: '2024-01-31T12:00:00.123+02:00' }, options)).timeStamp).toBe(Date.UTC(2024, 0, 31, 10, 0, 0, 123));
  });

  it('does not apply a mapped column the row lacks (or holds null)', () => {
    const options = opts({ link: 'http://file', mappings: map(['u', 'link'], ['n', 'num_value'], ['la', 'lat'], ['lo', 'lon']) });
    const chunk = chunkOf({ u: null, n: null, la: null }, options);
    expect(chunk.link).toBe('http://file');
    expect('num_value' in chunk || 'location' in chunk).toBe(false);
  });
});

describe('rowToChunk: the chunk body caps', () => {
  it('refuses a row whose JSON is over the chunk text cap', () => {
    // {"t":"é…"}: 8 bytes of JSON around 50 two-byte characters.
    const row = { t: 'é'.repeat(50) };
    expect(errorOf(row, BASE, null, 107)).toBe('the row is 108 bytes as JSON, over the chunk text limit of 107 bytes');
    const out = rowToChunk(row, 0, BASE, null, 108);
    expect(out).toHaveProperty('chunk');
    if ('chunk' in out) expect(() => parsed(out.chunk, 108)).not.toThrow();
    expect(() => parsed((rowToChunk({ t: 'é'.repeat(51) }, 0, BASE, null) as { chunk: Record<string, unknown> }).chunk, 108)).toThrow(/at most 108 bytes/);
  });

  it('refuses metadata nested deeper than the cap', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < LIMITS.metadataDepth; i++) deep = { d: deep };
    expect(errorOf({ deep }, BASE)).toBe(`the row's metadata nests more than ${LIMITS.metadataDepth} levels deep`);
  });

  it('agrees with the schema on metadata size at the cap, escapes and file metadata included', () => {
    const file = { note: 'n'.repeat(1000) };
    // Quotes are counted at 6 bytes each by the schema's measure: around 65536 / 6 of them.
    for (const quotes of [10_000, 10_900, 10_921, 10_922, 10_923, 11_000, 20_000]) {
      for (const fileMetadata of [null, file]) {
        const row = { q: '"'.repeat(quotes) };
        const out = rowToChunk(row, 0, BASE, fileMetadata);
        const over = measureJson(fileMetadata === null ? row : { ...fileMetadata, ...row }, LIMITS.metadataBytes, LIMITS.metadataDepth).over;
        expect('error' in out).toBe(over);
        if ('chunk' in out) expect(() => parsed(out.chunk)).not.toThrow();
        else expect(out.error).toBe(`the row's metadata is over ${LIMITS.metadataBytes} bytes as JSON`);
      }
    }
  });
});

// --- Every chunk rowToChunk makes passes the real body parser, and says what the row says.

const cell = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('12.5', '-3', '1e3', '45', '-120', '2024-01-31', '2024-01-31T10:00:00Z', '1700000000', 'a,b, c', '', 'x'.repeat(1100)),
  fc.double({ noNaN: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);
const FIELDS = ['a', 'b', 'c', 'd'];
const scenario = fc.record({
  row: fc.dictionary(fc.constantFrom(...FIELDS), cell, { maxKeys: 4 }),
  mappings: fc.array(fc.record({ csvJsonlField: fc.constantFrom(...FIELDS, 'missing'), chunkReqPayloadField: fc.constantFrom(...MAPPING_TARGETS) }), {
    maxLength: 6,
  }),
  tagSet: fc.array(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 3 }),
  link: fc.option(fc.constant('http://file'), { nil: null }),
  timeStamp: fc.option(fc.integer({ min: 0, max: 4_102_444_800_000 }), { nil: null }),
  fulltextBoostFactor: fc.option(fc.double({ min: -5, max: 5, noNaN: true }), { nil: null }),
  semanticBoostFactor: fc.option(fc.double({ min: -5, max: 5, noNaN: true }), { nil: null }),
  fileMetadata: fc.constantFrom(null, { source: 'file' }, ['not', 'an', 'object']),
  rowIndex: fc.nat({ max: 1_000_000 }),
});

describe('rowToChunk: against the chunk body parser', () => {
  it('makes chunks that parseCreateChunks accepts, carrying the tracking id, group and tags', () => {
    let chunks = 0;
    let errors = 0;
    fc.assert(
      fc.property(scenario, (s) => {
        const options = opts({ ...s, groupTrackingId: 'grp' });
        const out = rowToChunk(s.row, s.rowIndex, options, s.fileMetadata);
        if ('error' in out) {
          errors++;
          expect(out.error.length).toBeGreaterThan(0);
          return;
        }
        chunks++;
        const input = parsed(out.chunk);
        expect(input.chunkHtml).toBe(out.chunk.chunk_html);
        expect(input.groupTrackingIds?.[0]).toBe('grp');
        expect(input.tagSet?.slice(0, s.tagSet.length)).toEqual(s.tagSet);
        const mappedTracking = options.mappings.some((m) => m.chunkReqPayloadField === 'tracking_id' && s.row[m.csvJsonlField] != null && s.row[m.csvJsonlField] !== '');
        if (!mappedTracking) expect(input.trackingId).toBe(`grp|${s.rowIndex}`);
        if (!options.mappings.some((m) => m.chunkReqPayloadField === 'time_stamp' && s.row[m.csvJsonlField] != null)) {
          expect(input.timeStamp).toBe(s.timeStamp);
        }
      }),
      { numRuns: 2000 },
    );
    // Both outcomes are exercised, chunks mostly.
    expect(chunks).toBeGreaterThan(errors);
    expect(errors).toBeGreaterThan(0);
  });
});
