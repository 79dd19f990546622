/**
 * Issue 11's goals table in one run, beside the native peers (a benchmark, not a test): runs the
 * benches that measure each goal one after another, each as a child process (a clean heap, and
 * nothing of one phase left in the next), each writing its figures with `--json` into the run's
 * directory, then prints one table: every row of the issue's table with its goal, quarry's
 * figure, the best peer the issue names for it, quarry / peer and whether the goal is met, with
 * the machine, Node, the commit, each phase's load average at its start and wall time, and the data.
 *
 * Phases, in order (`--skip` takes these names):
 *   scifact         compare-native on SciFact (every engine): p99, QPS and build rate (median of 3 builds)
 *   native          compare-native --data synthetic --docs N: the peers' build rate, memory and index
 *   shard           shard-synthetic --docs N --typo (--expose-gc): index memory with proximity and typo data
 *   ingested-index  lib/ingested-index.ts --docs N (--expose-gc): the index of what http-ingest ingests, as the service holds it
 *   ingest          http-ingest --docs N: chunks/s, flat or not, and every process's RSS growth
 *   embedding       search-while-embedding: search p50 while the default background embedding runs, against idle
 *
 *   npm run build && npx tsx bench/issue11-goals.ts                 # 1,000,000 docs (~30 min here)
 *   npx tsx bench/issue11-goals.ts --quick                          # 100,000 docs, one embedding round
 *   options: --docs N  --skip PHASE,...  --out DIR (where the figures go; a new temporary directory by default)
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { goalRows, type PhaseFigures } from './lib/issue11-rows.js';
import { repoRoot } from './lib/scifact.js';
import { machine } from './lib/spawn-stack.js';

/** One bench run as a child: its name, the bench file, node flags and arguments, and where its figures land. */
interface Phase {
  readonly name: string;
  readonly key: keyof PhaseFigures;
  readonly file: string;
  readonly nodeFlags: readonly string[];
  readonly args: readonly string[];
  /** Runs the service from dist/. */
  readonly needsDist: boolean;
}

/** What a phase did. */
interface PhaseRun {
  readonly phase: Phase;
  readonly loadAtStart: readonly number[];
  readonly wallS: number;
  readonly exitCode: number | null;
  readonly data: string;
}

const PHASE_NAMES = ['scifact', 'native', 'shard', 'ingested-index', 'ingest', 'embedding'] as const;

function phasesFor(docs: number, quick: boolean): Phase[] {
  const n = String(docs);
  return [
    { name: 'scifact', key: 'scifact', file: 'bench/compare-native.ts', nodeFlags: [], args: [], needsDist: false },
    { name: 'native', key: 'native', file: 'bench/compare-native.ts', nodeFlags: [], args: ['--data', 'synthetic', '--docs', n], needsDist: false },
    { name: 'shard', key: 'shard', file: 'bench/shard-synthetic.ts', nodeFlags: ['--expose-gc'], args: ['--docs', n, '--typo'], needsDist: false },
    { name: 'ingested-index', key: 'ingestedIndex', file: 'bench/lib/ingested-index.ts', nodeFlags: ['--expose-gc'], args: ['--docs', n], needsDist: false },
    { name: 'ingest', key: 'ingest', file: 'bench/http-ingest.ts', nodeFlags: [], args: ['--docs', n], needsDist: true },
    { name: 'embedding', key: 'embedding', file: 'bench/search-while-embedding.ts', nodeFlags: [], args: quick ? ['--rounds', '1'] : [], needsDist: true },
  ];
}

/** Positive integer option, or a clear error. */
function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
  return n;
}

function revision(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  try {
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return git('rev-parse', '--short', 'HEAD') + (dirty ? ' + uncommitted changes' : '');
  } catch {
    return 'unknown';
  }
}

const load = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' ');

