/**
 * What the search features add to a SciFact bm25 search through HTTP (not a test): highlights
 * on and off (exactmatch and v1), typo correction on clean and on misspelled queries (with how
 * often the misspelling was put right), and autocomplete per keystroke. One client, the 300 test
 * queries; starts its own stack from dist/ (run `npm run build` first).
 *
 *   npx tsx bench/scifact-features.ts [--rounds N]
 */
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { quantile } from './lib/metrics.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { machine, post, startBenchStack } from './lib/spawn-stack.js';

const roundsArg = process.argv.indexOf('--rounds');
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;

/** A deterministic misspelling: the two middle letters of the query's longest word swapped. */
function misspell(query: string): { text: string; word: string } | null {
  const words = query.split(/\s+/);
  let best = -1;
  words.forEach((w, i) => {
    if (/^[a-z]{6,}$/.test(w) && (best < 0 || w.length > words[best]!.length)) best = i;
  });
  if (best < 0) return null;
  const w = words[best]!;
  const m = Math.floor(w.length / 2);
  const wrong = w.slice(0, m - 1) + w[m] + w[m - 1] + w.slice(m + 1);
  if (wrong === w) return null;
  words[best] = wrong;
  return { text: words.join(' '), word: w };
}

const data = loadSciFact();
const qrels = loadQrels('test');
const queries = [...qrels.keys()].map((q) => data.queries.get(q)!);
// No embedding in the background: these are lexical searches and the model would take the CPU.
const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false' });
try {
  const { headers } = await ingestSciFact(stack.baseUrl, stack.adminKey, data.docs);

  /**
   * p50/p99 in ms of each variant (a body per query), after one warm-up pass. Variants are
   * interleaved query by query so that warm-up and caches favour none of them.
   */
  const measureVariants = async (path: string, variants: Record<string, unknown>[][]): Promise<{ p50: number; p99: number; replies: any[] }[]> => {
    const lat = variants.map(() => [] as number[]);
    const replies = variants.map(() => [] as any[]);
    for (const v of variants) for (const b of v) await post(stack.baseUrl, path, b, headers);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < variants[0]!.length; i++) {
        for (let k = 0; k < variants.length; k++) {
          const t = process.hrtime.bigint();
          const reply = await post(stack.baseUrl, path, variants[k]![i]!, headers);
          lat[k]!.push(Number(process.hrtime.bigint() - t) / 1e6);
          if (r === rounds - 1) replies[k]!.push(reply);
        }
      }
    }
    return lat.map((l, k) => {
      l.sort((x, y) => x - y);
      return { p50: quantile(l, 0.5), p99: quantile(l, 0.99), replies: replies[k]! };
    });
  };
  const measure = async (path: string, bodies: Record<string, unknown>[]) => (await measureVariants(path, [bodies]))[0]!;
  const row = (what: string, m: { p50: number; p99: number }, note = '') => console.log(`| ${what} | ${m.p50.toFixed(2)} ms | ${m.p99.toFixed(2)} ms | ${note} |`);

  console.log(`machine: ${machine()}`);
  console.log(`data: SciFact BEIR, ${data.docs.length} docs (title + text), ${queries.length} test queries, bm25, page_size 10, one client, ${rounds} rounds`);
  console.log('| request | HTTP p50 | HTTP p99 | note |\n|---|---|---|---|');
  const base = (q: string) => ({ query: q, search_type: 'bm25', page_size: 10 });
  const typo = { correct_typos: true };
  const [plain, exact, v1, fulltext, clean] = await measureVariants('/api/chunk/search', [
    queries.map(base),
    queries.map((q) => ({ ...base(q), highlight_options: {} })),
    queries.map((q) => ({ ...base(q), highlight_options: { highlight_strategy: 'v1' } })),
    queries.map((q) => ({ ...base(q), search_type: 'fulltext' })),
    queries.map((q) => ({ ...base(q), typo_options: typo })),
  ]);
  row('bm25, no highlights', plain!);
  row('bm25 + highlights (exactmatch)', exact!);
  row('bm25 + highlights (v1)', v1!);
  row('fulltext', fulltext!);
  const changed = clean!.replies.filter((r) => r.corrected_query !== null).length;
  row('bm25 + typo correction, clean queries', clean!, `${changed}/${queries.length} queries changed`);
  const wrong = queries.map((q) => ({ q, m: misspell(q.toLowerCase()) })).filter((x) => x.m !== null);
  const [misspelledPlain, misspelled] = await measureVariants('/api/chunk/search', [
    wrong.map((x) => base(x.m!.text)),
    wrong.map((x) => ({ ...base(x.m!.text), typo_options: { ...typo, two_typo_word_range: { min: 5 } } })),
  ]);
  const fixed = misspelled!.replies.filter((r, i) => typeof r.corrected_query === 'string' && r.corrected_query.split(/\s+/).includes(wrong[i]!.m!.word)).length;
  row('bm25, one misspelled word, no correction', misspelledPlain!, `${wrong.length} queries`);
  row('bm25 + typo correction, one misspelled word', misspelled!, `the word restored in ${fixed}/${wrong.length}; two_typo_word_range min 5, no max`);
  const keystrokes: Record<string, unknown>[] = [];
  for (const q of queries.slice(0, 100)) {
    const text = q.split(/\s+/).slice(0, 3).join(' ');
    for (let n = 3; n <= text.length; n++) keystrokes.push({ query: text.slice(0, n), search_type: 'bm25', page_size: 10 });
  }
  row('autocomplete per keystroke', await measure('/api/chunk/autocomplete', keystrokes), `${keystrokes.length} prefixes of the first 3 words of 100 queries`);
} finally {
  await stack.stop();
}
