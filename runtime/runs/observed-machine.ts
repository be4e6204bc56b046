import type { AnyStateMachine, EventFrom, SnapshotFrom } from 'xstate';

/**
 * `machine` with every root transition reported to `observe`: the state it reached and the event
 * that made it, synchronously, before the actor takes that state (its actions then run, its
 * observers are told). An actor created from the result behaves as one created from `machine`:
 * XState binds a machine's methods to it, so only `transition` is wrapped and every other method
 * (first state, persisting, restoring) is the machine's own.
 *
 * This is what the live actor tree needs of a run (its root snapshots and their causes) at a
 * fraction of XState's `inspect` option, which builds an event object for every event, effect,
 * microstep and action of the actor and of every child it invokes (bench/README.md, session 9).
 */
export function observedMachine<M extends AnyStateMachine>(
  machine: M,
  observe: (snapshot: SnapshotFrom<M>, event: EventFrom<M>) => void,
): M {
  const transition = machine.transition;
  const observed = Object.create(machine) as M;
  Object.defineProperty(observed, 'transition', {
    value: (snapshot: SnapshotFrom<M>, event: EventFrom<M>, scope: unknown) => {
      const next = (transition as (s: unknown, e: unknown, a: unknown) => SnapshotFrom<M>)(
        snapshot,
        event,
        scope,
      );
      observe(next, event);
      return next;
    },
  });
  return observed;
}
