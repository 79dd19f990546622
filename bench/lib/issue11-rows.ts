/**
 * The rows of issue 11's goals table, from the `--json` figures of the benches that
 * bench/issue11-goals.ts runs: each row's goal, quarry's figure, the best peer the issue names for
 * it (among those that ran), quarry / peer and whether the goal is met. Pure: no I/O.
 */

const MiB = 2 ** 20;

/** One engine's row of compare-native's `--json` (µs, bytes). */
export interface EngineFigures {
  readonly engine: string;
  readonly docsPerS: number;
  readonly rssGrowthBytes: number;
  readonly indexBytes: number;
  readonly indexWhat: string;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly qps: number;
  readonly ndcg10: number | null;
}

/** compare-native's `--json`. */
export interface NativeJson {
  readonly docCount: number;
  readonly engines: readonly EngineFigures[];
  readonly skipped: readonly string[];
}

/** shard-synthetic's `--json`. */
export interface ShardJson {
  readonly docs: number;
  readonly typo: boolean;
  readonly chunksPerS: number;
  /** Heap + array buffers after GC, right after the build. */
  readonly measuredBytes: number;
  /** The same after the compaction the service runs once writes stop (QUARRY_COMPACT_IDLE_MS): the shard at rest. */
  readonly restingBytes?: number;
  readonly reportAfterQueries: Record<string, number>;
}

/** lib/ingested-index.ts's `--json`. */
export interface IngestedIndexJson {
  readonly docs: number;
  readonly shards: number;
  readonly measuredBytes: number;
}

/** http-ingest's `--json`. */
export interface IngestJson {
  readonly docs: number;
  readonly clients: number;
  readonly chunksPerS: number;
  readonly segments: readonly { readonly done: number; readonly chunksPerS: number }[];
  readonly processes: readonly { readonly label: string; readonly start: number; readonly end: number; readonly peak: number }[];
  /** Seconds after the last request at which {@link restEnd} was read. */
  readonly settleS?: number;
  /** Each process's RSS at rest, by label. */
  readonly restEnd?: Readonly<Record<string, number>>;
  readonly chunkCount: number;
  readonly lastChunkFound: boolean;
}

/** search-while-embedding's `--json`. */
export interface EmbeddingJson {
  readonly setups: readonly { readonly setup: string; readonly p50Us: number; readonly p99Us: number; readonly windowsEmbeddingEnded: number }[];
}

/** What the phases wrote; a phase skipped or failed is absent. */
export interface PhaseFigures {
  readonly scifact?: NativeJson;
  readonly native?: NativeJson;
  readonly shard?: ShardJson;
  readonly ingestedIndex?: IngestedIndexJson;
  readonly ingest?: IngestJson;
  readonly embedding?: EmbeddingJson;
}

/** One printed row. `met` is null when there is no goal or a figure is missing. */
export interface GoalRow {
  readonly what: string;
  readonly goal: string;
  readonly quarry: string;
  readonly peer: string;
  readonly ratio: string;
  readonly met: boolean | null;
}

/** Issue 11's goals, in its units. */
export const GOALS = Object.freeze({
  ingestPerS: 10_000,
  /** "Flat": the mean rate of the run's second half of segments at least this share of the first half's. */
  flatShare: 0.9,
  serviceOverIndex: 1.5,
  indexMiB: 450,
  scifactP99Us: 500,
  scifactQps: 12_000,
  scifactBuildPerS: 20_000,
  embeddingOverIdle: 1.2,
});

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (b: number): string => `${int(b / MiB)} MiB`;
const us = (x: number): string => (x < 1000 ? `${x.toFixed(0)} µs` : `${(x / 1000).toFixed(2)} ms`);
const ratio = (x: number): string => `${x < 0.1 ? x.toFixed(3) : x.toFixed(2)}`;
const MISSING = 'not measured';

/**
 * The best of `names` among the peers of `run` (quarry excluded) by `better` (true when a beats
 * b), or, when none of them ran, the best of every peer that did, labelled as a stand-in.
 */
