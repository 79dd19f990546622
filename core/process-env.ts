/**
 * Environment every quarry process starts with unless the operator set it: applied by whoever
 * starts the processes (deploy/run-all.ts, and the test and bench stacks, so that they measure
 * what runs in production). These are read by the C library when a process starts, so a process
 * cannot set them for itself.
 */

/** The defaults, by variable. */
export const PROCESS_ENV_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  // glibc's malloc serves a block of 128 KiB or more from a mapping of its own, returned to the
  // kernel when freed; but after such a block is freed it raises that threshold (up to 32 MiB),
  // and from then on the index's growing arrays, snapshot buffers and request bodies came from its
  // heap arenas, one per thread, where freed space stays as fragmentation. A fixed threshold turns
  // that off: the HTTP process (the core in it) after ingesting 200,000 chunks over HTTP held
  // ~950 MiB with the default and ~590 MiB with this, and after 1,000,000 1,394 and 1,291 MiB
  // (bench/http-ingest.ts), for no CPU measured.
  MALLOC_MMAP_THRESHOLD_: '131072',
});

/** `env` with every default of {@link PROCESS_ENV_DEFAULTS} it does not set itself. */
export function withProcessDefaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(PROCESS_ENV_DEFAULTS)) if (out[name] === undefined || out[name] === '') out[name] = value;
  return out;
}
