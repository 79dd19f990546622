/**
 * The attacking client of the isolation benches, in a process of its own (started by
 * `attacker-process.ts`): runs loops of attacks from `attacks.ts` when asked and reports each
 * outcome over IPC. Not meant to be run by hand.
 */
import { ATTACKS, prepareAttackBodies, type Attack, type AttackTarget } from './attacks.js';

/** A request from the parent: run `loops` loops over `attacks` (loop `l` starts at `offsets[l]`) for `ms`. */
interface RunMessage {
  readonly type: 'run';
  readonly target: AttackTarget;
  readonly attacks: readonly string[];
  readonly loops: number;
  readonly offsets?: readonly number[];
  readonly ms: number;
}

const send = (m: unknown): void => {
  process.send?.(m);
};

prepareAttackBodies();
send({ type: 'ready' });

process.on('message', (m: RunMessage | { type: 'close' }) => {
  if (m.type === 'close') {
    process.disconnect();
    return;
  }
  const list = m.attacks.map((name): Attack => {
    const attack = ATTACKS.find((a) => a.name === name);
    if (!attack) throw new Error(`no attack named ${name}`);
    return attack;
  });
  const until = Date.now() + m.ms;
  void Promise.all(
    Array.from({ length: m.loops }, async (_, l) => {
      for (let i = m.offsets?.[l] ?? 0; Date.now() < until; i++) {
        const attack = list[i % list.length]!;
        const outcome = await attack.run(m.target);
        send({ type: 'outcome', name: attack.name, outcome: { ...outcome, text: outcome.text.slice(0, 2000) } });
      }
    }),
  ).then(() => send({ type: 'done' }));
});
