import type { Actor, SnapshotFrom } from 'xstate';
import type { RunStatus } from '../../store/index.ts';
import type { provideRunMachine } from '../../actors/run/effects.ts';

/** The run machine as the runtime provides it (effects wired). */
export type RunMachine = ReturnType<typeof provideRunMachine>;
/** A live run: one actor of the run machine. */
export type RunActor = Actor<RunMachine>;
/** A state a run actor takes. */
export type RunSnapshot = SnapshotFrom<RunMachine>;

/** Maps a run snapshot to the run lifecycle status stored beside it. */
export function statusOf(snapshot: RunSnapshot): RunStatus {
  const v = snapshot.value;
  if (typeof v === 'string') {
    // A run waiting for more budget waits for a human as one waiting for an approval does.
    if (v === 'waiting_for_budget') return 'waiting_for_approval';
    if (
      v === 'waiting_for_approval' ||
      v === 'resuming' ||
      v === 'completed' ||
      v === 'failed' ||
      v === 'denied'
    )
      return v;
  }
  return 'running';
}

const TERMINAL: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'denied']);

/** Whether a stored status is an end: such a run is never restored. */
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL.has(status);
}
