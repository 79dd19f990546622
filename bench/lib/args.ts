/** Command-line options of the benchmarks. */

/** The number after option `name` on the command line (`--rounds 3`), or `fallback` when it is absent, not a number, or 0. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
}