function bestPeer(run: NativeJson | undefined, names: readonly string[], better: (a: EngineFigures, b: EngineFigures) => boolean): { e: EngineFigures; label: string } | null {
  if (run === undefined) return null;
  const peers = run.engines.filter((e) => e.engine !== 'quarry');
  const pick = (xs: readonly EngineFigures[]) => xs.reduce<EngineFigures | null>((best, e) => (best === null || better(e, best) ? e : best), null);
  // compare-native names its engines for print ('SQLite FTS5', 'RediSearch'); the keys are lowercase ('fts5').
  const named = pick(peers.filter((e) => names.some((n) => e.engine.toLowerCase().includes(n))));
  if (named !== null) return { e: named, label: named.engine };
  const any = pick(peers);
  return any === null ? null : { e: any, label: `${any.engine} (the issue's ${names.join(', ')} did not run)` };
}

const quarryOf = (run: NativeJson | undefined): EngineFigures | undefined => run?.engines.find((e) => e.engine === 'quarry');

/**
 * An ingest run's RSS growth (end - start) summed over every process, a process that shrank
 * counting 0 (the job workers settle after their start: their fall is not the ingest's saving);
 * the HTTP process's growth alone, at the end and at its peak; and every process's RSS at the end.
 */
export function serviceGrowth(ingest: IngestJson): { all: number; http: number; httpPeak: number; endRss: number; rest: number | undefined } {
  const all = ingest.processes.reduce((s, p) => s + Math.max(0, p.end - p.start), 0);
  const http = ingest.processes.find((p) => p.label === 'http+core');
  const endRss = ingest.processes.reduce((s, p) => s + p.end, 0);
  const restEnd = ingest.restEnd;
  // A process gone by then (none is expected) counts as its end.
  const rest = restEnd === undefined ? undefined : ingest.processes.reduce((s, p) => s + Math.max(0, (restEnd[p.label] ?? p.end) - p.start), 0);
  return { all, http: http === undefined ? 0 : http.end - http.start, httpPeak: http === undefined ? 0 : http.peak - http.start, endRss, rest };
}

/** Mean rate of the first and the second half of an ingest's segments (an odd middle segment left out). */
export function halves(segments: readonly { chunksPerS: number }[]): { first: number; second: number } {
  const h = Math.floor(segments.length / 2);
  const mean = (xs: readonly { chunksPerS: number }[]) => xs.reduce((s, x) => s + x.chunksPerS, 0) / Math.max(1, xs.length);
  return { first: mean(segments.slice(0, h)), second: mean(segments.slice(segments.length - h)) };
}

function ingestRow(f: PhaseFigures, docs: number): GoalRow {
  const what = `ingest through the HTTP API, ${int(docs)} docs, ${f.ingest?.clients ?? 2} clients`;
  const goal = `≥ ${int(GOALS.ingestPerS)} docs/s, flat to ${int(docs)}`;
  const peer = bestPeer(f.native, ['redisearch'], (a, b) => a.docsPerS > b.docsPerS);
  const shardAlone = f.shard === undefined ? '' : `; shard alone ${int(f.shard.chunksPerS)} docs/s (shard-synthetic${f.shard.typo ? ' --typo' : ''})`;
  const peerText = (peer === null ? MISSING : `${peer.label} ${int(peer.e.docsPerS)} docs/s (its build, compare-native)`) + shardAlone;
  if (f.ingest === undefined) return { what, goal, quarry: MISSING, peer: peerText, ratio: '-', met: null };
  const seg = f.ingest.segments.map((s) => s.chunksPerS);
  const { first, second } = halves(f.ingest.segments);
  const flat = second >= GOALS.flatShare * first;
  const complete = f.ingest.chunkCount === f.ingest.docs && f.ingest.lastChunkFound;
  const quarry =
    `${int(f.ingest.chunksPerS)} docs/s (segments ${int(Math.min(...seg))}-${int(Math.max(...seg))}; second half ${((second / first) * 100).toFixed(0)}% of the first)` +
    (complete ? '' : `; INCOMPLETE: ${f.ingest.chunkCount} chunks stored, last chunk found ${f.ingest.lastChunkFound}`);
  return {
    what,
    goal,
    quarry,
    peer: peerText,
    ratio: peer === null ? '-' : `${ratio(f.ingest.chunksPerS / peer.e.docsPerS)} (rate)`,
    met: complete && f.ingest.chunksPerS >= GOALS.ingestPerS && flat,
  };
}

