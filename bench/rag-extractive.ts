/**
 * The extractive answerer on SciFact (a benchmark, not a test): for the first 100 judged test
 * claims (qrels file order), the top 5 BM25 abstracts from quarry's shard in-process are the
 * docs; the answer is scored by whether it cites at least one judged-relevant abstract. Run
 * lexical only, and with USE-Lite sentence vectors (`core/embed/use-lite.ts`). Also prints the
 * ceiling (a relevant abstract among the 5 docs), the baseline "cite doc 1", the answers without
 * a citation, and the latency of one answer (p50/p99, the retrieval not counted).
 *
 *   npx tsx bench/rag-extractive.ts [--claims 100] [--docs 5] [--threads N] [--no-dense] [--split test|train]
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { GenerationRequest, RagDoc } from '../core/domain/rag.js';
import { createEmbedder } from '../core/embed/embedder.js';
import { createProvider, type LlmDeps } from '../core/llm/provider.js';
import { quarryEngine } from './lib/compare-engines.js';
import { quantile } from './lib/metrics.js';
import { loadQrels, loadSciFact, scifactDir, type SciFactDoc } from './lib/scifact.js';

const { values: args } = parseArgs({
  options: {
    claims: { type: 'string', default: '100' },
    docs: { type: 'string', default: '5' },
    threads: { type: 'string', default: String(Math.max(1, os.cpus().length)) },
    'no-dense': { type: 'boolean', default: false },
    split: { type: 'string', default: 'test' },
  },
});
const CLAIMS = Number(args.claims);
const DOCS = Number(args.docs);
const SPLIT = args.split === 'train' ? 'train' : 'test';

/** One claim with its retrieved docs and judgements. */
interface Claim {
  readonly id: string;
  readonly text: string;
  /** Corpus ids of the docs, doc n = index + 1. */
  readonly docIds: readonly string[];
  readonly docs: readonly RagDoc[];
  readonly relevant: ReadonlySet<string>;
}

/** Figures of one configuration. */
interface Outcome {
  readonly name: string;
  readonly citesRelevant: number;
  readonly firstCiteRelevant: number;
  readonly noCitation: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly example: string;
}

function request(claim: Claim): GenerationRequest {
  return {
    ragType: 'chosen_chunks',
    systemPrompt: '',
    ragPrompt: '',
    docs: claim.docs,
    history: [],
    question: claim.text,
    imageUrls: [],
    includeLinks: false,
    images: { use: false, perChunk: 0 },
    options: { model: '', temperature: 0.5, frequencyPenalty: 0.7, presencePenalty: 0.7, stopTokens: [] },
    endpoint: { baseUrl: '', apiKey: '' },
  };
}

/**
 * Doc numbers an answer cites: the ` [n]` that ends each sentence delta (the sentences' own
 * brackets, "[SD 60]" or "[6]", are not citations).
 */
function citations(deltas: readonly string[]): number[] {
  const out: number[] = [];
  for (const d of deltas.slice(1)) {
    const open = d.lastIndexOf(' [');
    if (open < 0 || !d.endsWith(']')) continue;
    const n = Number(d.slice(open + 2, -1));
    if (Number.isInteger(n) && n > 0) out.push(n);
  }
  return out;
}

