/**
 * wrk (Debian's package, a C client) POSTing SciFact search bodies: the load generator of the
 * HTTP latency benchmarks, which measures without a Node client's own pauses in the figures.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { aptInstall } from './apt-install.js';

/** wrk's p50, p99 (as printed, e.g. "1.03ms") and req/s of one run. */
export interface WrkRun {
  readonly p50: string;
  readonly p99: string;
  readonly rps: string;
  readonly non2xx: string;
}

/** Whether wrk is installed. */
export const hasWrk = (): boolean => !spawnSync('wrk', ['--version']).error;

/** Installs wrk from Debian's packages when it is missing; whether it is there now (why not is printed). */
export function ensureWrk(): boolean {
  if (hasWrk()) return true;
  const failed = aptInstall(['wrk']);
  if (failed !== null) console.log(`wrk: ${failed}`);
  return hasWrk();
}

/** A wrk latency figure ("812.00us", "1.03ms", "2.1s") in µs. */
export function wrkMicros(v: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v);
  if (!m) return Number.NaN;
  return Number(m[1]) * (m[2] === 'us' ? 1 : m[2] === 'ms' ? 1000 : 1e6);
}

/** Writes wrk's Lua script POSTing `bodies` in turn to /api/chunk/search with `headers`, plus `extra` Lua; returns its file (under a new temporary directory). */
export function searchScript(headers: Record<string, string>, bodies: readonly string[], extra = ''): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-wrk-'));
  const script = path.join(dir, 'search.lua');
  fs.writeFileSync(
    script,
    `local bodies = {${bodies.map((b) => JSON.stringify(b)).join(',')}}
local i = 0
wrk.method = "POST"
${Object.entries({ ...headers, 'content-type': 'application/json' }).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`).join('\n')}
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/api/chunk/search", nil, bodies[i])
end
${extra}`,
  );
  return script;
}

/** The bm25 search bodies (page_size 10) of `queries`, as wrk sends them. */
export const searchBodies = (queries: readonly string[]): string[] => queries.map((q) => JSON.stringify({ query: q, search_type: 'bm25', page_size: 10 }));

/** wrk POSTing the queries' bm25 search bodies (page_size 10) to `url`, `seconds` per connection count. */
export function wrkRuns(url: string, headers: Record<string, string>, queries: string[], connections: readonly number[], seconds = 10): WrkRun[] {
  const script = searchScript(headers, searchBodies(queries));
  const out = connections.map((c) => {
    const r = spawnSync('wrk', ['-t1', `-c${c}`, `-d${seconds}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
    return {
      // The latency distribution's own lines: a bare /50%/ also matched the thread stats' "+/-
      // Stdev" column (e.g. "83.50%" before "Req/Sec") and printed "p50 Req/Sec".
      p50: /^\s*50%\s+(\S+)/m.exec(r.stdout)?.[1] ?? '?',
      p99: /^\s*99%\s+(\S+)/m.exec(r.stdout)?.[1] ?? '?',
      rps: /Requests\/sec:\s+(\S+)/.exec(r.stdout)?.[1] ?? '?',
      non2xx: /Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? '0',
    };
  });
  fs.rmSync(path.dirname(script), { recursive: true, force: true });
  return out;
}

/** One wrk run's latency distribution (µs) and throughput, from wrk's own histogram. */
export interface WrkDistribution {
  readonly requests: number;
  readonly rps: number;
  readonly non2xx: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** wrk POSTing `bodies` in turn to `url`'s /api/chunk/search for `seconds` on `connections`: its whole latency distribution. */
export function wrkDistribution(url: string, headers: Record<string, string>, bodies: readonly string[], connections: number, seconds: number): WrkDistribution {
  const done = `done = function(summary, latency, requests)
  local bad = summary.errors.status
  io.write(string.format("DIST %d %.1f %d %d %d %d %d %d\\n", summary.requests, summary.requests / (summary.duration / 1e6), bad, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
end`;
  const script = searchScript(headers, bodies, done);
  try {
    const r = spawnSync('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, url], { encoding: 'utf8' });
    const m = /DIST (\d+) ([\d.]+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(r.stdout);
    if (!m) throw new Error(`wrk printed no distribution: ${r.stdout}${r.stderr}`);
    const [requests, rps, non2xx, p50, p90, p99, p999, max] = m.slice(1).map(Number) as [number, number, number, number, number, number, number, number];
    return { requests, rps, non2xx, p50, p90, p99, p999, max };
  } finally {
    fs.rmSync(path.dirname(script), { recursive: true, force: true });
  }
}
