/**
 * Highlighting micro benchmark (not a test): for every SciFact test query of at most 20 words,
 * highlights each of its judged-relevant documents with the query and prints p50/p99 microseconds
 * per chunk for the `exactmatch` and `v1` strategies, on the abstract as plain text and wrapped in
 * html (which goes through the html offset map), plus how often a chunk got highlights. The data
 * is read from shared/data/scifact (sha256-pinned by bench/lib/scifact.ts), never copied here.
 *
 *   npx tsx bench/highlight.ts [--reps 5]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { escapeText } from 'entities';
import { DEFAULT_HIGHLIGHT_OPTIONS, HIGHLIGHT_QUERY_MAX_WORDS, highlightChunk, type HighlightOptions } from '../facade/highlight/index.js';
import { quantile } from './lib/metrics.js';
import { loadQrels, loadSciFact, scifactDir } from './lib/scifact.js';
import { machine } from './lib/spawn-stack.js';

interface Pair {
  query: string;
  html: string;
  words: number;
}

interface Row {
  p50: number;
  p99: number;
  mean: number;
  withHighlights: number;
  perChunk: number;
}

function run(pairs: readonly Pair[], options: HighlightOptions, reps: number): Row {
  let withHighlights = 0;
  let highlights = 0;
  // Untimed pass that counts the highlights (and warms this configuration up).
  for (const p of pairs) {
    const n = highlightChunk(p.html, p.query, options).highlights.length;
    highlights += n;
    if (n > 0) withHighlights++;
  }
  const lat = new Float64Array(pairs.length * reps);
  let k = 0;
  for (let r = 0; r < reps; r++) {
    for (const p of pairs) {
      const t = performance.now();
      highlightChunk(p.html, p.query, options);
      lat[k++] = (performance.now() - t) * 1000;
    }
  }
  lat.sort();
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  return { p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), mean, withHighlights: withHighlights / pairs.length, perChunk: highlights / pairs.length };
}

function main(): void {
  const { values } = parseArgs({ options: { reps: { type: 'string', default: '5' } } });
  const reps = Number(values.reps);
  const data = loadSciFact();
  const qrels = loadQrels('test');
  const byId = new Map(data.docs.map((d) => [d.id, d]));
  const plain: Pair[] = [];
  const html: Pair[] = [];
  let tooLong = 0;
  for (const [qid, judged] of qrels) {
    const query = data.queries.get(qid) ?? '';
    // Longer queries return at once without highlights; timing them would flatter the figures.
    if (query.split(/\s+/).filter(Boolean).length > HIGHLIGHT_QUERY_MAX_WORDS) {
      tooLong += judged.size;
      continue;
    }
    for (const [docId, grade] of judged) {
      const doc = byId.get(docId);
      if (doc === undefined || grade <= 0) continue;
      const words = doc.text.split(/\s+/).filter(Boolean).length;
      plain.push({ query, html: doc.text, words });
      html.push({ query, html: `<div><h3>${escapeText(doc.title)}</h3><p>${escapeText(doc.text)}</p></div>`, words });
    }
  }
  const words = plain.map((p) => p.words).sort((a, b) => a - b);
  console.log(`machine: ${machine()}`);
  console.log(
    `data: BEIR SciFact from ${scifactDir}, corpus sha256 ${data.corpusSha256.slice(0, 12)}...; test split: ${qrels.size} queries, ` +
      `${plain.length} (query, relevant doc) pairs timed (${tooLong} more skipped: query over ${HIGHLIGHT_QUERY_MAX_WORDS} words, no highlights by design); ` +
      `chunk = abstract, ${words[words.length >> 1]} words median, ${words[words.length - 1]} max; ` +
      `html variant = <div><h3>title</h3><p>abstract</p></div> with entities escaped; ${reps} timed passes after two warm-up passes of every configuration`,
  );
  console.log('\n| strategy | chunk | p50 µs | p99 µs | mean µs | chunks with highlights | highlights per chunk |');
  console.log('|---|---|---|---|---|---|---|');
  const strategies: [string, HighlightOptions][] = [
    ['exactmatch (defaults)', DEFAULT_HIGHLIGHT_OPTIONS],
    ['exactmatch, window 8', { ...DEFAULT_HIGHLIGHT_OPTIONS, window: 8 }],
    ['v1 (threshold 0.8, max_length 8)', { ...DEFAULT_HIGHLIGHT_OPTIONS, strategy: 'v1' }],
  ];
  const kinds = [['plain text', plain], ['html', html]] as const;
  // Warm every configuration up first, so the first row measured does not pay for the JIT.
  for (let w = 0; w < 2; w++) for (const [, options] of strategies) for (const [, pairs] of kinds) for (const p of pairs) highlightChunk(p.html, p.query, options);
  for (const [name, options] of strategies) {
    for (const [kind, pairs] of kinds) {
      const r = run(pairs, options, reps);
      console.log(
        `| ${name} | ${kind} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.mean.toFixed(1)} | ${(r.withHighlights * 100).toFixed(1)}% | ${r.perChunk.toFixed(2)} |`,
      );
    }
  }
}

main();
