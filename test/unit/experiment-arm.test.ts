/**
 * The arm a user is first given (assignArm): over 100,000 user ids, sequential (`user-${i}`, which
 * differ in their last characters only) and random UUIDs, the treatment's share is within 1% of
 * its split for several splits (0 and 1 exactly); the answer is deterministic, monotone in the
 * split (raising it only moves users into the treatment), and independent between experiments.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AB_BUCKETS, assignArm } from '../../core/domain/experiments.js';

const N = 100_000;
const SEQUENTIAL = Array.from({ length: N }, (_, i) => `user-${i}`);
const RANDOM = Array.from({ length: N }, () => randomUUID());
const SPLITS = [0.5, 0.1, 0.9, 0, 1];

/** An experiment with `t1Split`; the id fixed unless given, so that runs are repeatable. */
const experiment = (t1Split: number, id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b') => ({ id, t1Name: 'treatment', controlName: 'control', t1Split });

/** Fraction of `users` given the treatment. */
const t1Share = (e: ReturnType<typeof experiment>, users: readonly string[]): number =>
  users.reduce((n, u) => n + (assignArm(e, u) === 'treatment' ? 1 : 0), 0) / users.length;

describe('assignArm', () => {
  // The exact splits 0 and 1 once: a random id set adds nothing to them.
  for (const [label, users, splits] of [
    ['sequential ids', SEQUENTIAL, SPLITS],
    ['random UUIDs', RANDOM, SPLITS.filter((s) => s !== 0 && s !== 1)],
  ] as const) {
    it(`gives the treatment to its split's share of ${N} ${label}, within 1%`, () => {
      for (const split of splits) {
        const share = t1Share(experiment(split), users);
        if (split === 0 || split === 1) expect(share, `split ${split}`).toBe(split);
        else expect(Math.abs(share - split), `split ${split}: share ${share}`).toBeLessThan(0.01);
      }
    });
  }

  it('is deterministic: the same experiment and user give the same arm', () => {
    const e = experiment(0.5);
    const first = SEQUENTIAL.slice(0, 5000).map((u) => assignArm(e, u));
    expect(SEQUENTIAL.slice(0, 5000).map((u) => assignArm({ ...e }, u))).toEqual(first);
    // Both arms occur, so equality above is not that of a constant.
    expect(new Set(first)).toEqual(new Set(['treatment', 'control']));
  });

  it('is monotone in the split: a user in the treatment stays there when the split grows', () => {
    const users = RANDOM.slice(0, 5000);
    let previous = users.map(() => false);
    for (const split of [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1]) {
      const now = users.map((u) => assignArm(experiment(split), u) === 'treatment');
      now.forEach((inT1, i) => {
        if (previous[i]) expect(inT1, `user ${users[i]} at split ${split}`).toBe(true);
      });
      previous = now;
    }
  });

  it('resolves splits to 1/AB_BUCKETS: a split below half a bucket gives nobody the treatment', () => {
    expect(t1Share(experiment(0.4 / AB_BUCKETS), SEQUENTIAL)).toBe(0);
    expect(t1Share(experiment(1 - 0.4 / AB_BUCKETS), SEQUENTIAL)).toBe(1);
  });

  it('draws independently per experiment: being in one treatment says nothing of another', () => {
    const a = experiment(0.5, randomUUID());
    const b = experiment(0.5, randomUUID());
    let both = 0;
    for (const u of SEQUENTIAL) if (assignArm(a, u) === 'treatment' && assignArm(b, u) === 'treatment') both++;
    expect(Math.abs(both / N - 0.25)).toBeLessThan(0.01);
  });
});
