/**
 * Brute-force search straight from the store, the oracle the core is checked against: every
 * chunk row is read from the store (SQLite or PostgreSQL), filters are evaluated per chunk in
 * plain code written independently of the shard's bitset evaluator, and BM25 is scored exhaustively.
 */
import { htmlToText } from '../../core/domain/html-text.js';
import { parseTimestamp } from '../../core/domain/time.js';
import { createAnalyzer, ENGLISH_STOP_WORDS } from '../../workers/shard/bm25/analyzer.js';
import { readStore, type StoreLocation } from './store-snapshot.js';

/** A chunk as the oracle sees it. */
export interface OracleChunk {
  id: string;
  trackingId: string | null;
  text: string;
  link: string | null;
  tags: string[];
  numValue: number | null;
  timeStamp: number | null;
  lat: number | null;
  lon: number | null;
  groupIds: string[];
  groupTrackingIds: string[];
  metadata: any;
}

/**
 * Reads every chunk of a dataset from the store, by id. A chunk's groups come in the order the
 * store gives them to the core (created_at, then id: groupsOfChunks), which group-oriented
 * results follow where two groups first appear at the same chunk.
 */
export async function loadChunks(loc: StoreLocation, datasetId: string): Promise<OracleChunk[]> {
  const { rows, groups } = await readStore(loc, async (query) => ({
    rows: await query<any>('SELECT * FROM chunks WHERE dataset_id = ? ORDER BY id', datasetId),
    groups: await query<{ chunk_id: string; id: string; tracking_id: string | null }>(
      'SELECT m.chunk_id, g.id, g.tracking_id FROM chunk_group_members m JOIN chunk_groups g ON g.id = m.group_id WHERE g.dataset_id = ? ORDER BY g.created_at, g.id, m.chunk_id',
      datasetId,
    ),
  }));
  return rows.map((r) => ({
    id: r.id,
    trackingId: r.tracking_id,
    text: r.fulltext_content ?? (r.convert_html_to_text ? htmlToText(r.chunk_html ?? '') : (r.chunk_html ?? '')),
    link: r.link,
    tags: JSON.parse(r.tag_set),
    numValue: r.num_value,
    timeStamp: r.time_stamp,
    lat: r.lat,
    lon: r.lon,
    groupIds: groups.filter((g) => g.chunk_id === r.id).map((g) => g.id),
    groupTrackingIds: groups.filter((g) => g.chunk_id === r.id && g.tracking_id).map((g) => g.tracking_id!),
    metadata: r.metadata === null ? null : JSON.parse(r.metadata),
  }));
}

const inRange = (x: number, r: any): boolean =>
  (r.gt == null || x > r.gt) && (r.gte == null || x >= r.gte) && (r.lt == null || x < r.lt) && (r.lte == null || x <= r.lte);

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(a)));
}

function fieldValues(c: OracleChunk, field: string): unknown[] {
  switch (field) {
    case 'tag_set':
      return c.tags;
    case 'link':
      return c.link === null ? [] : [c.link];
    case 'tracking_id':
      return c.trackingId === null ? [] : [c.trackingId];
    case 'num_value':
      return c.numValue === null ? [] : [c.numValue];
    case 'group_ids':
      return c.groupIds;
    case 'group_tracking_ids':
      return c.groupTrackingIds;
    default: {
      let vals: unknown[] = [c.metadata];
      for (const k of field.slice('metadata.'.length).split('.')) {
        vals = vals.flatMap((v) => (v && typeof v === 'object' && !Array.isArray(v) && k in v ? [(v as any)[k]] : []));
      }
      return vals.flatMap((v) => (Array.isArray(v) ? v : [v]));
    }
  }
}

const same = (a: unknown, b: unknown): boolean => (typeof b === 'number' ? a === b || (typeof a === 'string' && a.trim() !== '' && Number(a) === b) : typeof a === 'string' || typeof a === 'boolean' ? a === b || (typeof a !== 'string' && String(a) === b) : typeof a === 'number' ? String(a) === b : false);
const substring = (a: unknown, b: unknown): boolean => (typeof b === 'string' ? (typeof a === 'string' ? a.includes(b) : typeof a === 'number' || typeof a === 'boolean' ? String(a).includes(b) : false) : same(a, b));

