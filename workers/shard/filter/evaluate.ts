/**
 * Evaluates a filter AST into a bitset over a shard's internal ids. Index-backed fields (tags,
 * groups, links, tracking ids, ids) union posting sets; columns (numbers, time, location) and
 * metadata are scanned. The core has validated the AST's meaning; this code only asserts.
 */
import { CLAUSES, inRange, plainValue, type Condition, type FieldCondition, type Filter, type Value } from '../../../core/domain/filter.js';
import { matchesValues, metadataMatcher } from '../../../core/domain/value-match.js';
import { Bitset } from '../bm25/bitset.js';
import { checkStop } from '../task-stop.js';
import type { FieldStore } from './field-store.js';
import type { KeyedPostings } from './keyed-postings.js';
import { haversineMeters, inBox, inRing } from './geo.js';

/** Resolves a chunk id to this shard's internal id. */
export type IdLookup = (chunkId: string) => number | undefined;

/**
 * The documents whose text contains every word of `value` (the `content` field), the last word
 * also as a prefix of longer words when `prefixLastWord`.
 */
export type TextLookup = (value: string, prefixLastWord: boolean) => Bitset;

/** Ids of every live document (a copy of the field store's live words: one memcpy, no scan). */
export function liveSet(fields: FieldStore, capacity: number): Bitset {
  const n = (capacity + 31) >>> 5;
  const words = new Uint32Array(n);
  words.set(fields.aliveWords.subarray(0, Math.min(n, fields.aliveWords.length)));
  // Ids at or past capacity are never members: clear the tail bits of the last word.
  if (capacity & 31 && n > 0) words[n - 1]! &= (1 << (capacity & 31)) - 1;
  return new Bitset(capacity, words);
}

/** The set of live ids that pass `filter`; null when the filter has no condition (everything passes). */
export function evaluateFilter(filter: Filter | null, fields: FieldStore, capacity: number, lookup: IdLookup, text?: TextLookup): Bitset | null {
  if (!filter) return null;
  const has = CLAUSES.some((c) => (filter[c]?.length ?? 0) > 0);
  if (!has) return null;
  const result = liveSet(fields, capacity);
  for (const cond of filter.must ?? []) result.and(evaluateCondition(cond, fields, capacity, lookup, text));
  for (const cond of filter.must_not ?? []) result.andNot(evaluateCondition(cond, fields, capacity, lookup, text));
  if ((filter.should?.length ?? 0) > 0) {
    const any = new Bitset(capacity);
    for (const cond of filter.should!) any.or(evaluateCondition(cond, fields, capacity, lookup, text));
    result.and(any);
  }
  return result;
}

function evaluateCondition(cond: Condition, fields: FieldStore, capacity: number, lookup: IdLookup, text?: TextLookup): Bitset {
  const out = new Bitset(capacity);
  const hasId = cond.kind === 'has_id' || (cond.kind === undefined && cond.has_id) ? cond.has_id : null;
  if (hasId) {
    for (const cid of hasId.ids ?? []) {
      checkStop();
      const id = lookup(cid);
      if (id !== undefined && id < capacity) out.set(id);
    }
    for (const tid of hasId.tracking_ids ?? []) {
      checkStop();
      fields.trackingIds.orInto(tid, out);
    }
    return out;
  }
  const field = cond.field;
  if (!field) throw new Error('condition without field or has_id');
  if (field.field === 'content') {
    // Words, not substrings, as a full-text index matches them: every word of a value must occur.
    if (!text) throw new Error('content condition without a text index');
    const all = (field.match_all?.length ?? 0) > 0 && !((field.match_any?.length ?? 0) > 0);
    const values = texts(all ? field.match_all! : (field.match_any?.length ?? 0) > 0 ? field.match_any! : (field.match ?? []));
    values.forEach((v, i) => {
      // A word lookup allocates a bitset over the shard: count it as a scan's worth of work.
      checkStop(64);
      const hits = text(v, field.prefix_last_word === true);
      if (all && i > 0) out.and(hits);
      else out.or(hits);
    });
    return out;
  }
  fieldCondition(field, fields, capacity, out);
  return out;
}

/** Sets in `out` every id holding one of `keys` (union). */
function unionPostings(index: KeyedPostings, keys: Iterable<string>, out: Bitset): void {
  for (const key of keys) {
    checkStop();
    index.orInto(key, out);
  }
}

/** Calls `fn` for every live id below capacity. */
function scan(fields: FieldStore, capacity: number, fn: (id: number) => boolean, out: Bitset): void {
  const n = Math.min(capacity, fields.capacity);
  const alive = fields.alive;
  for (let id = 0; id < n; id++) {
    // Polled here and in matchValues: a predicate over a large match_any costs a value per step.
    checkStop();
    if (alive[id] === 1 && fn(id)) out.set(id);
  }
}

