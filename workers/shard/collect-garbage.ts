/**
 * A major collection of the calling thread's heap, asked for when the thread has just dropped a
 * large part of its memory and will allocate little from then on: a shard compacted at rest.
 *
 * Why: compaction copies a shard's arrays into arrays without growth room, and the old ones are
 * garbage that only a mark-compact frees. A thread whose writes stopped allocates almost nothing,
 * so V8 had no reason to run one: at 1,000,000 chunks over HTTP the service held ~120 MiB more
 * 20 s after the last request than at it (833 MiB = 1.53x the index at rest, issue 11's goal
 * 1.5x; bench/README.md, issue 11).
 *
 * How: Node has no API for a collection without `--expose-gc` on the command line. V8 gives the
 * `gc` function to contexts created while that flag is set, so the flag is set and one context
 * made, once per thread. Its `execution: 'async'` collection runs as V8's own do (incremental
 * marking, concurrent where it can), not as one long pause of the thread's searches.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** V8's gc extension, with the options it takes. */
type GcFunction = (options: { type: 'major'; execution: 'async' }) => Promise<void>;

let collect: GcFunction | null | undefined;

/** V8's gc function for this thread, or null where it cannot be had (then nothing is collected early). */
function gcFunction(): GcFunction | null {
  if (collect !== undefined) return collect;
  try {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as GcFunction;
  } catch {
    collect = null;
  }
  return collect;
}

/** Starts a major collection of this thread's heap; resolves when it is done (at once where none can be asked for), never rejects. */
export async function collectGarbageSoon(): Promise<void> {
  const gc = gcFunction();
  if (!gc) return;
  try {
    await gc({ type: 'major', execution: 'async' });
  } catch {
    // Nothing to do: V8 collects when it would have anyway.
  }
}
