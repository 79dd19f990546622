/**
 * One shard thread shared by two datasets: how long a small dataset's searches take while another
 * dataset's heavy searches (a many-word fulltext query counting every match) keep the thread busy.
 * Drives the real `ShardPool` in-process, no HTTP, so the figure is the thread's scheduling alone.
 *
 *   npx tsx bench/shard-fairness.ts [--heavy-docs 60000] [--seconds 10]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShardPool } from '../core/pool/shard-pool.js';
import type { ShardDoc } from '../workers/shard/protocol.js';
import { textDoc } from '../workers/shard/text-doc.js';
import { quantile } from './lib/metrics.js';
import { machine } from './lib/spawn-stack.js';
import { syntheticCorpus, syntheticQueries } from './lib/synthetic.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
}
const heavyDocs = arg('heavy-docs', 60_000);
const seconds = arg('seconds', 10);
const bm25 = { k1: 0.9, b: 0.4 };
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i} alpha beta gamma`).join(' ');

const doc = textDoc;

async function fill(pool: ShardPool, datasetId: string, docs: ShardDoc[]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-fairness-'));
  await pool.run({ op: 'load', datasetId, shard: 0, dir, bm25 });
  for (let i = 0; i < docs.length; i += 1000) {
    await pool.run({ op: 'apply', datasetId, shard: 0, upserts: docs.slice(i, i + 1000), deletes: [], seq: i + 1, bm25 });
  }
}

async function main(): Promise<void> {
  const pool = new ShardPool(1);
  try {
    // The heavy dataset: every chunk holds the heavy query's common words, as the soak's attacker writes them.
    const heavy = Array.from({ length: heavyDocs }, (_, i) => doc(`h${i}`, `alpha beta ${i % 7} ${WORDS.slice((i * 13) % 600, ((i * 13) % 600) + 200)}`));
    await fill(pool, 'heavy', heavy);
    const small = [...syntheticCorpus({ docs: 2000, seed: 11 })].map((d) => doc(d.id, d.text));
    await fill(pool, 'small', small);
    const queries = syntheticQueries(200, 5);

    const heavySearch = (): Promise<unknown> =>
      pool.run({ op: 'search', datasetId: 'heavy', shard: 0, text: WORDS, stats: null, k: 100, filter: null, minScore: null, countTotal: true, fulltext: true });
    const smallSearch = async (i: number): Promise<number> => {
      const t = performance.now();
      await pool.run({ op: 'search', datasetId: 'small', shard: 0, text: queries[i % queries.length]!, stats: null, k: 10, filter: null, minScore: null, countTotal: false });
      return performance.now() - t;
    };

    const t0 = performance.now();
    await heavySearch();
    const heavyMs = performance.now() - t0;

    const measure = async (ms: number): Promise<number[]> => {
      const out: number[] = [];
      const until = performance.now() + ms;
      for (let i = 0; performance.now() < until; i++) out.push(await smallSearch(i));
      return out;
    };
    const alone = await measure((seconds * 1000) / 2);
    let stop = false;
    const loops = [0, 1].map(async () => {
      let n = 0;
      while (!stop) {
        await heavySearch();
        n++;
      }
      return n;
    });
    const loaded = await measure((seconds * 1000) / 2);
    stop = true;
    const heavyDone = (await Promise.all(loops)).reduce((a, b) => a + b, 0);

    const fmt = (unsorted: number[]): string => {
      const xs = [...unsorted].sort((a, b) => a - b);
      return `p50 ${quantile(xs, 0.5).toFixed(2)} ms, p99 ${quantile(xs, 0.99).toFixed(2)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} searches)`;
    };
    console.log(`shard-fairness: ${machine()}`);
    console.log(`one shard thread; heavy dataset ${heavyDocs.toLocaleString('en-US')} chunks, one heavy search (240-word fulltext, count all) ${heavyMs.toFixed(0)} ms alone; small dataset 2,000 synthetic chunks`);
    console.log(`small searches alone:                      ${fmt(alone)}`);
    console.log(`small searches beside 2 heavy search loops: ${fmt(loaded)}; heavy searches done meanwhile: ${heavyDone}`);
  } finally {
    await pool.close();
  }
}

await main();
