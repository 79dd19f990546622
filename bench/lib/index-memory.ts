/** Prints a BM25 index's memory report as bytes per chunk per structure, beside the measured heap. */
import { totalBytes, type MemoryParts } from '../../workers/shard/bm25/memory-report.js';

/**
 * One line per structure (bytes per chunk and MiB), their sum, and what the measured heap growth
 * holds besides them (`measured`: heap used + array buffers after GC; the rest is whatever the
 * caller built around the index, the token table and estimate error).
 */
export function printMemoryReport(parts: MemoryParts, chunks: number, measured: number): void {
  const row = (name: string, bytes: number): string =>
    `  ${name.padEnd(28)} ${(bytes / chunks).toFixed(1).padStart(8)} B/chunk ${(bytes / 2 ** 20).toFixed(1).padStart(8)} MiB`;
  console.log('memory by structure (typed arrays exact, V8 objects estimated: workers/shard/bm25/memory-report.ts):');
  for (const [name, bytes] of Object.entries(parts)) console.log(row(name, bytes));
  const sum = totalBytes(parts);
  console.log(row('sum of the above', sum));
  console.log(row('measured heap growth', measured));
  console.log(row('rest (not in the report)', measured - sum));
}
