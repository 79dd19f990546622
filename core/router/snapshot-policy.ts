/**
 * When a dataset's shards are snapshotted (`DatasetIndex`): a snapshot rewrites the whole index,
 * a restart replays the change log after it. A fixed count made a large ingest quadratic (a
 * million rows rewrote a growing index 50 times); growing with what was applied keeps the
 * snapshots' total work proportional to the ingest, and a restart replays at most that share of it.
 */

/** Snapshot after this many applied changes, or after {@link SNAPSHOT_GROWTH} of those applied since the load when that is more. */
export const SNAPSHOT_EVERY_CHANGES = 20_000;
/**
 * Three quarters: while an ingest runs, each snapshot holds four times the documents of the one
 * before. A 1,000,000-row import in batches of 1,000 then writes 3 snapshots holding 420,000
 * documents in all, the largest of 320,000 (two thirds: 4 holding 800,000; half: 6 holding 1.26
 * million), for a replay after a crash of at most three quarters of what was applied since the
 * load. A snapshot costs the shard threads ~16-22 us of CPU a document, and its capture and
 * encoded buffers sit beside the live index while it is written: at two thirds, a 200,000-row
 * file import (bench/file-import.ts) spent a fifth of the core process's CPU on 3 snapshots of
 * 260,000 documents and grew ~260 MiB more than at three quarters (2 of 100,000), which imported
 * it 8-12% faster. What it costs a restart: kill -9 of the core right after 200,000 chunks posted
 * over HTTP, then the first search answered 2.9 s after the restart (80,000 loaded, 120,000
 * replayed, ~50,000 changes/s) against 1.5 s at two thirds (180,000 loaded, 20,000 replayed).
 */
export const SNAPSHOT_GROWTH = 3 / 4;
/** ...or, for a trickle of writes (fewer than {@link SNAPSHOT_EVERY_CHANGES}), this long after the first unsnapshotted one. */
export const SNAPSHOT_EVERY_MS = 60_000;
/**
 * Whether a snapshot is due with `unsnapshotted` changes applied since the last one, the first of
 * them `msSinceFirst` ago, and `appliedSinceLoad` in all since the index loaded. The clock only
 * counts for a trickle: an ingest past SNAPSHOT_EVERY_CHANGES waits for its count, or a slow
 * import also rewrote the whole index every minute (a 1M-row import at 4,000 rows/s, at half
 * growth: snapshots of 561,000 and 802,000 documents in place of one of 640,000, 1.98 million in
 * all, not 1.26).
 *
 * `clock` false counts changes only: an inline dataset's (see DatasetIndex), whose capture runs
 * in one piece on the event loop that answers every request (SciFact's 5,183 chunks: 29-60 ms
 * here), for a trickle of writes once a minute; after a crash it replays at most
 * SNAPSHOT_EVERY_CHANGES changes (in slices), and a clean shutdown snapshots it anyway.
 */
export function snapshotDue(unsnapshotted: number, appliedSinceLoad: number, msSinceFirst: number, clock = true): boolean {
  const every = Math.max(SNAPSHOT_EVERY_CHANGES, Math.floor(appliedSinceLoad * SNAPSHOT_GROWTH));
  if (unsnapshotted >= every) return true;
  return clock && unsnapshotted < SNAPSHOT_EVERY_CHANGES && msSinceFirst >= SNAPSHOT_EVERY_MS;
}
