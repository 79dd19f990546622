import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChunkInput } from '../../core/domain/chunk.js';
import { MAPPING_TARGETS, type ColumnMapping, type MappingTarget, type RowImportOptions } from '../../core/domain/files.js';
import { LIMITS, measureJson } from '../../core/domain/limits.js';
import { formatTimestamp } from '../../core/domain/time.js';
import { rowToChunk, type RowChunk } from '../../core/files/row-to-chunk.js';
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
/** The file's group, which every chunk joins by id. */
const GROUP = '0190a5b0-0000-7000-8000-000000000001';
/** rowToChunk for a file of these options and metadata. */
const mapRow = (value: Record<string, unknown>, options: RowImportOptions, fileMetadata: unknown, rowIndex = 0, maxTextBytes?: number): RowChunk =>
  rowToChunk(value, rowIndex, { options, metadata: fileMetadata, groupId: GROUP, maxTextBytes });
const map = (...pairs: [string, MappingTarget][]): ColumnMapping[] => pairs.map(([csvJsonlField, chunkReqPayloadField]) => ({ csvJsonlField, chunkReqPayloadField }));

/** The chunk input of a row that must map; fails the test with the row error otherwise. */
function chunkOf(value: Record<string, unknown>, options: RowImportOptions = BASE, fileMetadata: unknown = null, rowIndex = 0): ChunkInput {
  const out = mapRow(value, options, fileMetadata, rowIndex);
  if ('error' in out) throw new Error(`unexpected row error: ${out.error}`);
  return out.input;
}

/** The row error of a row that must not map. */
function errorOf(value: Record<string, unknown>, options: RowImportOptions, fileMetadata: unknown = null, maxTextBytes?: number): string {
  const out = mapRow(value, options, fileMetadata, 0, maxTextBytes);
  if (!('error' in out)) throw new Error(`expected a row error, got ${JSON.stringify(out.input)}`);
  return out.error;
}

/** The `POST /api/chunk` body of a chunk input: what the wire would carry to make it. */
function wireOf(input: ChunkInput): Record<string, unknown> {
  return {
    chunk_html: input.chunkHtml,
    metadata: input.metadata,
    tracking_id: input.trackingId,
    link: input.link,
    tag_set: input.tagSet,
    time_stamp: input.timeStamp === null || input.timeStamp === undefined ? null : formatTimestamp(input.timeStamp),
    weight: input.weight,
    image_urls: input.imageUrls,
    location: input.location,
    num_value: input.numValue,
    semantic_content: input.semanticContent,
    fulltext_content: input.fulltextContent,
    convert_html_to_text: input.convertHtmlToText,
    fulltext_boost: input.fulltextBoost,
    semantic_boost: input.semanticBoost,
    group_ids: input.groupIds,
    group_tracking_ids: input.groupTrackingIds,
  };
}

/** The chunk input as the real `POST /api/chunk` body parser reads its wire body (throws when it refuses it). */
const parsed = (input: ChunkInput, maxTextBytes?: number) => parseCreateChunks(wireOf(input), 1, maxTextBytes).inputs[0]!;

describe('rowToChunk: the row itself', () => {
  it('writes the row without nulls as chunk_html and over the file metadata as metadata', () => {
    const chunk = chunkOf({ b: 1, a: 'x', gone: null, nested: { k: null } }, BASE, { a: 'file', origin: 'upload' }, 7);
    expect(chunk.chunkHtml).toBe('{"b":1,"a":"x","nested":{"k":null}}');
    expect(chunk.metadata).toEqual({ a: 'x', origin: 'upload', b: 1, nested: { k: null } });
    expect(chunk.metadataJson).toBe(JSON.stringify(chunk.metadata));
    expect(chunk.trackingId).toBe('file-1|7');
    expect(chunk.groupIds).toEqual([GROUP]);
    expect(chunk.groupTrackingIds).toEqual([]);
    // What the schema gives a body without the other fields.
    expect(chunk).toMatchObject({ link: null, tagSet: [], timeStamp: null, weight: 0, imageUrls: null, location: null, numValue: null, fulltextBoost: null, semanticBoost: null });
  });

  it.each([[null], [[1, 2]], ['text'], [42]])('uses the row alone as metadata when the file metadata is %j', (fileMetadata) => {
    expect(chunkOf({ a: '1' }, BASE, fileMetadata).metadata).toEqual({ a: '1' });
  });

  it('keeps a __proto__ column as an own field, after dropping nulls too', () => {
    const row = JSON.parse('{"__proto__":"p","x":null,"y":"1"}') as Record<string, unknown>;
    const chunk = chunkOf(row, BASE, { f: 1 });
    expect(chunk.chunkHtml).toBe('{"__proto__":"p","y":"1"}');
    expect(chunk.metadataJson).toBe('{"f":1,"__proto__":"p","y":"1"}');
    expect(Object.keys(chunk.metadata as object)).toEqual(['f', '__proto__', 'y']);
    expect(Object.getPrototypeOf(chunk.metadata)).toBe(Object.prototype);
  });
});