function serviceMemoryRow(f: PhaseFigures, docs: number): GoalRow {
  const what = `memory of the whole service after ingesting ${int(docs)} docs over HTTP (RSS growth of every process)`;
  const goal = `≤ ${GOALS.serviceOverIndex}x the index`;
  const peer = bestPeer(f.native, ['redisearch'], (a, b) => a.rssGrowthBytes < b.rssGrowthBytes);
  const peerText = peer === null ? MISSING : `${peer.label} ${mib(peer.e.rssGrowthBytes)} (RSS growth, compare-native)`;
  if (f.ingest === undefined) return { what, goal, quarry: MISSING, peer: peerText, ratio: '-', met: null };
  const g = serviceGrowth(f.ingest);
  const index = f.ingestedIndex?.measuredBytes;
  const times = (bytes: number): string => (index === undefined ? '' : ` = ${(bytes / index).toFixed(2)}x`);
  // Judged at rest when measured (the service's memory after the ingest, once its shards compact
  // and collect), with the reading at the last request beside it.
  const judged = g.rest ?? g.all;
  const rest = g.rest === undefined ? '' : `${mib(g.rest)}${times(g.rest)} at rest (${f.ingest.settleS} s after the last request); at the last request `;
  const over = index === undefined ? '' : ` its index (${mib(index)}, ${f.ingestedIndex!.shards} shards, lib/ingested-index.ts)`;
  const http =
    (index === undefined ? '' : `; HTTP process alone ${mib(g.http)}${times(g.http)}, at its peak ${mib(g.httpPeak)}${times(g.httpPeak)}`) +
    `; every process's RSS at the end ${mib(g.endRss)}`;
  return {
    what,
    goal,
    quarry: `${rest}${mib(g.all)}${times(g.all)}${over}${http}`,
    peer: peerText,
    ratio: peer === null ? '-' : ratio(judged / peer.e.rssGrowthBytes),
    met: index === undefined ? null : judged <= GOALS.serviceOverIndex * index,
  };
}

function indexMemoryRow(f: PhaseFigures, docs: number): GoalRow {
  const what = `index memory, ${int(docs)} docs${f.shard?.typo === false ? ' (typo data off)' : ', proximity and typo data included'}`;
  const goal = docs === 1_000_000 ? `≤ ${GOALS.indexMiB} MiB` : `≤ ${GOALS.indexMiB} MiB at 1,000,000 (here scaled: ${mib(GOALS.indexMiB * MiB * (docs / 1_000_000))})`;
  const peer = bestPeer(f.native, ['redisearch', 'bm25s', 'fts5'], (a, b) => a.indexBytes < b.indexBytes);
  const peerText = peer === null ? MISSING : `${peer.label} ${mib(peer.e.indexBytes)} (${peer.e.indexWhat})`;
  if (f.shard === undefined) return { what, goal, quarry: MISSING, peer: peerText, ratio: '-', met: null };
  const report = Object.values(f.shard.reportAfterQueries).reduce((s, b) => s + b, 0);
  const noTypo = quarryOf(f.native);
  // Judged at rest: once its writes stop, the service compacts the shard (QUARRY_COMPACT_IDLE_MS).
  const judged = f.shard.restingBytes ?? f.shard.measuredBytes;
  const resting = f.shard.restingBytes === undefined ? '' : `${mib(f.shard.restingBytes)} at rest (whole shard after the compaction once writes stop); `;
  return {
    what,
    goal,
    quarry:
      `${resting}${mib(f.shard.measuredBytes)} right after the build (heap + array buffers after GC, shard-synthetic; its memory report ${mib(report)} after the queries)` +
      (noTypo === undefined ? '' : `; without typo data ${mib(noTypo.indexBytes)} (compare-native)`),
    peer: peerText,
    ratio: peer === null ? '-' : ratio(judged / peer.e.indexBytes),
    met: judged <= GOALS.indexMiB * MiB * (docs / 1_000_000),
  };
}

