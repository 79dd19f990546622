/**
 * The old generation's growth between mark-compacts, for the processes that answer searches.
 *
 * Left to V8, the HTTP process (~50 MB of live heap) got a limit ~10% above what each
 * mark-compact kept: under load one every ~1 s, each a 4-15 ms pause plus ~20 ms of marking
 * steps on the event loop. At 100% (a limit of twice the live heap) SciFact bm25 over HTTP at
 * one connection had 1 mark-compact in 20 s instead of 11-14 and a p99 of 3.0-3.7 ms instead of
 * 5.8-6.6 (README, "2026-11-29 night"). V8 reads the flag at each mark-compact, so setting it
 * at start is enough.
 */
import v8 from 'node:v8';

/** Sets V8's heap growing factor to 1 + `percent` / 100; 0 keeps V8's own choice. */
export function applyHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
