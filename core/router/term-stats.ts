/**
 * Corpus statistics of a query over a multi-shard dataset: each shard counts its own documents,
 * the core sums them so that every shard scores with the same (global) BM25 weights, and keeps
 * the sums of recent queries for as long as no change is applied.
 */
import { MAX_COMPLETIONS, withCompletions } from '../domain/completions.js';
import type { TermStatsReply } from '../../workers/shard/protocol.js';
import { withFields } from '../domain/with-fields.js';

/** Queries whose merged statistics are kept. */
const STATS_CACHE_SIZE = 4096;

/**
 * The completions of the word being typed over all shards: each shard's most frequent ones,
 * document frequencies summed, the {@link MAX_COMPLETIONS} most frequent kept. A completion a
 * shard did not list (beyond its own top) counts 0 there: exact unless a shard has more.
 */
function mergeCompletions(parts: readonly TermStatsReply[]): { completions: string[]; completionDocFreqs: number[] } {
  const df = new Map<string, number>();
  for (const p of parts) (p.completions ?? []).forEach((c, i) => df.set(c, (df.get(c) ?? 0) + (p.completionDocFreqs?.[i] ?? 0)));
  const top = [...df].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_COMPLETIONS);
  return { completions: top.map((t) => t[0]), completionDocFreqs: top.map((t) => t[1]) };
}

/** The shards' statistics of one query summed (with the completions merged when `prefix`). */
export function mergeTermStats(parts: readonly TermStatsReply[], prefix: boolean): TermStatsReply {
  const first = parts[0]!;
  const global: TermStatsReply = {
    terms: first.terms,
    docCount: parts.reduce((s, p) => s + p.docCount, 0),
    totalLength: parts.reduce((s, p) => s + p.totalLength, 0),
    docFreqs: first.terms.map((_, i) => parts.reduce((s, p) => s + (p.docFreqs[i] ?? 0), 0)),
    ...(first.pairs ? { pairs: first.pairs, pairDocFreqs: first.pairs.map((_, i) => parts.reduce((s, p) => s + (p.pairDocFreqs?.[i] ?? 0), 0)) } : {}),
  };
  return prefix ? withCompletions(withFields(global, mergeCompletions(parts))) : global;
}

/**
 * Merged statistics by query, valid for one applied sequence: an entry of another sequence is
 * never returned, so scores are exactly those of a fresh round trip.
 */
export class TermStatsCache {
  private readonly entries = new Map<string, TermStatsReply>();
  private seq = -1;

  /** The statistics of `key` kept at applied sequence `seq`, or null. */
  get(key: string, seq: number): TermStatsReply | null {
    return this.seq === seq ? (this.entries.get(key) ?? null) : null;
  }

  /** Keeps the statistics of `key` computed at applied sequence `seq` (entries of other sequences go). */
  set(key: string, seq: number, stats: TermStatsReply): void {
    if (this.seq !== seq) {
      this.entries.clear();
      this.seq = seq;
    }
    if (this.entries.size >= STATS_CACHE_SIZE) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, stats);
  }

  /** Drops every entry (the shards are changing or were replaced). */
  invalidate(): void {
    this.seq = -1;
  }
}