describe('rowToChunk: mappings', () => {
  it('takes a mapped tracking id (as a string), and the row default when it is empty or absent', () => {
    const options = opts({ mappings: map(['sku', 'tracking_id']) });
    expect(chunkOf({ sku: 'A-1' }, options).trackingId).toBe('A-1');
    expect(chunkOf({ sku: 42 }, options).trackingId).toBe('42');
    expect(chunkOf({ sku: '' }, options, null, 3).trackingId).toBe('file-1|3');
    expect(chunkOf({ other: 'x' }, options, null, 4).trackingId).toBe('file-1|4');
    expect(errorOf({ sku: 'x'.repeat(LIMITS.trackingIdLength + 1) }, options)).toMatch(/column "sku" \(tracking_id\) is longer than 1024/);
    // The store's key cap, in bytes: 1,000 three-byte characters are few enough characters but too many bytes.
    expect(chunkOf({ sku: '€'.repeat(682) }, options).trackingId).toBe('€'.repeat(682));
    expect(errorOf({ sku: '€'.repeat(683) }, options)).toBe(`column "sku" (tracking_id) is over ${LIMITS.keyBytes} bytes as UTF-8`);
  });

  it('accumulates tag_set: the options first, then strings split on commas and array elements', () => {
    const options = opts({ tagSet: ['base'], mappings: map(['t1', 'tag_set'], ['missing', 'tag_set'], ['t2', 'tag_set'], ['t3', 'tag_set']) });
    const chunk = chunkOf({ t1: ' red, ,blue ,', t2: ['x,y', 5, true, null], t3: 7 }, options);
    expect(chunk.tagSet).toEqual(['base', 'red', 'blue', 'x,y', '5', 'true', '7']);
    expect(errorOf({ t1: { a: 1 } }, options)).toBe('column "t1" (tag_set) is not a string or an array: {"a":1}');
    const many = Array.from({ length: LIMITS.tagsPerChunk }, (_, i) => `t${i}`).join(',');
    expect(errorOf({ t1: many }, options)).toBe(`the row has ${LIMITS.tagsPerChunk + 1} tags, at most ${LIMITS.tagsPerChunk} allowed`);
  });

  it('has no tags when the row and the file give none', () => {
    expect(chunkOf({ t: ' , ' }, opts({ mappings: map(['t', 'tag_set']) })).tagSet).toEqual([]);
  });

  it('accumulates image_urls: arrays contribute elements, a string itself (not split)', () => {
    const options = opts({ mappings: map(['a', 'image_urls'], ['b', 'image_urls']) });
    expect(chunkOf({ a: ['http://x/1', 'http://x/2'], b: 'http://x/3,4' }, options).imageUrls).toEqual(['http://x/1', 'http://x/2', 'http://x/3,4']);
    expect(chunkOf({ c: 1 }, options).imageUrls).toBeNull();
    expect(chunkOf({ a: [] }, options).imageUrls).toBeNull();
  });

  it('joins the file group by id, and the mapped groups by tracking id without repeats or the file group', () => {
    const options = opts({ mappings: map(['g', 'group_tracking_ids'], ['h', 'group_tracking_ids']) });
    const chunk = chunkOf({ g: ['a', 'file-1', 'b', ''], h: 'a' }, options);
    expect(chunk.groupIds).toEqual([GROUP]);
    expect(chunk.groupTrackingIds).toEqual(['a', 'b']);
    // The file group counts toward the cap.
    const many = Array.from({ length: LIMITS.groupsPerChunk }, (_, i) => `g${i}`);
    expect(chunkOf({ g: many.slice(1) }, options).groupTrackingIds).toHaveLength(LIMITS.groupsPerChunk - 1);
    expect(errorOf({ g: many }, options)).toBe(`the row has ${LIMITS.groupsPerChunk + 1} group_tracking_ids, at most ${LIMITS.groupsPerChunk} allowed`);
    expect(errorOf({ g: ['€'.repeat(683)] }, options)).toBe(`a value of group_tracking_ids is over ${LIMITS.keyBytes} bytes as UTF-8: "${'€'.repeat(99)}…`);
  });

  it('joins boost phrases with single spaces and uses each boost whose factor is set', () => {
    const mappings = map(['p1', 'boost_phrase'], ['p2', 'boost_phrase'], ['p3', 'boost_phrase']);
    const row = { p1: 'red shoes', p2: '', p3: 'sale' };
    expect(chunkOf(row, opts({ mappings, fulltextBoostFactor: 2, semanticBoostFactor: -0.5 }))).toMatchObject({
      fulltextBoost: { phrase: 'red shoes sale', boost_factor: 2 },
      semanticBoost: { phrase: 'red shoes sale', distance_factor: -0.5 },
    });
    const onlyFulltext = chunkOf(row, opts({ mappings, fulltextBoostFactor: 1.5 }));
    expect(onlyFulltext.fulltextBoost).toEqual({ phrase: 'red shoes sale', boost_factor: 1.5 });
    expect(onlyFulltext.semanticBoost).toBeNull();
    const none = chunkOf(row, opts({ mappings }));
    expect([none.fulltextBoost, none.semanticBoost]).toEqual([null, null]);
    // An empty phrase boosts nothing.
    expect(chunkOf({ p2: '' }, opts({ mappings, fulltextBoostFactor: 2 })).fulltextBoost).toBeNull();
  });

  it('reads num_value and weight from numbers and from strings that are numbers entirely', () => {
    const options = opts({ mappings: map(['price', 'num_value'], ['w', 'weight']) });
    expect(chunkOf({ price: '12.5', w: 3 }, options)).toMatchObject({ numValue: 12.5, weight: 3 });
    expect(chunkOf({ price: ' -1e3 ', w: '.5' }, options)).toMatchObject({ numValue: -1000, weight: 0.5 });
    expect(errorOf({ price: 'abc' }, options)).toBe('column "price" (num_value) is not a number: "abc"');
    for (const bad of ['', ' ', '0x10', '0b1', 'Infinity', '1,5', '12abc']) {
      expect(errorOf({ price: bad }, options)).toBe(`column "price" (num_value) is not a number: ${JSON.stringify(bad)}`);
    }
    expect(errorOf({ w: true }, options)).toBe('column "w" (weight) is not a number: true');
    expect(errorOf({ w: [1] }, options)).toBe('column "w" (weight) is not a number: [1]');
  });

  it('takes the last mapping the row has for single-valued targets', () => {
    const options = opts({ mappings: map(['l1', 'link'], ['l2', 'link'], ['n1', 'num_value'], ['n2', 'num_value']) });
    expect(chunkOf({ l1: 'http://a', l2: 'http://b', n1: '1', n2: '2' }, options)).toMatchObject({ link: 'http://b', numValue: 2 });
    expect(chunkOf({ l1: 'http://a', n1: '1' }, options)).toMatchObject({ link: 'http://a', numValue: 1 });
    // Only the last value counts: an unusable earlier one does not fail the row.
    expect(chunkOf({ n1: 'abc', n2: '2' }, options).numValue).toBe(2);
  });

  it('uses the mapped link, else the file link', () => {
    const options = opts({ link: 'http://file', mappings: map(['url', 'link']) });
    expect(chunkOf({ url: 'http://row' }, options).link).toBe('http://row');
    expect(chunkOf({}, options).link).toBe('http://file');
    expect(chunkOf({}, BASE).link).toBeNull();
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
    const at = (when: unknown) => formatTimestamp(chunkOf({ when }, options).timeStamp!);
    expect(at('2024-01-31T12:00:00+02:00')).toBe('2024-01-31 10:00:00.000');
    expect(at('2024-01-31')).toBe('2024-01-31 00:00:00.000');
    expect(at(1_700_000_000)).toBe('2023-11-14 22:13:20.000');
    expect(at('1700000000.5')).toBe('2023-11-14 22:13:20.500');
    expect(at(1_700_000_000_123)).toBe('2023-11-14 22:13:20.123');
    expect(chunkOf({}, options).timeStamp).toBe(fileMs);
    expect(chunkOf({}, BASE).timeStamp).toBeNull();
    expect(errorOf({ when: 'yesterday' }, options)).toBe('column "when" (time_stamp) is not a timestamp: "yesterday"');
    expect(errorOf({ when: 1e15 }, options)).toBe('the time stamp of column "when" is outside the years 0000-9999');
    expect(chunkOf({ when: '2024-01-31T12:00:00.123+02:00' }, options).timeStamp).toBe(Date.UTC(2024, 0, 31, 10, 0, 0, 123));
  });

  it('does not apply a mapped column the row lacks (or holds null)', () => {
    const options = opts({ link: 'http://file', mappings: map(['u', 'link'], ['n', 'num_value'], ['la', 'lat'], ['lo', 'lon']) });
    const chunk = chunkOf({ u: null, n: null, la: null }, options);
    expect(chunk.link).toBe('http://file');
    expect([chunk.numValue, chunk.location]).toEqual([null, null]);
  });
});

