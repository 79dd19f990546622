/**
 * When a dataset is snapshotted: by the count of changes since the last snapshot (at least
 * SNAPSHOT_EVERY_CHANGES, growing with what was applied since the load), or by the clock for a
 * trickle of writes only, and never by the clock for an inline dataset. A simulated 1,000,000-row
 * import gets its count-triggered snapshots and no more, however long it runs.
 */
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_EVERY_CHANGES, SNAPSHOT_EVERY_MS, snapshotDue } from '../../core/router/snapshot-policy.js';

/** Snapshots (the documents each rewrites) while `rows` arrive in batches of `batch` at `perSecond`. */
function simulateImport(rows: number, batch: number, perSecond: number): number[] {
  const taken: number[] = [];
  let applied = 0;
  let unsnapshotted = 0;
  let firstAt = 0;
  for (let done = batch; done <= rows; done += batch) {
    const now = (done / perSecond) * 1000;
    if (unsnapshotted === 0) firstAt = now;
    applied += batch;
    unsnapshotted += batch;
    if (snapshotDue(unsnapshotted, applied, now - firstAt)) {
      taken.push(applied);
      unsnapshotted = 0;
    }
  }
  return taken;
}

describe('snapshot policy', () => {
  it('snapshots a large import by its count only: 3 snapshots of 420,000 documents for 1M rows, at any speed', () => {
    for (const perSecond of [1_000, 7_000, 50_000]) {
      const taken = simulateImport(1_000_000, 1_000, perSecond);
      expect(taken, `${perSecond} rows/s`).toEqual([20_000, 80_000, 320_000]);
      expect(taken.reduce((a, b) => a + b, 0)).toBe(420_000);
    }
    // A 200,000-row import: two, of 100,000 in all (two thirds: three, of 260,000).
    expect(simulateImport(200_000, 1_000, 10_000)).toEqual([20_000, 80_000]);
    // A 50,000-row import: one, of 20,000.
    expect(simulateImport(50_000, 1_000, 10_000)).toEqual([20_000]);
  });

  it('snapshots at SNAPSHOT_EVERY_CHANGES after a load, then at three quarters of what was applied since', () => {
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES - 1, SNAPSHOT_EVERY_CHANGES - 1, 0)).toBe(false);
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES, SNAPSHOT_EVERY_CHANGES, 0)).toBe(true);
    expect(snapshotDue(449_999, 600_000, 0)).toBe(false);
    expect(snapshotDue(450_000, 600_000, 0)).toBe(true);
  });

  it('snapshots a trickle of writes a minute after the first of them, and an ingest past the count floor only by its count', () => {
    expect(snapshotDue(1, 1_000_000, SNAPSHOT_EVERY_MS - 1)).toBe(false);
    expect(snapshotDue(1, 1_000_000, SNAPSHOT_EVERY_MS)).toBe(true);
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES - 1, 1_000_000, SNAPSHOT_EVERY_MS)).toBe(true);
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES, 1_000_000, 10 * SNAPSHOT_EVERY_MS)).toBe(false);
  });

  it('snapshots an inline dataset (no clock) by its count only, however long its trickle', () => {
    expect(snapshotDue(1, 1, 100 * SNAPSHOT_EVERY_MS, false)).toBe(false);
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES - 1, SNAPSHOT_EVERY_CHANGES - 1, 100 * SNAPSHOT_EVERY_MS, false)).toBe(false);
    expect(snapshotDue(SNAPSHOT_EVERY_CHANGES, SNAPSHOT_EVERY_CHANGES, 0, false)).toBe(true);
    expect(snapshotDue(450_000, 600_000, 0, false)).toBe(true);
  });
});
