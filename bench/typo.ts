/**
 * Typo correction at scale (not a test): builds a shard `Vocabulary` from the synthetic Zipf
 * corpus and from SciFact, then times plan + lookup + decision for 5-word queries, clean and with
 * 1-2 typos per word, as the core will run them against one shard holding the whole vocabulary.
 * Also times a BK-tree (the reference's structure) on the same words, for the record.
 *
 *   npx tsx --expose-gc bench/typo.ts                      # 1,000,000 synthetic chunks + SciFact
 *   npx tsx --expose-gc bench/typo.ts --docs 50000 --queries 500 --no-scifact
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { decideCorrections, planTypoLookups } from '../core/typo/correct.js';
import { isLikelyEnglish, loadEnglishDictionary } from '../core/typo/english.js';
import { resolveTypoOptions, type TypoOptions } from '../core/typo/options.js';
import { Vocabulary } from '../workers/shard/typo/vocabulary.js';
import { quantile } from './lib/metrics.js';
import { loadSciFact } from './lib/scifact.js';
import { DEFAULT_SYNTHETIC_OPTIONS, sfc32, syntheticCorpus } from './lib/synthetic.js';

const gc = (globalThis as { gc?: () => void }).gc;

function memory(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** `w` with 1 or 2 random edits (substitute, insert, delete, transpose), never on the first letter. */
function misspell(w: string, edits: number, rand: () => number): string {
  let s = w;
  for (let e = 0; e < edits; e++) {
    const at = 1 + Math.floor(rand() * Math.max(1, s.length - 1));
    const c = LETTERS[Math.floor(rand() * 26)]!;
    const kind = Math.floor(rand() * 4);
    if (kind === 0) s = s.slice(0, at) + c + s.slice(at + 1);
    else if (kind === 1) s = s.slice(0, at) + c + s.slice(at);
    else if (kind === 2 && s.length > 2) s = s.slice(0, at) + s.slice(at + 1);
    else if (at + 1 < s.length) s = s.slice(0, at) + s[at + 1] + s[at] + s.slice(at + 2);
    else s = s + c;
  }
  return s === w ? misspell(w, edits, rand) : s;
}

interface QuerySet {
  name: string;
  queries: string[];
  /** Per query: the intended words (to score corrections), empty for clean queries. */
  truth: string[][];
}

function querySets(pool: string[], n: number, seed: number): QuerySet[] {
  const rand = sfc32(seed);
  const pick = (): string => pool[Math.floor(rand() * pool.length)]!;
  const clean: QuerySet = { name: 'clean (5 dataset words)', queries: [], truth: [] };
  const typos: QuerySet = { name: 'typos (1-2 edits in each of 5 words)', queries: [], truth: [] };
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 5 }, pick);
    clean.queries.push(words.join(' '));
    clean.truth.push([]);
    typos.queries.push(words.map((w) => misspell(w, 1 + Math.floor(rand() * 2), rand)).join(' '));
    typos.truth.push(words);
  }
  return [clean, typos];
}

function timeQueries(vocab: Vocabulary, options: TypoOptions, set: QuerySet): string {
  const times = new Float64Array(set.queries.length);
  let restored = 0;
  let wrong = 0;
  let total = 0;
  let lookups = 0;
  // Warm-up pass (JIT), then the timed pass.
  for (const q of set.queries.slice(0, 200)) {
    const plan = planTypoLookups(q, options);
    decideCorrections(plan, vocab.answer(plan.lookups));
  }
  set.queries.forEach((q, i) => {
    const t = performance.now();
    const plan = planTypoLookups(q, options);
    const result = decideCorrections(plan, vocab.answer(plan.lookups));
    times[i] = performance.now() - t;
    lookups += plan.lookups.length;
    const truth = set.truth[i]!;
    if (truth.length === 0) return;
    const got = (result.correctedQuery ?? q).split(' ');
    const typed = q.split(' ');
    truth.forEach((w, j) => {
      total++;
      if (got[j] === w) restored++;
      else if (got[j] !== typed[j]) wrong++;
    });
  });
  times.sort();
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const quality = total > 0 ? `; words restored ${((100 * restored) / total).toFixed(1)}%, miscorrected ${((100 * wrong) / total).toFixed(1)}%` : '';
  return (
    `    ${set.name.padEnd(38)} p50 ${fmt(quantile(times, 0.5))}, p99 ${fmt(quantile(times, 0.99))}, mean ${fmt(mean)} ` +
    `(${(lookups / set.queries.length).toFixed(1)} lookups/query${quality})`
  );
}