function sciFactRows(f: PhaseFigures): GoalRow[] {
  const q = quarryOf(f.scifact);
  const p99Peer = bestPeer(f.scifact, ['bm25s'], (a, b) => a.p99Us < b.p99Us);
  const qpsPeer = bestPeer(f.scifact, ['bm25s'], (a, b) => a.qps > b.qps);
  const buildPeer = bestPeer(f.scifact, ['fts5'], (a, b) => a.docsPerS > b.docsPerS);
  const nd = q?.ndcg10 == null ? '' : `; nDCG@10 ${q.ndcg10.toFixed(4)}`;
  return [
    {
      what: 'SciFact in-process, single thread: p99',
      goal: `p99 ≤ ${us(GOALS.scifactP99Us)}`,
      quarry: q === undefined ? MISSING : `${us(q.p99Us)} (p50 ${us(q.p50Us)}${nd})`,
      peer: p99Peer === null ? MISSING : `${p99Peer.label} ${us(p99Peer.e.p99Us)}`,
      ratio: q === undefined || p99Peer === null ? '-' : ratio(q.p99Us / p99Peer.e.p99Us),
      met: q === undefined ? null : q.p99Us <= GOALS.scifactP99Us,
    },
    {
      what: 'SciFact in-process, single thread: QPS',
      goal: `QPS ≥ ${int(GOALS.scifactQps)}`,
      quarry: q === undefined ? MISSING : int(q.qps),
      peer: qpsPeer === null ? MISSING : `${qpsPeer.label} ${int(qpsPeer.e.qps)}`,
      ratio: q === undefined || qpsPeer === null ? '-' : ratio(q.qps / qpsPeer.e.qps),
      met: q === undefined ? null : q.qps >= GOALS.scifactQps,
    },
    {
      what: 'SciFact index build',
      goal: `≥ ${int(GOALS.scifactBuildPerS)} docs/s`,
      quarry: q === undefined ? MISSING : `${int(q.docsPerS)} docs/s`,
      peer: buildPeer === null ? MISSING : `${buildPeer.label} ${int(buildPeer.e.docsPerS)} docs/s`,
      ratio: q === undefined || buildPeer === null ? '-' : `${ratio(q.docsPerS / buildPeer.e.docsPerS)} (rate)`,
      met: q === undefined ? null : q.docsPerS >= GOALS.scifactBuildPerS,
    },
  ];
}

function embeddingRow(f: PhaseFigures): GoalRow {
  const what = 'HTTP search p50 while the default background embedding runs (SciFact, just ingested)';
  const goal = `within ${GOALS.embeddingOverIdle}x of idle`;
  const idle = f.embedding?.setups.find((s) => s.setup === 'idle');
  const busy = f.embedding?.setups.find((s) => s.setup === 'embedding-defaults');
  if (idle === undefined || busy === undefined) return { what, goal, quarry: MISSING, peer: '-', ratio: '-', met: null };
  const x = busy.p50Us / idle.p50Us;
  const ended = busy.windowsEmbeddingEnded > 0 ? `; embedding ended inside ${busy.windowsEmbeddingEnded} window(s)` : '';
  return {
    what,
    goal,
    quarry: `${x.toFixed(2)}x (${us(busy.p50Us)} against ${us(idle.p50Us)} idle; p99 ${us(busy.p99Us)} against ${us(idle.p99Us)}${ended})`,
    peer: '-',
    ratio: '-',
    met: x <= GOALS.embeddingOverIdle,
  };
}

/** The preamble figure beside the table: query p50 on the large corpus against the fastest peer. */
function queryRow(f: PhaseFigures, docs: number): GoalRow {
  const q = quarryOf(f.native);
  const peer = bestPeer(f.native, ['bm25s', 'xapian'], (a, b) => a.p50Us < b.p50Us);
  return {
    what: `(the issue's preamble) query p50 / p99, ${int(docs)} docs, in-process`,
    goal: '-',
    quarry: q === undefined ? MISSING : `${us(q.p50Us)} / ${us(q.p99Us)}, ${int(q.qps)} QPS`,
    peer: peer === null ? MISSING : `${peer.label} ${us(peer.e.p50Us)} / ${us(peer.e.p99Us)}, ${int(peer.e.qps)} QPS`,
    ratio: q === undefined || peer === null ? '-' : `${ratio(q.p50Us / peer.e.p50Us)} (p50)`,
    met: null,
  };
}

/** Every row of issue 11's table, in its order, then the preamble's query figure. */
export function goalRows(f: PhaseFigures, docs: number): GoalRow[] {
  return [ingestRow(f, docs), serviceMemoryRow(f, docs), indexMemoryRow(f, docs), ...sciFactRows(f), embeddingRow(f), queryRow(f, docs)];
}