const texts = (values: readonly Value[]): string[] => values.map((v) => String(plainValue(v)));

/** Evaluates a match/match_any/match_all predicate over a multi-valued field (polls the task's stop first). */
function matchValues(values: readonly unknown[], cond: FieldCondition): boolean {
  checkStop((cond.match_any?.length ?? 0) + (cond.match_all?.length ?? 0) + (cond.match?.length ?? 0));
  return matchesValues(values, cond);
}

function fieldCondition(cond: FieldCondition, fields: FieldStore, capacity: number, out: Bitset): void {
  const name = cond.field;
  if (cond.geo_radius || cond.geo_bounding_box || cond.geo_polygon) {
    const { lat, lon } = fields;
    // Columns are allocated with their first value: an id past the end has no location.
    const has = (id: number): boolean => id < lat.length && !Number.isNaN(lat[id]!);
    if (cond.geo_radius) {
      const { center, radius } = cond.geo_radius;
      scan(fields, capacity, (id) => has(id) && haversineMeters(center.lat, center.lon, lat[id]!, lon[id]!) <= radius, out);
    } else if (cond.geo_bounding_box) {
      const { top_left: tl, bottom_right: br } = cond.geo_bounding_box;
      scan(fields, capacity, (id) => has(id) && inBox(lat[id]!, lon[id]!, tl.lat, tl.lon, br.lat, br.lon), out);
    } else {
      const poly = cond.geo_polygon!;
      scan(
        fields,
        capacity,
        (id) =>
          has(id) &&
          inRing(lat[id]!, lon[id]!, poly.exterior.points) &&
          !(poly.interiors ?? []).some((ring) => inRing(lat[id]!, lon[id]!, ring.points)),
        out,
      );
    }
    return;
  }
  if (name.startsWith('metadata.')) {
    const path = name.slice('metadata.'.length).split('.');
    // A long list of match values costs a step per value at each id, as matchValues counts it.
    const weight = (cond.match_any?.length ?? 0) + (cond.match_all?.length ?? 0) + (cond.match?.length ?? 0);
    const test = metadataMatcher(path, cond);
    if (weight === 0) scan(fields, capacity, (id) => test(fields.metadata(id)), out);
    else {
      scan(
        fields,
        capacity,
        (id) => {
          checkStop(weight);
          return test(fields.metadata(id));
        },
        out,
      );
    }
    return;
  }
  switch (name) {
    case 'tag_set':
    case 'group_ids': {
      const index = name === 'tag_set' ? fields.tags : fields.groups;
      if (cond.match_any && cond.match_any.length > 0) {
        unionPostings(index, texts(cond.match_any), out);
      } else if (cond.match_all && cond.match_all.length > 0) {
        const wanted = texts(cond.match_all);
        index.forEach(wanted[0]!, (id) => {
          checkStop(wanted.length);
          if (id < capacity && wanted.every((w) => index.has(w, id))) out.set(id);
        });
      } else {
        const wanted = texts(cond.match ?? []);
        unionPostings(index, [...index.keys()].filter((k) => wanted.some((w) => k.includes(w))), out);
      }
      return;
    }
    case 'link':
      if (cond.match_any || cond.match_all) {
        const exact = cond.match_any && cond.match_any.length > 0;
        if (exact || (cond.match_all?.length ?? 0) > 0) {
          const wanted = texts(exact ? cond.match_any : cond.match_all!);
          // A chunk has one link, so match_all holds only when every value is that link.
          if (exact || new Set(wanted).size === 1) unionPostings(fields.links, exact ? wanted : wanted.slice(0, 1), out);
          return;
        }
      }
      scan(fields, capacity, (id) => matchValues(fields.links.keysOf(id), cond), out);
      return;
    case 'tracking_id':
      scan(fields, capacity, (id) => matchValues(fields.trackingIds.keysOf(id), cond), out);
      return;
    case 'num_value': {
      const col = fields.numValue;
      if (cond.range) {
        const r = cond.range;
        scan(fields, capacity, (id) => id < col.length && !Number.isNaN(col[id]!) && inRange(col[id]!, r), out);
      } else {
        scan(fields, capacity, (id) => id < col.length && !Number.isNaN(col[id]!) && matchValues([col[id]], cond), out);
      }
      return;
    }
    case 'time_stamp': {
      const col = fields.timeStamp;
      const r = cond.date_range ?? cond.range;
      if (!r) throw new Error('time_stamp needs date_range or range');
      // date_range bounds are epoch ms; a plain range on time_stamp is in unix seconds, as in the reference.
      const scale = cond.date_range ? 1 : 1000;
      scan(fields, capacity, (id) => id < col.length && !Number.isNaN(col[id]!) && inRange(col[id]! / scale, r), out);
      return;
    }
    default:
      throw new Error(`unsupported filter field ${name}`);
  }
}
