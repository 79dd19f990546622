/** Seeded random chunks, queries and filters for the search oracle tests. */

/** mulberry32: a small seeded PRNG (deterministic across runs and machines). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'protein', 'cells', 'running', 'runner', 'quick', 'fox', 'the', 'of', 'cancer', 'gene', 'genes', 'mice', 'trial', 'dose', 'brain', 'heart', 'virus', 'vaccine', 'study', 'results'];
const TAGS = ['red', 'green', 'blue', 'cyan', 'magenta', 'yellow-green'];
const COLORS = ['amber', 'bronze', 'coral', 'denim'];

/** Random chunk creation payloads (wire format). */
export function randomChunks(n: number, seed: number): Record<string, unknown>[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 2 + Math.floor(r() * 14) }, () => pick(WORDS));
    const tags = TAGS.filter(() => r() < 0.3);
    return {
      tracking_id: `doc-${i}`,
      chunk_html: r() < 0.5 ? `<p>${words.join(' ')}</p>` : words.join(' '),
      tag_set: tags,
      num_value: r() < 0.8 ? Math.round(r() * 1000) / 10 : null,
      time_stamp: r() < 0.8 ? new Date(Date.UTC(2020, 0, 1) + Math.floor(r() * 1500) * 86_400_000).toISOString() : null,
      location: r() < 0.7 ? { lat: 40 + r() * 10, lon: -5 + r() * 10 } : null,
      link: r() < 0.5 ? `https://example.com/${pick(['a', 'b', 'c'])}/${i}` : null,
      metadata: { color: pick(COLORS), size: Math.floor(r() * 10), nested: { flag: r() < 0.5 } },
      group_tracking_ids: r() < 0.5 ? [pick(['g1', 'g2', 'g3'])] : [],
    };
  });
}

/** A random query of 1-3 words (sometimes with a word that no document has). */
export function randomQuery(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = 1 + Math.floor(r() * 3);
  return Array.from({ length: n }, () => (r() < 0.1 ? 'zzzunknown' : pick(WORDS))).join(' ');
}

/** A random wire-format field condition over the random corpus' fields. */
export function randomCondition(r: () => number, ids: string[]): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const lo = Math.round(r() * 60);
  switch (Math.floor(r() * 13)) {
    case 0:
      return { field: 'tag_set', match_any: [pick(TAGS), pick(TAGS)] };
    case 1:
      return { field: 'tag_set', match_all: [pick(TAGS), pick(TAGS)] };
    case 2:
      return { field: 'tag_set', match: [pick(['gree', 'ed', 'e'])] };
    case 3:
      return { field: 'num_value', range: r() < 0.5 ? { gte: lo, lt: lo + 30 } : { gt: lo } };
    case 4:
      return { field: 'time_stamp', date_range: { gte: '2021-01-01 00:00:00', lte: `202${1 + Math.floor(r() * 3)}-06-30T00:00:00` } };
    case 5:
      return { field: 'location', geo_radius: { center: { lat: 45, lon: 0 }, radius: 100_000 + r() * 400_000 } };
    case 6:
      return { field: 'location', geo_bounding_box: { top_left: { lat: 48, lon: -2 }, bottom_right: { lat: 42, lon: 3 } } };
    case 7:
      return { field: 'metadata.color', match_any: [pick(COLORS)] };
    case 8:
      return { field: 'metadata.size', range: { lte: Math.floor(r() * 10) } };
    case 9:
      return { field: 'metadata.nested.flag', boolean: r() < 0.5 };
    case 10:
      return { field: 'group_tracking_ids', match_any: [pick(['g1', 'g2', 'g3', 'nope'])] };
    case 11:
      return { field: 'link', match: [pick(['/a/', '/b/', 'example'])] };
    default:
      return r() < 0.5 ? { ids: ids.filter(() => r() < 0.2) } : { tracking_ids: [`doc-${Math.floor(r() * 50)}`, `doc-${Math.floor(r() * 50)}`] };
  }
}

/** A random ChunkFilter of 1-3 conditions spread over must, must_not and should. */
export function randomFilter(r: () => number, ids: string[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const clause = ['must', 'must_not', 'should'][Math.floor(r() * 3)]!;
    (out[clause] ??= []).push(randomCondition(r, ids));
  }
  return out;
}