describe('rowToChunk: the chunk body caps', () => {
  it('refuses a row whose JSON is over the chunk text cap', () => {
    // {"t":"é…"}: 8 bytes of JSON around 50 two-byte characters.
    const row = { t: 'é'.repeat(50) };
    expect(errorOf(row, BASE, null, 107)).toBe('the row is 108 bytes as JSON, over the chunk text limit of 107 bytes');
    const out = mapRow(row, BASE, null, 0, 108);
    expect(out).toHaveProperty('input');
    if ('input' in out) expect(() => parsed(out.input, 108)).not.toThrow();
    expect(() => parsed((mapRow({ t: 'é'.repeat(51) }, BASE, null) as { input: ChunkInput }).input, 108)).toThrow(/at most 108 bytes/);
  });

  it('refuses metadata nested deeper than the cap', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < LIMITS.metadataDepth; i++) deep = { d: deep };
    expect(errorOf({ deep }, BASE)).toBe(`the row's metadata nests more than ${LIMITS.metadataDepth} levels deep`);
  });

  it('agrees with the schema on nesting around the cap, in the row or the file metadata, through arrays and objects', () => {
    const nest = (levels: number, array: boolean): unknown => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = array && i % 2 === 0 ? ['x', v] : { d: v, s: 's' };
      return v;
    };
    let refused = 0;
    for (const rowLevels of [0, 1, 29, 30, 31, 32]) {
      for (const fileLevels of [null, 0, 30, 31, 32]) {
        for (const array of [false, true]) {
          const row = { flat: 'v', n: 1, deep: nest(rowLevels, array) };
          const fileMetadata = fileLevels === null ? null : { f: nest(fileLevels, !array) };
          const out = mapRow(row, BASE, fileMetadata);
          const over = measureJson(fileMetadata === null ? row : { ...fileMetadata, ...row }, LIMITS.metadataBytes, LIMITS.metadataDepth).over;
          expect('error' in out).toBe(over);
          if ('error' in out) refused++;
          else expect(() => parsed(out.input)).not.toThrow();
        }
      }
    }
    // Both outcomes are exercised.
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(60);
  });

  it('agrees with the schema on metadata size at the cap, escapes and file metadata included', () => {
    const file = { note: 'n'.repeat(1000) };
    // Quotes are counted at 6 bytes each by the schema's measure: around 65536 / 6 of them.
    for (const quotes of [10_000, 10_900, 10_921, 10_922, 10_923, 11_000, 20_000]) {
      for (const fileMetadata of [null, file]) {
        const row = { q: '"'.repeat(quotes) };
        const out = mapRow(row, BASE, fileMetadata);
        const over = measureJson(fileMetadata === null ? row : { ...fileMetadata, ...row }, LIMITS.metadataBytes, LIMITS.metadataDepth).over;
        expect('error' in out).toBe(over);
        if ('input' in out) expect(() => parsed(out.input)).not.toThrow();
        else expect(out.error).toBe(`the row's metadata is over ${LIMITS.metadataBytes} bytes as JSON`);
      }
    }
  });
});

