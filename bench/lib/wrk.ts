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

/** wrk POSTing the queries' bm25 search bodies (page_size 10) to `url`, `seconds` per connection count. */
export function wrkRuns(url: string, headers: Record<string, string>, queries: string[], connections: readonly number[], seconds = 10): WrkRun[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-wrk-'));
  const script = path.join(dir, 'search.lua');
  const bodies = queries.map((q) => JSON.stringify(JSON.stringify({ query: q, search_type: 'bm25', page_size: 10 })));
  fs.writeFileSync(
    script,
    `local bodies = {${bodies.join(',')}}
local i = 0
wrk.method = "POST"
${Object.entries({ ...headers, 'content-type': 'application/json' }).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`).join('\n')}
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/api/chunk/search", nil, bodies[i])
end
`,
  );
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
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}
