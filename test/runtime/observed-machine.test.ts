// The live actor tree follows runs through `observedMachine` (a wrapped `transition`) instead of
// XState's `inspect` option. These tests hold it to what `inspect` reported: the same root
// snapshots with the same causes, in the same order, and an actor that behaves, persists and
// restores exactly as one on the plain machine.
import { assign, createActor, fromPromise, setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { observedMachine } from '../../runtime/runs/observed-machine.ts';
import { eventually } from '../support/runtime.ts';

const machine = setup({
  types: {
    context: {} as { n: number; log: string[] },
    events: {} as { type: 'GO' } | { type: 'BUMP' } | { type: 'NOISE' },
  },
  actors: {
    work: fromPromise(async ({ input }: { input: { n: number } }) => input.n * 2),
  },
}).createMachine({
  id: 'probe',
  context: { n: 1, log: [] },
  initial: 'idle',
  states: {
    idle: {
      entry: assign({ log: ({ context }) => [...context.log, 'idle'] }),
      on: { GO: 'working', BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) }, NOISE: {} },
    },
    working: {
      invoke: {
        src: 'work',
        input: ({ context }) => ({ n: context.n }),
        onDone: { target: 'raised', actions: assign({ n: ({ event }) => event.output }) },
      },
    },
    raised: {
      entry: assign({ log: ({ context }) => [...context.log, 'raised'] }),
      always: [{ guard: ({ context }) => context.n > 100, target: 'done' }, { target: 'idle' }],
    },
    done: { type: 'final' },
  },
});

type Seen = Array<{ value: unknown; context: unknown; status: string; cause: string }>;

/** Root snapshots as XState's inspect option reports them, and as the observer does. */
function drive(events: Array<{ type: 'GO' } | { type: 'BUMP' } | { type: 'NOISE' }>) {
  const inspected: Seen = [];
  const observed: Seen = [];
  const plain = createActor(machine, {
    inspect: (e: InspectionEvent) => {
      if (e.type !== '@xstate.snapshot' || (e.actorRef as AnyActorRef).sessionId !== e.rootId) return;
      const s = e.snapshot as unknown as { value: unknown; context: unknown; status: string };
      inspected.push({ value: s.value, context: s.context, status: s.status, cause: e.event.type });
    },
  });
  const wrapped = observedMachine(machine, (s, e) =>
    observed.push({ value: s.value, context: s.context, status: s.status, cause: e.type }),
  );
  const actor = createActor(wrapped);
  const first = actor.getSnapshot();
  observed.push({ value: first.value, context: first.context, status: first.status, cause: 'xstate.init' });
  plain.start();
  actor.start();
  return { plain, actor, inspected, observed, events };
}

describe('observedMachine', () => {
  it('reports the root snapshots and causes XState inspect reports, in order, invoked effects included', async () => {
    const { plain, actor, inspected, observed } = drive([]);
    for (const a of [plain, actor]) a.send({ type: 'BUMP' });
    for (const a of [plain, actor]) a.send({ type: 'NOISE' });
    for (const a of [plain, actor]) a.send({ type: 'GO' });
    await eventually(
      () => plain.getSnapshot().value === 'idle' && actor.getSnapshot().value === 'idle',
      10_000,
      'both back to idle',
    );
    // n doubles on each GO (2 -> 4 -> ... -> 128): the sixth round ends both.
    while (plain.getSnapshot().status !== 'done') {
      for (const a of [plain, actor]) a.send({ type: 'GO' });
      await eventually(
        () => plain.getSnapshot().value !== 'working' && actor.getSnapshot().value !== 'working',
        10_000,
        'the work settled',
      );
    }
    await eventually(
      () => plain.getSnapshot().status === 'done' && actor.getSnapshot().status === 'done',
      10_000,
      'both done',
    );
    expect(observed.map((s) => s.cause)).toContain('xstate.done.actor.0.probe.working');
    expect(observed.at(-1)?.status).toBe('done');
    expect(observed).toEqual(inspected);
    expect(actor.getSnapshot().context).toEqual(plain.getSnapshot().context);
  });

  it('persists as the plain machine does, and a run restored from either goes on the same way', async () => {
    const { plain, actor } = drive([]);
    for (const a of [plain, actor]) a.send({ type: 'BUMP' });
    const persisted = actor.getPersistedSnapshot();
    expect(persisted).toEqual(plain.getPersistedSnapshot());
    plain.stop();
    actor.stop();

    const seen: string[] = [];
    const restored = createActor(
      observedMachine(machine, (s, e) => seen.push(`${String(s.value)}:${e.type}`)),
      {
        snapshot: persisted,
      },
    );
    const reference = createActor(machine, { snapshot: persisted });
    restored.start();
    reference.start();
    expect(restored.getSnapshot().context).toEqual({ n: 2, log: ['idle'] });
    for (const a of [restored, reference]) a.send({ type: 'GO' });
    await eventually(
      () => restored.getSnapshot().value === 'idle' && reference.getSnapshot().value === 'idle',
      10_000,
      'both back to idle',
    );
    expect(restored.getSnapshot().context).toEqual(reference.getSnapshot().context);
    expect(restored.getSnapshot().context).toEqual({ n: 4, log: ['idle', 'raised', 'idle'] });
    expect(seen).toEqual(['working:GO', 'idle:xstate.done.actor.0.probe.working']);
  });

  it('leaves the machine it wraps as it was', () => {
    const before = machine.transition;
    const wrapped = observedMachine(machine, () => {
      throw new Error('the plain machine must not call this');
    });
    expect(wrapped).not.toBe(machine);
    expect(machine.transition).toBe(before);
    const actor = createActor(machine).start();
    actor.send({ type: 'BUMP' });
    expect(actor.getSnapshot().context.n).toBe(2);
  });
});