// --- Every chunk input rowToChunk makes is what the real body parser makes of the same chunk.

const cell = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('12.5', '-3', '1e3', '45', '-120', '2024-01-31', '2024-01-31T10:00:00Z', '1700000000', 'a,b, c', '', 'x'.repeat(1100), '€'.repeat(700)),
  fc.double({ noNaN: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);
// '7' and '10' are array-index keys, which an object orders first: the metadata's JSON text must still be JSON.stringify's.
const FIELDS = ['a', 'b', 'c', 'd', '7', '10'];
const scenario = fc.record({
  row: fc.dictionary(fc.constantFrom(...FIELDS), cell, { maxKeys: 5 }),
  mappings: fc.array(fc.record({ csvJsonlField: fc.constantFrom(...FIELDS, 'missing'), chunkReqPayloadField: fc.constantFrom(...MAPPING_TARGETS) }), {
    maxLength: 6,
  }),
  tagSet: fc.array(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 3 }),
  link: fc.option(fc.constant('http://file'), { nil: null }),
  timeStamp: fc.option(fc.integer({ min: 0, max: 4_102_444_800_000 }), { nil: null }),
  fulltextBoostFactor: fc.option(fc.double({ min: -5, max: 5, noNaN: true }), { nil: null }),
  semanticBoostFactor: fc.option(fc.double({ min: -5, max: 5, noNaN: true }), { nil: null }),
  fileMetadata: fc.constantFrom(null, {}, { source: 'file' }, { a: 'file', z: [1] }, { 3: 'three', s: 's' }, ['not', 'an', 'object']),
  rowIndex: fc.nat({ max: 1_000_000 }),
});

