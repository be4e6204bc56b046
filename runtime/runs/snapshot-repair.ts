import type { Snapshot } from 'xstate';
import type { SettledEffect } from '../../actors/run/effects.ts';

/**
 * The edits the run host makes to XState's persisted run snapshots, in one place: each one keeps
 * a restored run from waiting for a completion that never comes.
 */

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The persisted children of a persisted actor snapshot (none when it has no such field). */
function childrenOf(persisted: object): Record<string, unknown> {
  const children = 'children' in persisted ? persisted.children : undefined;
  return isRecord(children) ? children : {};
}

/**
 * A persisted run snapshot with its active child invoked from `settled.src` as XState persists a
 * promise effect that has returned `settled.output` (status, output; no input). The run's state
 * does not move when that child ends (nothing waits on it), so this is the row its next write
 * would be, and the store skips a write whose row is the same.
 */
export function withSettled(persisted: unknown, settled: SettledEffect): unknown {
  if (!isRecord(persisted)) return persisted;
  const children = { ...childrenOf(persisted) };
  let found = false;
  for (const [key, child] of Object.entries(children)) {
    if (!isRecord(child) || child['src'] !== settled.src) continue;
    const snapshot = child['snapshot'];
    if (!isRecord(snapshot) || snapshot['status'] !== 'active') continue;
    children[key] = {
      ...child,
      snapshot: { status: 'done', output: settled.output, error: undefined, input: undefined },
    };
    found = true;
  }
  // No such effect (not expected): the state as it is now, written again when the run moves.
  return found ? { ...persisted, children } : persisted;
}

/**
 * The completions a restored run still has to hear: an invoked effect stored as already done (or
 * failed) while the run still sat in the state that invoked it. XState does not restart a settled
 * effect nor send its completion again, so such a run would wait for it until its deadline. Rows
 * written by this version never hold one the run waits on (see `capture` in `write-behind.ts`);
 * older rows might, and the run goes on from the stored result, as the process that wrote it
 * would have. A state that does not wait on its effect (a parked run's approval request) ignores
 * the event.
 */
export function settledEffectEvents(
  persisted: object,
): Array<{ type: string; actorId: string; output?: unknown; error?: unknown }> {
  const out: Array<{ type: string; actorId: string; output?: unknown; error?: unknown }> = [];
  for (const [id, child] of Object.entries(childrenOf(persisted))) {
    const s = isRecord(child) ? child['snapshot'] : undefined;
    if (!isRecord(s)) continue;
    if (s['status'] === 'done')
      out.push({ type: `xstate.done.actor.${id}`, output: s['output'], actorId: id });
    else if (s['status'] === 'error')
      out.push({ type: `xstate.error.actor.${id}`, error: s['error'], actorId: id });
  }
  return out;
}

/**
 * A stored run snapshot without its invoked children: a run restored after its wall-time
 * deadline passed (while no process ran it) ends at once, and its in-flight effect is not started
 * again before that.
 */
export function withoutChildren(persisted: Snapshot<unknown>): Snapshot<unknown> {
  const repaired = { ...persisted, children: {} };
  return repaired;
}