async function run(name: string, claims: readonly Claim[], deps: LlmDeps): Promise<Outcome> {
  const provider = createProvider({ baseUrl: '', apiKey: '' }, deps);
  const answerOf = async (claim: Claim): Promise<string[]> => {
    const deltas: string[] = [];
    for await (const delta of provider.stream(request(claim), new AbortController().signal)) deltas.push(delta);
    return deltas;
  };
  // Warm-up: JIT, stem cache, and the embedded model's first load (seconds) when it is used.
  for (const c of claims.slice(0, 3)) await answerOf(c);
  let citesRelevant = 0;
  let firstCiteRelevant = 0;
  let noCitation = 0;
  const lat: number[] = [];
  let example = '';
  for (const claim of claims) {
    const t0 = performance.now();
    const answer = await answerOf(claim);
    lat.push(performance.now() - t0);
    const cited = citations(answer).map((n) => claim.docIds[n - 1]!);
    if (cited.length === 0) noCitation++;
    if (cited.some((id) => claim.relevant.has(id))) citesRelevant++;
    if (cited.length > 0 && claim.relevant.has(cited[0]!)) firstCiteRelevant++;
    // The first answer that cites a relevant abstract, to show what a good one looks like.
    if (example === '' && cited.some((id) => claim.relevant.has(id))) example = `claim ${claim.id} "${claim.text}" (relevant: ${[...claim.relevant].join(', ')}; docs: ${claim.docIds.join(', ')})\n${answer.join('')}`;
  }
  lat.sort((a, b) => a - b);
  return { name, citesRelevant, firstCiteRelevant, noCitation, p50Ms: quantile(lat, 0.5), p99Ms: quantile(lat, 0.99), example };
}

async function main(): Promise<void> {
  const data = loadSciFact();
  const qrels = loadQrels(SPLIT);
  const byId = new Map<string, SciFactDoc>(data.docs.map((d) => [d.id, d]));
  const engine = await quarryEngine().build(data.docs.map((d) => ({ id: d.id, text: `${d.title} ${d.text}`, tags: [] })));

  const claims: Claim[] = [...qrels.keys()].slice(0, CLAIMS).map((id) => {
    const text = data.queries.get(id) ?? '';
    const docIds = engine.search(text, DOCS, null);
    const docs = docIds.map((docId, i): RagDoc => {
      const d = byId.get(docId)!;
      return { n: i + 1, chunkId: docId, text: `${d.title}\n${d.text}`, link: null, numValue: null, imageUrls: [] };
    });
    return { id, text, docIds, docs, relevant: new Set(qrels.get(id)!.keys()) };
  });
  const ceiling = claims.filter((c) => c.docIds.some((id) => c.relevant.has(id))).length;
  const citeFirst = claims.filter((c) => c.docIds.length > 0 && c.relevant.has(c.docIds[0]!)).length;

  const outcomes: Outcome[] = [await run('extractive, lexical (BM25 over sentences)', claims, {})];
  if (!args['no-dense']) {
    const threads = Number(args.threads);
    const embedder = createEmbedder({ baseUrl: '', model: 'use-lite', dimension: 512, threads });
    try {
      const encodeSentences: LlmDeps['encodeSentences'] = (texts, signal) => embedder.embed(texts, 'doc', signal);
      outcomes.push(await run(`extractive, 0.7 lexical + 0.3 USE-Lite cosine (${threads} model threads)`, claims, { encodeSentences }));
    } finally {
      await embedder.close();
    }
  }

  const pct = (n: number): string => `${((100 * n) / claims.length).toFixed(1)}%`;
  console.log(`machine: ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, Node ${process.version}`);
  console.log(`data: SciFact (${scifactDir}), corpus sha256 ${data.corpusSha256}, ${data.docs.length} abstracts`);
  console.log(`claims: the first ${claims.length} judged ${SPLIT} claims (qrels/${SPLIT}.tsv order); docs: top ${DOCS} BM25 (quarry shard, title + text)`);
  console.log(`ceiling (a relevant abstract among the docs): ${pct(ceiling)}; baseline "cite doc 1": ${pct(citeFirst)}`);
  console.log('');
  console.log('| answerer | cites a relevant abstract | first citation relevant | no citation | p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|');
  for (const o of outcomes) {
    console.log(`| ${o.name} | ${pct(o.citesRelevant)} | ${pct(o.firstCiteRelevant)} | ${o.noCitation} | ${o.p50Ms.toFixed(2)} | ${o.p99Ms.toFixed(2)} |`);
  }
  console.log('');
  for (const o of outcomes) console.log(`example (${o.name}):\n${o.example}\n`);
}

await main();
