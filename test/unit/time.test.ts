import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatOptionalTimestamp, formatTimestamp, parseTimestamp } from '../../core/domain/time.js';

const utc = (s: string) => Date.parse(s);

describe('parseTimestamp', () => {
  it.each([
    ['2024-01-31T10:00:00Z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00z', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31 10:00:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T10:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31', '2024-01-31T00:00:00.000Z'],
    ['  2024-01-31  ', '2024-01-31T00:00:00.000Z'],
    ['2024-01-31 10:00:00.5', '2024-01-31T10:00:00.500Z'],
    ['2024-01-31 10:00:00.123', '2024-01-31T10:00:00.123Z'],
    ['2024-01-31T10:00:00.123456789', '2024-01-31T10:00:00.123Z'],
    ['2024-01-31T10:00:00,25', '2024-01-31T10:00:00.250Z'],
    ['2024-01-31T12:00:00+02:00', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T12:00:00+0200', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T12:00:00+02', '2024-01-31T10:00:00.000Z'],
    ['2024-01-31T05:30:00-04:30', '2024-01-31T10:00:00.000Z'],
    ['2024-01-01T01:00:00+05:00', '2023-12-31T20:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['1970-01-01', '1970-01-01T00:00:00.000Z'],
    ['1969-12-31T23:59:59Z', '1969-12-31T23:59:59.000Z'],
    ['9999-12-31T23:59:59.999', '9999-12-31T23:59:59.999Z'],
    ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59.000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
  ])('%s is %s', (input, iso) => {
    expect(parseTimestamp(input)).toBe(utc(iso));
  });

  it.each([
    '',
    'yesterday',
    '2024',
    '2024-01',
    '24-01-31',
    '2024/01/31',
    '31-01-2024',
    '2024-1-31',
    '2024-00-10',
    '2024-13-01',
    '2024-01-00',
    '2024-01-32',
    '2024-02-30',
    '2023-02-29',
    '1900-02-29',
    '2024-04-31',
    '2024-01-31T24:00:00',
    '2024-01-31T10:60:00',
    '2024-01-31T10:00:61',
    '2024-01-31T10',
    '2024-01-31X10:00:00',
    '2024-01-31T10:00:00+2:00',
    '2024-01-31T10:00:00 UTC',
    '2024-01-31T10:00:00.Z',
    '1706695200',
  ])('%j is not a timestamp', (input) => {
    expect(parseTimestamp(input)).toBeUndefined();
  });

  it('agrees with Date.parse on generated ISO strings with Z or offsets', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (date, offsetMin) => {
          const iso = date.toISOString();
          expect(parseTimestamp(iso)).toBe(date.getTime());
          // Same instant written with an offset.
          const local = new Date(date.getTime() + offsetMin * 60_000).toISOString().slice(0, 23);
          const sign = offsetMin < 0 ? '-' : '+';
          const abs = Math.abs(offsetMin);
          const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          expect(parseTimestamp(local + zone)).toBe(date.getTime());
        },
      ),
    );
  });
});

describe('formatTimestamp', () => {
  it('writes YYYY-MM-DD hh:mm:ss.SSS in UTC without a zone', () => {
    expect(formatTimestamp(utc('2024-01-31T10:00:00Z'))).toBe('2024-01-31 10:00:00.000');
    expect(formatTimestamp(utc('2024-01-31T10:00:00.007Z'))).toBe('2024-01-31 10:00:00.007');
    expect(formatTimestamp(0)).toBe('1970-01-01 00:00:00.000');
  });

  it('is what toISOString writes, for any time value (fractions, years past 9999, before 0000, day edges)', () => {
    const reference = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
    const edges = [-1, 0, 86_399_999, 86_400_000, -86_400_000, -0.5, 0.5, 1.999, utc('0000-01-01T00:00:00Z'), utc('0000-01-01T00:00:00Z') - 1, utc('9999-12-31T23:59:59.999Z'), utc('9999-12-31T23:59:59.999Z') + 1, 8.64e15, -8.64e15];
    for (const ms of edges) expect(formatTimestamp(ms)).toBe(reference(ms));
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }), fc.integer({ min: 0, max: 4e12 })), (ms) => {
        expect(formatTimestamp(ms)).toBe(reference(ms));
      }),
      { numRuns: 5000 },
    );
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });

  it('round-trips through parseTimestamp', () => {
    fc.assert(
      fc.property(fc.integer({ min: utc('0001-01-01T00:00:00Z'), max: utc('9999-12-31T23:59:59.999Z') }), (ms) => {
        const text = formatTimestamp(ms);
        expect(text).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
        expect(parseTimestamp(text)).toBe(ms);
      }),
    );
  });

  it('formatOptionalTimestamp passes null and undefined through', () => {
    expect(formatOptionalTimestamp(null)).toBeNull();
    expect(formatOptionalTimestamp(undefined)).toBeNull();
    expect(formatOptionalTimestamp(1000)).toBe('1970-01-01 00:00:01.000');
  });
});