/** Minimal BK-tree (Levenshtein) over the same words: the reference's structure, for comparison. */
class BkTree {
  private readonly words: string[] = [];
  private readonly children: Map<number, number>[] = [];
  add(w: string): void {
    this.words.push(w);
    this.children.push(new Map());
    const id = this.words.length - 1;
    if (id === 0) return;
    let node = 0;
    for (;;) {
      const d = levenshtein(this.words[node]!, w);
      const next = this.children[node]!.get(d);
      if (next === undefined) return void this.children[node]!.set(d, id);
      node = next;
    }
  }
  find(w: string, k: number): { hits: number; visited: number } {
    let hits = 0;
    let visited = 0;
    const stack = this.words.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const node = stack.pop()!;
      visited++;
      const d = levenshtein(this.words[node]!, w);
      if (d <= k) hits++;
      for (const [arc, child] of this.children[node]!) if (arc >= d - k && arc <= d + k) stack.push(child);
    }
    return { hits, visited };
  }
}

const row = new Int32Array(256);
function levenshtein(a: string, b: string): number {
  for (let j = 0; j <= b.length; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

function compareBkTree(vocab: Vocabulary, typoWords: string[], minCount: number): string {
  const tree = new BkTree();
  const t0 = performance.now();
  let nodes = 0;
  for (const [w, c] of vocab.entries()) {
    if (c < minCount) continue;
    tree.add(w);
    nodes++;
  }
  const buildMs = performance.now() - t0;
  let bkMs = 0;
  let symMs = 0;
  let visited = 0;
  for (const w of typoWords) {
    let t = performance.now();
    const bk = tree.find(w, 2);
    bkMs += performance.now() - t;
    visited += bk.visited;
    t = performance.now();
    const sym = vocab.lookup(w, 2).filter((m) => m.count >= minCount);
    symMs += performance.now() - t;
    if (sym.length !== bk.hits) throw new Error(`BK-tree and deletion index disagree on ${w}: ${bk.hits} vs ${sym.length}`);
  }
  const n = typoWords.length;
  return (
    `  distance-2 lookup of one misspelled word, mean over ${n}: deletion index ${fmt(symMs / n)}, ` +
    `BK-tree ${fmt(bkMs / n)} (visits ${((100 * visited) / n / nodes).toFixed(1)}% of ${nodes} nodes; built in ${(buildMs / 1000).toFixed(1)} s); same results`
  );
}

interface Settings {
  nQueries: number;
  seed: number;
  bk: boolean;
  prefixLength: number;
  minCount: number;
}

/** Builds a vocabulary from `texts` (tokenising + add timed), then reports memory, snapshot and query figures. */
function run(name: string, texts: Iterable<string[]>, st: Settings): void {
  const before = memory();
  const vocab = new Vocabulary({ prefixLength: st.prefixLength, minIndexedCount: st.minCount });
  let buildMs = 0;
  let tokens = 0;
  // Each batch is materialised before the clock starts: the rate is tokenising + add only.
  for (const batch of texts) {
    const t = performance.now();
    for (const text of batch) {
      const words = Vocabulary.wordsOf(text);
      tokens += words.length;
      vocab.add(words);
    }
    buildMs += performance.now() - t;
  }
  report(name, vocab, buildMs, tokens, memory() - before, st);
}

function report(name: string, vocab: Vocabulary, buildMs: number, tokens: number, bytes: number, st: Settings): void {
  const { nQueries, seed, bk } = st;
  let once = 0;
  for (const [, c] of vocab.entries()) if (c < st.minCount) once++;
  const self = vocab.memoryBytes();
  console.log(`${name}: ${vocab.size} distinct words (${once} below min indexed count ${st.minCount}) from ${tokens} word occurrences, built in ${(buildMs / 1000).toFixed(2)} s (${((tokens / buildMs) * 1000 / 1e6).toFixed(2)} M words/s, tokenising included)`);
  console.log(
    `  memory: ${(bytes / 1e6).toFixed(1)} MB measured after GC = ${(bytes / vocab.size).toFixed(0)} bytes/word ` +
      `(arrays ${(self / 1e6).toFixed(1)} MB = ${(self / vocab.size).toFixed(0)} bytes/word)`,
  );
  let t = performance.now();
  const snap = vocab.toBytes();
  const saveMs = performance.now() - t;
  t = performance.now();
  const back = Vocabulary.fromBytes(snap);
  const loadMs = performance.now() - t;
  console.log(`  snapshot: ${(snap.length / 1e6).toFixed(2)} MB (${(snap.length / vocab.size).toFixed(1)} bytes/word), toBytes ${fmt(saveMs)}, fromBytes (rebuilds the index) ${fmt(loadMs)}`);
  if (back.size !== vocab.size) throw new Error('snapshot lost words');

  // Query words: dataset words of 5+ letters seen in 2+ chunks that are not likely English
  // (English words are skipped before any lookup, so they would only flatter the figures).
  const pool: string[] = [];
  for (const [w, c] of vocab.entries()) if (c >= 2 && w.length >= 5 && /^[a-z]+$/.test(w) && !isLikelyEnglish(w)) pool.push(w);
  console.log(`  query words drawn uniformly from ${pool.length} dataset words (5+ ASCII letters, in 2+ chunks, not likely English)`);
  const defaults = resolveTypoOptions({ correct_typos: true })!;
  const wide = resolveTypoOptions({ correct_typos: true, two_typo_word_range: { min: 5, max: null } })!;
  for (const [label, options] of [
    ['default options (1-2 edits for 5-8 letters)', defaults],
    ['two_typo_word_range {min 5} (2 edits for every word of 5+ letters)', wide],
  ] as const) {
    console.log(`  ${label}, ${nQueries} queries of 5 words:`);
    for (const set of querySets(pool, nQueries, seed)) console.log(timeQueries(vocab, options, set));
  }
  if (bk) {
    const rand = sfc32(seed + 1);
    const words = Array.from({ length: 200 }, () => misspell(pool[Math.floor(rand() * pool.length)]!, 1 + Math.floor(rand() * 2), rand));
    console.log(compareBkTree(vocab, words, st.minCount));
  }
}

function* batches<T>(items: Iterable<T>, size: number, f: (t: T) => string): Generator<string[]> {
  let batch: string[] = [];
  for (const item of items) {
    batch.push(f(item));
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.docs) },
      queries: { type: 'string', default: '2000' },
      seed: { type: 'string', default: String(DEFAULT_SYNTHETIC_OPTIONS.seed) },
      prefix: { type: 'string', default: '7' },
      'min-count': { type: 'string', default: '1' },
      'no-synthetic': { type: 'boolean', default: false },
      'no-scifact': { type: 'boolean', default: false },
      'no-bktree': { type: 'boolean', default: false },
    },
  });
  const docs = Number(values.docs);
  const st: Settings = {
    nQueries: Number(values.queries),
    seed: Number(values.seed),
    bk: !values['no-bktree'],
    prefixLength: Number(values.prefix),
    minCount: Number(values['min-count']),
  };
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, docs, seed: st.seed };
  const cpus = os.cpus();
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, node ${process.version}, ${os.platform()} ${os.arch()}, load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log(
    `vocabulary: SymSpell deletion index, prefix length ${st.prefixLength}, min indexed count ${st.minCount}, Levenshtein <= 2; ` +
      'one vocabulary holds the whole data set; latency = planTypoLookups + Vocabulary.answer + decideCorrections, one thread',
  );
  if (gc === undefined) console.log('note: run with --expose-gc for memory figures after GC');

  const t = performance.now();
  const dictBefore = memory();
  loadEnglishDictionary();
  console.log(`english dictionary (word-list): loaded in ${fmt(performance.now() - t)}, ${((memory() - dictBefore) / 1e6).toFixed(1)} MB\n`);

  if (!values['no-synthetic']) {
    console.log(
      `data: synthetic (bench/lib/synthetic.ts) ${docs} chunks, ${o.wordsPerDoc / 2}-${(3 * o.wordsPerDoc) / 2} words each, ` +
        `Zipf s=${o.zipfS} over ${o.vocabulary} pseudo-words, seed ${st.seed}`,
    );
    run('synthetic', batches(syntheticCorpus(o), 2000, (d) => d.text), st);
  }
  if (!values['no-scifact']) {
    const sf = loadSciFact();
    console.log(`\ndata: SciFact (BEIR) ${sf.docs.length} chunks (title + text), corpus sha256 ${sf.corpusSha256.slice(0, 12)}…`);
    const texts = sf.docs.map((d) => `${d.title} ${d.text}`);
    // Concatenations are cons strings that the first split flattens into new memory; flatten them
    // now (indexOf does) so the vocabulary's memory figure does not include SciFact's text.
    for (const text of texts) text.indexOf('\u0000');
    run('scifact', [texts], st);
  }
}

main();