/** Whether one wire-format condition (as sent in the request body) holds for a chunk. */
export function conditionHolds(c: OracleChunk, cond: any): boolean {
  if (!('field' in cond)) {
    return (cond.ids ?? []).includes(c.id) || (c.trackingId !== null && (cond.tracking_ids ?? []).includes(c.trackingId));
  }
  const f = cond.field as string;
  if (f === 'content') {
    // Every word of a value (analyzed like the index) occurs in the text; match_all needs every value.
    const words = new Set(analyzer.analyze(c.text));
    const has = (v: string): boolean => {
      const w = analyzer.analyze(v);
      return w.length > 0 && w.every((x) => words.has(x));
    };
    if (cond.match_all?.length && !cond.match_any?.length) return cond.match_all.every(has);
    return (cond.match_any?.length ? cond.match_any : (cond.match ?? [])).some(has);
  }
  if (cond.geo_radius) return c.lat !== null && haversine(cond.geo_radius.center.lat, cond.geo_radius.center.lon, c.lat, c.lon!) <= cond.geo_radius.radius;
  if (cond.geo_bounding_box) {
    const { top_left: tl, bottom_right: br } = cond.geo_bounding_box;
    return c.lat !== null && c.lat <= tl.lat && c.lat >= br.lat && c.lon! >= tl.lon && c.lon! <= br.lon;
  }
  if (f === 'time_stamp') {
    const r = Object.fromEntries(Object.entries(cond.date_range).map(([k, v]) => [k, parseTimestamp(v as string)]));
    return c.timeStamp !== null && inRange(c.timeStamp, r);
  }
  const vals = fieldValues(c, f);
  if (cond.range) return vals.some((v) => typeof v === 'number' && inRange(v, cond.range));
  if (cond.boolean !== undefined) return vals.some((v) => v === cond.boolean);
  if (cond.match_any?.length) return cond.match_any.some((w: unknown) => vals.some((v) => same(v, w)));
  if (cond.match_all?.length) return cond.match_all.every((w: unknown) => vals.some((v) => same(v, w)));
  return (cond.match ?? []).some((w: unknown) => vals.some((v) => substring(v, w)));
}

/** Whether a wire-format ChunkFilter holds for a chunk. */
export function filterHolds(c: OracleChunk, filter: any): boolean {
  if (!filter) return true;
  return (
    (filter.must ?? []).every((x: any) => conditionHolds(c, x)) &&
    !(filter.must_not ?? []).some((x: any) => conditionHolds(c, x)) &&
    ((filter.should ?? []).length === 0 || (filter.should ?? []).some((x: any) => conditionHolds(c, x)))
  );
}

const analyzer = createAnalyzer();

/** Stems of the stop words, which proximity pairs skip. */
const STOP_STEMS = new Set([...ENGLISH_STOP_WORDS].map((w) => analyzer.stem(w)));

/** Occurrences of content words a and b within 2 content positions of each other. */
function pairCount(content: string[], a: string, b: string): number {
  let n = 0;
  for (let i = 0; i < content.length; i++) {
    for (let j = i + 1; j <= i + 2 && j < content.length; j++) if ((content[i] === a && content[j] === b) || (content[i] === b && content[j] === a)) n++;
  }
  return n;
}

/**
 * Exhaustive BM25 (Lucene idf, k1 0.9, b 0.4) over every chunk, restricted by the filter; best
 * first, ties by id. With `fulltext`, plus 0.2 x BM25 of each adjacent pair of the query's
 * content words, a pair occurring where the two words are at most 2 content words apart.
 */
export function bruteForceBm25(chunks: OracleChunk[], query: string, filter: any, k1 = 0.9, b = 0.4, fulltext = false): { id: string; score: number }[] {
  const docs = chunks.map((c) => {
    const tokens = analyzer.analyze(c.text);
    return { c, tokens, content: tokens.filter((t) => !STOP_STEMS.has(t)) };
  });
  const n = docs.length;
  const total = docs.reduce((s, d) => s + d.tokens.length, 0);
  if (n === 0 || total === 0) return [];
  const avgdl = total / n;
  const terms = analyzer.analyze(query);
  const qc = terms.filter((t) => !STOP_STEMS.has(t));
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < qc.length; i++) if (qc[i] !== qc[i + 1]) pairs.push([qc[i]!, qc[i + 1]!]);
  const df = new Map<string, number>();
  for (const t of new Set(terms)) df.set(t, docs.filter((d) => d.tokens.includes(t)).length);
  const out: { id: string; score: number }[] = [];
  for (const d of docs) {
    if (!filterHolds(d.c, filter)) continue;
    let score = 0;
    let matched = false;
    for (const t of terms) {
      const tf = d.tokens.filter((x) => x === t).length;
      if (tf === 0) continue;
      matched = true;
      const idf = Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.tokens.length) / avgdl));
    }
    if (fulltext && matched) {
      const norm = k1 * (1 - b + (b * d.tokens.length) / avgdl);
      for (const [a, bb] of pairs) {
        const tf = pairCount(d.content, a, bb);
        if (tf === 0) continue;
        const pdf = docs.filter((x) => pairCount(x.content, a, bb) > 0).length;
        score += (0.2 * Math.log(1 + (n - pdf + 0.5) / (pdf + 0.5)) * tf * (k1 + 1)) / (tf + norm);
      }
    }
    if (matched) out.push({ id: d.c.id, score });
  }
  return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
}
