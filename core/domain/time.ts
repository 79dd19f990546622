/**
 * Timestamps on the wire are ISO 8601 date and time without a zone (`YYYY-MM-DD hh:mm:ss.SSS`).
 * Inputs may carry a `T` separator, a `Z` or an offset (converted to UTC), or be a bare date.
 * Internally a timestamp is epoch milliseconds (UTC).
 */

const INPUT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Parses a wire timestamp into epoch milliseconds, or returns undefined when it is not one. */
export function parseTimestamp(text: string): number | undefined {
  const m = INPUT.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Math.floor(Number(`0.${frac}`) * 1000);
  // Not Date.UTC: it maps years 0-99 to 1900-1999, while setUTCFullYear takes the year literally.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, ms);
  let epoch = check.getTime();
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    epoch -= sign * offset * 60_000;
  }
  return epoch;
}

const DAY_MS = 86_400_000;
/** The four-digit years toISOString writes plainly (outside them it writes `+YYYYYY`). */
const FIRST_PLAIN_MS = new Date('0000-01-01T00:00:00Z').getTime();
const AFTER_PLAIN_MS = Date.UTC(10_000, 0, 1);
/** The date part (`YYYY-MM-DD `) of the last day formatted: timestamps of one page mostly share it. */
let lastDay = Number.NaN;
let lastDate = '';

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Formats epoch milliseconds as the wire timestamp `YYYY-MM-DD hh:mm:ss.SSS` (UTC, no zone): the
 * time of day by arithmetic, the date from toISOString once per day (a search page formats 20,
 * and toISOString with its string edits was ~0.8 us each). Outside years 0000-9999, or for
 * NaN, exactly what toISOString gives (or throws).
 */
export function formatTimestamp(epochMs: number): string {
  const ms = Math.trunc(epochMs);
  if (!(ms >= FIRST_PLAIN_MS && ms < AFTER_PLAIN_MS)) return new Date(epochMs).toISOString().replace('T', ' ').slice(0, 23);
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10) + ' ';
    lastDay = day;
  }
  let t = ms - day * DAY_MS;
  const milli = t % 1000;
  t = (t - milli) / 1000;
  const second = t % 60;
  t = (t - second) / 60;
  const minute = t % 60;
  const hour = (t - minute) / 60;
  return `${lastDate}${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${pad3(milli)}`;
}

/** Formats epoch milliseconds or passes null through. */
export function formatOptionalTimestamp(epochMs: number | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : formatTimestamp(epochMs);
}