describe('rowToChunk: against the chunk body parser', () => {
  it('makes the chunk input parseCreateChunks makes of the same chunk, with the metadata JSON.stringify writes', () => {
    let chunks = 0;
    let errors = 0;
    fc.assert(
      fc.property(scenario, (s) => {
        const options = opts({ ...s, groupTrackingId: 'grp' });
        const out = mapRow(s.row, options, s.fileMetadata, s.rowIndex);
        if ('error' in out) {
          errors++;
          expect(out.error.length).toBeGreaterThan(0);
          return;
        }
        chunks++;
        const { metadataJson, ...input } = out.input;
        expect(parsed(out.input)).toEqual(input);
        expect(metadataJson).toBe(JSON.stringify(input.metadata));
        // The merge, against the spread it stands for: same keys, values and order.
        const row = Object.fromEntries(Object.entries(s.row).filter(([, v]) => v != null));
        const file = s.fileMetadata !== null && !Array.isArray(s.fileMetadata) ? s.fileMetadata : null;
        expect(JSON.stringify(input.metadata)).toBe(JSON.stringify(file === null ? row : { ...file, ...row }));
        expect(input.groupIds).toEqual([GROUP]);
        expect(input.tagSet?.slice(0, s.tagSet.length)).toEqual(s.tagSet);
        const mappedTracking = options.mappings.some((m) => m.chunkReqPayloadField === 'tracking_id' && s.row[m.csvJsonlField] != null && s.row[m.csvJsonlField] !== '');
        if (!mappedTracking) expect(input.trackingId).toBe(`grp|${s.rowIndex}`);
        if (!options.mappings.some((m) => m.chunkReqPayloadField === 'time_stamp' && s.row[m.csvJsonlField] != null)) {
          expect(input.timeStamp).toBe(s.timeStamp);
        }
      }),
      { numRuns: 3000 },
    );
    // Both outcomes are exercised, chunks mostly.
    expect(chunks).toBeGreaterThan(errors);
    expect(errors).toBeGreaterThan(0);
  });

  it('refuses what the body parser refuses: a row it maps is never one the parser would turn down', () => {
    // Tracking and group ids over the store's key bytes: the parser's limit, not only the length cap.
    const options = opts({ mappings: map(['t', 'tracking_id'], ['g', 'group_tracking_ids']) });
    for (const row of [{ t: '€'.repeat(683) }, { g: '€'.repeat(683) }, { t: 'x'.repeat(LIMITS.trackingIdLength + 1) }]) {
      const wire = { chunk_html: '{}', tracking_id: row.t, group_tracking_ids: row.g === undefined ? [] : [row.g] };
      expect(() => parseCreateChunks(wire, 1)).toThrow(/Json Deserialization Error/);
      expect(errorOf(row, options).length).toBeGreaterThan(0);
    }
  });
});