/** Runs one phase's bench as a child process, its output passed through; resolves with its exit code. */
function runChild(phase: Phase, jsonFile: string): Promise<number | null> {
  const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');
  const argv = [...phase.nodeFlags, path.join(repoRoot, phase.file), ...phase.args, '--json', jsonFile];
  console.log(`\n=== phase ${phase.name}: npx tsx ${[...phase.nodeFlags, phase.file, ...phase.args].join(' ')} (load average ${load(os.loadavg())})`);
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, argv, { cwd: repoRoot, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

/** A phase's figures and the data they were measured on (shard-synthetic prints its data line but does not write it). */
function readFigures(file: string): { figures: unknown; data: string } | null {
  if (!fs.existsSync(file)) return null;
  const figures = JSON.parse(fs.readFileSync(file, 'utf8')) as { data?: string; docs?: number; typo?: boolean };
  const shardData = `${figures.docs} synthetic chunks (bench/lib/synthetic.ts, seed 42) keyed by their corpus ids, one shard${figures.typo === true ? ', typo vocabulary on from the start' : ''}`;
  return { figures, data: figures.data ?? shardData };
}

/** Markdown cell: no pipes or line breaks inside. */
const cell = (s: string): string => s.replace(/\|/g, '/').replace(/\n/g, ' ');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      docs: { type: 'string' },
      skip: { type: 'string', default: '' },
      out: { type: 'string' },
    },
  });
  const docs = values.docs === undefined ? (values.quick ? 100_000 : 1_000_000) : positiveInt('--docs', values.docs);
  const skip = values.skip === '' ? [] : values.skip.split(',').map((s) => s.trim());
  for (const s of skip) if (!(PHASE_NAMES as readonly string[]).includes(s)) throw new Error(`--skip: unknown phase ${s}; phases: ${PHASE_NAMES.join(', ')}`);
  const phases = phasesFor(docs, values.quick).filter((p) => !skip.includes(p.name));
  if (phases.some((p) => p.needsDist) && !fs.existsSync(path.join(repoRoot, 'dist/facade/main.js'))) {
    throw new Error('the ingest and embedding phases run the service from dist/: `npm run build` first (or --skip ingest,embedding)');
  }
  const out = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-issue11-'));
  fs.mkdirSync(out, { recursive: true });
  const commit = revision();
  const started = new Date();
  console.log(`issue 11 goals: ${docs.toLocaleString('en-US')} docs; phases ${phases.map((p) => p.name).join(', ')}${skip.length > 0 ? `; skipped ${skip.join(', ')}` : ''}; figures in ${out}`);

  const runs: PhaseRun[] = [];
  const figures: Record<string, unknown> = {};
  for (const phase of phases) {
    const jsonFile = path.join(out, `${phase.name}.json`);
    fs.rmSync(jsonFile, { force: true });
    const loadAtStart = os.loadavg();
    const t0 = performance.now();
    const exitCode = await runChild(phase, jsonFile);
    const wallS = (performance.now() - t0) / 1000;
    const read = readFigures(jsonFile);
    if (read !== null) figures[phase.key] = read.figures;
    runs.push({ phase, loadAtStart, wallS, exitCode, data: read?.data ?? 'no figures written' });
  }

  const rows = goalRows(figures, docs);
  const total = runs.reduce((s, r) => s + r.wallS, 0);
  console.log(`\n=== issue 11's goals, one run (${started.toISOString()}, ${(total / 60).toFixed(1)} min)`);
  console.log(`command: npx tsx bench/issue11-goals.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log(`machine: ${machine()}`);
  console.log(`commit: ${commit}`);
  console.log('\n| phase | load average at start | wall | exit | data |');
  console.log('|---|---|---|---|---|');
  for (const r of runs) {
    const exit = r.exitCode === 0 ? 'ok' : `FAILED (${r.exitCode ?? 'signal'})`;
    console.log(`| ${r.phase.name} | ${load(r.loadAtStart)} | ${(r.wallS / 60).toFixed(1)} min | ${exit} | ${cell(r.data)} |`);
  }
  console.log('\n| what | goal | quarry | best peer | quarry / peer | met |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const met = r.met === null ? '-' : r.met ? 'met' : '**not met**';
    console.log(`| ${cell(r.what)} | ${cell(r.goal)} | ${cell(r.quarry)} | ${cell(r.peer)} | ${r.ratio} | ${met} |`);
  }
  const skipped = [figures.scifact, figures.native].flatMap((f) => (f as { skipped?: string[] } | undefined)?.skipped ?? []);
  for (const s of new Set(skipped)) console.log(`peer not run: ${s}`);
  if (docs !== 1_000_000) console.log(`note: ${docs.toLocaleString('en-US')} docs, not the goals' 1,000,000: the ingest, memory and index rows are not the issue's figures`);
  if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
}

await main();
